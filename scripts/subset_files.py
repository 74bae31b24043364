"""Writes the pair subsets the *_subset.py scripts choose: one JSONL file per
subset under a directory, each written to a temporary name and renamed, then
their pair counts as one JSON object on stdout."""
import json
import os


def write_subsets(out_dir, subsets):
    os.makedirs(out_dir, exist_ok=True)
    for subset, pairs in subsets.items():
        path = os.path.join(out_dir, subset + ".jsonl")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            for pair in pairs:
                f.write(json.dumps(pair, ensure_ascii=False) + "\n")
        os.replace(path + ".tmp", path)
    print(json.dumps({subset: len(pairs) for subset, pairs in subsets.items()}))
