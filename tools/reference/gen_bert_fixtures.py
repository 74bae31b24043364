#!/usr/bin/python3
"""Builds a tiny random BERT from PyTorch's own modules and writes parity fixtures.

Run with Debian's python (the one that has torch):
    /usr/bin/python3 tools/reference/gen_bert_fixtures.py

The network is assembled from torch.nn.Embedding, torch.nn.LayerNorm and
torch.nn.TransformerEncoderLayer(activation="gelu", norm_first=False,
batch_first=True), which is exactly BERT's post-LayerNorm encoder layer, so the
reference does not share code with verity's libtorch BertModel. Weights are
saved under Hugging Face BertModel names in a hand-written safetensors file.

Outputs (all small):
  tests/fixtures/bert/tiny/{config.json, model.safetensors, vocab.txt,
                            1_Pooling/config.json}
  tests/fixtures/bert/reference.json  last-layer token outputs and mean/CLS
                                      pooled outputs per input (ids and text)
"""
import json
import math
import os
import re
import struct

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "tests", "fixtures", "bert")
HIDDEN, LAYERS, HEADS, INTERMEDIATE, MAX_POS, TYPES, EPS = 32, 2, 4, 64, 64, 2, 1e-12

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list(".,!?'-") + (
    "the a an of to and in is was it that for on with as by at cat dog sat mat "
    "rug kitten slept rested carpet table room desk study drawing quick brown "
    "fox jumps over lazy vitamin does not reduce risk fracture protein cell "
    "left right upper lower circle square token play run walk talk"
).split() + ["##s", "##ed", "##ing", "##er", "##ly", "##ize", "##ation"]


def basic_wordpiece(text):
    """Minimal BERT tokenizer for the ASCII fixture texts: lowercase, split on
    whitespace and punctuation, greedy longest-match WordPiece."""
    ids = {t: i for i, t in enumerate(VOCAB)}
    out = [ids["[CLS]"]]
    for word in re.findall(r"[a-z0-9]+|[^\sa-z0-9]", text.lower()):
        start, pieces = 0, []
        while start < len(word):
            end = len(word)
            while end > start:
                piece = ("##" if start else "") + word[start:end]
                if piece in ids:
                    break
                end -= 1
            if end == start:
                pieces = [ids["[UNK]"]]
                break
            pieces.append(ids[piece])
            start = end
        out += pieces
    return out + [ids["[SEP]"]]


class TinyBert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.word = torch.nn.Embedding(len(VOCAB), HIDDEN)
        self.position = torch.nn.Embedding(MAX_POS, HIDDEN)
        self.token_type = torch.nn.Embedding(TYPES, HIDDEN)
        self.norm = torch.nn.LayerNorm(HIDDEN, eps=EPS)
        self.layers = torch.nn.ModuleList([
            torch.nn.TransformerEncoderLayer(HIDDEN, HEADS, INTERMEDIATE, dropout=0.0,
                                             activation="gelu", layer_norm_eps=EPS,
                                             batch_first=True, norm_first=False)
            for _ in range(LAYERS)])

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.norm(self.word(ids) + self.position(positions) +
                      self.token_type(torch.zeros_like(ids)))
        for layer in self.layers:
            x = layer(x)
        return x


def randomize(model, gen):
    # Larger-than-default spreads so every part of the network matters.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or ".norm" in name or name.startswith("norm"):
                p.copy_(torch.randn(p.shape, generator=gen) * 0.2 + (1.0 if "weight" in name else 0.0))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * (1.0 / math.sqrt(p.shape[-1])))


def hf_tensors(model):
    t = {
        "embeddings.word_embeddings.weight": model.word.weight,
        "embeddings.position_embeddings.weight": model.position.weight,
        "embeddings.token_type_embeddings.weight": model.token_type.weight,
        "embeddings.LayerNorm.weight": model.norm.weight,
        "embeddings.LayerNorm.bias": model.norm.bias,
    }
    for i, layer in enumerate(model.layers):
        p = f"encoder.layer.{i}."
        q, k, v = layer.self_attn.in_proj_weight.chunk(3)
        qb, kb, vb = layer.self_attn.in_proj_bias.chunk(3)
        t.update({
            p + "attention.self.query.weight": q, p + "attention.self.query.bias": qb,
            p + "attention.self.key.weight": k, p + "attention.self.key.bias": kb,
            p + "attention.self.value.weight": v, p + "attention.self.value.bias": vb,
            p + "attention.output.dense.weight": layer.self_attn.out_proj.weight,
            p + "attention.output.dense.bias": layer.self_attn.out_proj.bias,
            p + "attention.output.LayerNorm.weight": layer.norm1.weight,
            p + "attention.output.LayerNorm.bias": layer.norm1.bias,
            p + "intermediate.dense.weight": layer.linear1.weight,
            p + "intermediate.dense.bias": layer.linear1.bias,
            p + "output.dense.weight": layer.linear2.weight,
            p + "output.dense.bias": layer.linear2.bias,
            p + "output.LayerNorm.weight": layer.norm2.weight,
            p + "output.LayerNorm.bias": layer.norm2.bias,
        })
    # Real BertModel checkpoints carry a pooler; verity ignores it.
    t["pooler.dense.weight"] = torch.eye(HIDDEN)
    t["pooler.dense.bias"] = torch.zeros(HIDDEN)
    return {k: v.detach().contiguous().float() for k, v in t.items()}


def write_safetensors(path, tensors):
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name in sorted(tensors):
        data = tensors[name].numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    gen = torch.Generator().manual_seed(1234)
    torch.manual_seed(1234)
    model = TinyBert().eval()
    randomize(model, gen)

    tiny = os.path.join(OUT, "tiny")
    os.makedirs(os.path.join(tiny, "1_Pooling"), exist_ok=True)
    write_safetensors(os.path.join(tiny, "model.safetensors"), hf_tensors(model))
    with open(os.path.join(tiny, "vocab.txt"), "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    with open(os.path.join(tiny, "config.json"), "w") as f:
        json.dump({"architectures": ["BertModel"], "model_type": "bert", "vocab_size": len(VOCAB),
                   "hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
                   "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE,
                   "hidden_act": "gelu", "max_position_embeddings": MAX_POS,
                   "type_vocab_size": TYPES, "layer_norm_eps": EPS,
                   "position_embedding_type": "absolute"}, f, indent=2)
    with open(os.path.join(tiny, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": HIDDEN, "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False}, f, indent=2)

    texts = ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog!",
             "Vitamin D does not reduce fracture risk.", "kittens slept",
             "the upper-left circle is left of the square, talking and walking", "zzz"]
    cases = []
    with torch.no_grad():
        for text in texts:
            ids = basic_wordpiece(text)
            out = model(torch.tensor([ids]))[0]
            cases.append({"text": text, "ids": ids,
                          "tokens": out.flatten().tolist(),
                          "mean": out.mean(0).tolist(), "cls": out[0].tolist()})
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump({"generator": "tools/reference/gen_bert_fixtures.py",
                   "torch": torch.__version__, "hidden": HIDDEN, "cases": cases}, f)
    print("wrote", len(cases), "cases to", OUT)


if __name__ == "__main__":
    main()
