#!/usr/bin/python3
"""Which pairs one scorer's scores moved between two pairs-eval runs on the
same pairs (before and after a change to a verifier), per data file and label,
and how many crossed the verdict threshold.

Usage: scripts/compare_scores.py BEFORE.jsonl AFTER.jsonl [SCORER] [THRESHOLD]
  BEFORE, AFTER  pairs-eval --scores-out of the two runs
  SCORER         the scorer to compare (default "default")
  THRESHOLD      the verdict threshold (default 0.49, the default verifier's)
Prints one JSON object: per data file and label, the pair count, how many
scores changed (by more than 1e-6), how many rose, the mean change over the
changed pairs, and how many crossed the threshold upwards (now accepted) and
downwards (now rejected); "all" sums over the files.
"""
import json
import sys
from collections import defaultdict

CHANGED = 1e-6


def read_scores(path, scorer):
    scores = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
                if row["scorer"] != scorer:
                    continue
                key = (row["file"], int(row["line"]))
                if key in scores:
                    sys.exit(f"{path}:{n}: a second score of {scorer!r} for {row['file']} line {row['line']}")
                scores[key] = (int(row["label"]), float(row["score"]))
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{path}:{n}: not a pairs-eval score row ({e})")
    if not scores:
        sys.exit(f"{path}: no scores of {scorer!r}")
    return scores


def compare(before, after, threshold):
    if before.keys() != after.keys():
        missing = sorted(before.keys() ^ after.keys())[0]
        sys.exit(f"the two runs score different pairs (e.g. {missing[0]} line {missing[1]})")
    groups = defaultdict(lambda: {"pairs": 0, "changed": 0, "raised": 0, "mean_change": 0.0,
                                  "now_accepted": 0, "now_rejected": 0})
    for key, (label, old) in sorted(before.items()):
        new_label, new = after[key]
        if new_label != label:
            sys.exit(f"{key[0]} line {key[1]}: label {label} before, {new_label} after")
        for group in (groups[f"{key[0]} label {label}"], groups[f"all label {label}"]):
            group["pairs"] += 1
            if abs(new - old) > CHANGED:
                group["changed"] += 1
                group["raised"] += new > old
                group["mean_change"] += new - old
                group["now_accepted"] += old < threshold <= new
                group["now_rejected"] += new < threshold <= old
    for group in groups.values():
        group["mean_change"] = round(group["mean_change"] / group["changed"], 4) if group["changed"] else None
    return dict(sorted(groups.items()))


def main(argv):
    if len(argv) < 3 or len(argv) > 5:
        sys.exit(__doc__)
    scorer = argv[3] if len(argv) > 3 else "default"
    try:
        threshold = float(argv[4]) if len(argv) > 4 else 0.49
    except ValueError:
        sys.exit(f"THRESHOLD {argv[4]!r} is not a number")
    before, after = read_scores(argv[1], scorer), read_scores(argv[2], scorer)
    print(json.dumps({"scorer": scorer, "threshold": threshold, "groups": compare(before, after, threshold)},
                     indent=1))


if __name__ == "__main__":
    main(sys.argv)
