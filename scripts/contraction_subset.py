#!/usr/bin/python3
"""Scores of a pairs-eval run on the pairs whose two texts differ in how many
contracted negations ("isn't", "can't", "don't", straight or curly
apostrophe) they hold, beside the pairs where both hold the same number (at
least one). The subset is chosen from the texts alone, never from scores.

Usage: scripts/contraction_subset.py REPORT.json SCORES.jsonl
  REPORT.json  pairs-eval --json output (its data paths and thresholds)
  SCORES.jsonl pairs-eval --scores-out of the same run
Prints one JSON object: per subset, its pair count, positives, sources, and
per scorer ROC AUC, and at the scorer's calibrated threshold (if it has one)
accuracy and the different-meaning pairs it accepts.
"""
import collections
import json
import re
import sys

CONTRACTED_NEGATION = re.compile(r"\w(?:n['\u2019]t)\b", re.IGNORECASE)


def roc_auc(scored):
    pos = sorted(s for s, label in scored if label == 1)
    neg = sorted(s for s, label in scored if label == 0)
    if not pos or not neg:
        return None
    # Mann-Whitney U over the merged order, ties counted half.
    wins, j, k = 0.0, 0, 0
    for p in pos:
        while j < len(neg) and neg[j] < p:
            j += 1
        k = j
        while k < len(neg) and neg[k] == p:
            k += 1
        wins += j + 0.5 * (k - j)
    return wins / (len(pos) * len(neg))


def main(report_path, scores_path):
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    texts = {}
    for entry in report["data"]:
        with open(entry["path"], encoding="utf-8") as f:
            texts[entry["name"]] = f.read().split("\n")  # score rows name physical lines
    thresholds = {name: s.get("threshold") for name, s in report["scorers"].items()}
    scored = collections.defaultdict(dict)
    with open(scores_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
                scored[(row["file"], row["line"])][row["scorer"]] = (row["score"], row["label"])
            except (ValueError, KeyError) as e:
                sys.exit(f"{scores_path}:{n}: not a pairs-eval score row ({e})")
    subsets = collections.defaultdict(list)
    for (name, line), by_scorer in scored.items():
        pair = json.loads(texts[name][line - 1])
        a, b = (len(CONTRACTED_NEGATION.findall(pair[k])) for k in ("a", "b"))
        if a != b:
            subsets["contractions_differ"].append((name, by_scorer))
        elif a > 0:
            subsets["contractions_on_both_sides"].append((name, by_scorer))
    out = {}
    for subset, rows in sorted(subsets.items()):
        entry = {
            "pairs": len(rows),
            "positives": sum(next(iter(r.values()))[1] for _, r in rows),
            "sources": dict(collections.Counter(name for name, _ in rows)),
            "scorers": {},
        }
        for scorer, threshold in thresholds.items():
            pairs = [r[scorer] for _, r in rows if scorer in r]
            result = {"auc": roc_auc(pairs)}
            if threshold is not None:
                result["threshold"] = threshold
                result["accuracy"] = sum((s >= threshold) == (label == 1) for s, label in pairs) / len(pairs)
                negatives = [s for s, label in pairs if label == 0]
                result["different_accepted"] = sum(s >= threshold for s in negatives)
                result["different"] = len(negatives)
            entry["scorers"][scorer] = result
        out[subset] = entry
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
