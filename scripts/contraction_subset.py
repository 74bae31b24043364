#!/usr/bin/python3
"""Selects, from the pairs a pairs-eval run scored, those whose two texts
differ in how many contracted negations ("isn't", "can't", "don't", straight
or curly apostrophe) they hold, and those where both hold as many (at least
one). The subsets are chosen from the texts alone, never from scores; score
them with pairs-eval, which reports their AUC and verdict accuracy.

Usage: scripts/contraction_subset.py REPORT.json SCORES.jsonl OUT_DIR
  REPORT.json  pairs-eval --json output (its data paths)
  SCORES.jsonl pairs-eval --scores-out of the same run (which pairs it scored:
               --max-pairs samples some files)
Writes OUT_DIR/differ.jsonl, OUT_DIR/differ-different.jsonl (its
different-meaning pairs alone: 1 - accuracy there is the share accepted) and
OUT_DIR/both.jsonl; prints their pair counts as one JSON object.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overlap_buckets import report_lines  # noqa: E402
from subset_files import write_subsets  # noqa: E402

CONTRACTED_NEGATION = re.compile(r"\w(?:n['\u2019]t)\b", re.IGNORECASE)


def main(report_path, scores_path, out_dir):
    lines = report_lines(report_path)
    scored = set()
    with open(scores_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
                scored.add((row["file"], row["line"]))
            except (ValueError, KeyError) as e:
                sys.exit(f"{scores_path}:{n}: not a pairs-eval score row ({e})")
    subsets = {"differ": [], "differ-different": [], "both": []}
    for name, line in sorted(scored):
        pair = json.loads(lines[name][line - 1])
        a, b = (len(CONTRACTED_NEGATION.findall(pair[k])) for k in ("a", "b"))
        if a != b:
            subsets["differ"].append(pair)
            if pair["label"] == 0:
                subsets["differ-different"].append(pair)
        elif a > 0:
            subsets["both"].append(pair)
    write_subsets(out_dir, subsets)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
