#!/usr/bin/python3
"""AUC of each scorer of a pairs-eval run within buckets of the pairs' word
overlap, to see where one scorer ranks better than another. Buckets are chosen
from the texts alone (Jaccard overlap of lower-cased word sets, the longer
text's word count, whether the digits differ), never from scores.

Usage: scripts/overlap_buckets.py REPORT.json SCORES.jsonl [EXTREMES]
  REPORT.json  pairs-eval --json output (its data paths)
  SCORES.jsonl pairs-eval --scores-out of the same run
  EXTREMES     also list, per file, this many same-meaning pairs that the
               first scorer ranks furthest below the second, and as many
               different-meaning pairs it ranks furthest above (default 0)
Prints one JSON object: per data file, per bucket, the pair count, the share
of same-meaning pairs and each scorer's AUC (null where a bucket holds one
class only or fewer than 30 pairs).
"""
import json
import re
import sys
from collections import defaultdict

WORD = re.compile(r"[a-z0-9']+")
DIGITS = re.compile(r"\d+")
JACCARD_EDGES = [0.0, 0.2, 0.35, 0.5, 0.65, 0.8, 1.01]
LENGTH_EDGES = [0, 8, 12, 16, 24, 40, 10**9]
MIN_BUCKET = 30


def roc_auc(labels, scores):
    """Mann-Whitney AUC with ties counted half."""
    pairs = sorted(zip(scores, labels))
    positives = sum(labels)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return None
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        mid_rank = (i + j + 1) / 2
        rank_sum += mid_rank * sum(label for _, label in pairs[i:j])
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def words(text):
    return WORD.findall(text.lower())


def bucket_label(value, edges):
    for lo, hi in zip(edges[:-1], edges[1:]):
        if lo <= value < hi:
            return f"{lo}-{hi}" if hi < 10**9 else f">={lo}"
    raise ValueError(value)


def summarize(rows, scorers):
    labels = [row["label"] for row in rows]
    out = {"pairs": len(rows), "same_share": round(sum(labels) / len(rows), 3) if rows else None}
    for scorer in scorers:
        auc = roc_auc(labels, [row["scores"][scorer] for row in rows]) if len(rows) >= MIN_BUCKET else None
        out[scorer] = None if auc is None else round(auc, 3)
    return out


def rank_share(rows, scorer):
    """Each row's rank under a scorer as a share of the rows (0 lowest)."""
    order = sorted(range(len(rows)), key=lambda i: rows[i]["scores"][scorer])
    shares = [0.0] * len(rows)
    for rank, i in enumerate(order):
        shares[i] = rank / max(1, len(rows) - 1)
    return shares


def extremes(rows, scorers, count):
    first, second = rank_share(rows, scorers[0]), rank_share(rows, scorers[1])
    gaps = [(second[i] - first[i], i) for i in range(len(rows))]
    def listed(selected):
        return [{"line": rows[i]["line"], "rank_gap": round(gap, 3), "a": rows[i]["a"], "b": rows[i]["b"],
                 **{s: round(rows[i]["scores"][s], 3) for s in scorers}} for gap, i in selected]
    same = sorted((g for g in gaps if rows[g[1]]["label"] == 1), reverse=True)[:count]
    different = sorted(g for g in gaps if rows[g[1]]["label"] == 0)[:count]
    return {"same_ranked_below": listed(same), "different_ranked_above": listed(different)}


def report_lines(report_path):
    """The lines of every data file of a pairs-eval report, by the file's name in the score rows."""
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    lines = {}
    for entry in report["data"]:
        with open(entry["path"], encoding="utf-8") as f:
            lines[entry["name"]] = f.read().split("\n")  # score rows name physical lines
    return lines


def main(report_path, scores_path, extreme_count=0):
    lines = report_lines(report_path)
    by_pair = defaultdict(lambda: {"scores": {}})
    scorers = []
    with open(scores_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
                pair = by_pair[(row["file"], row["line"])]
                pair["label"] = int(row["label"])
                pair["scores"][row["scorer"]] = float(row["score"])
                if row["scorer"] not in scorers:
                    scorers.append(row["scorer"])
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{scores_path}:{n}: not a pairs-eval score row ({e})")
    files = defaultdict(list)
    for (name, line), pair in sorted(by_pair.items()):
        if name not in lines:
            sys.exit(f"{scores_path}: file {name!r} is not in {report_path}")
        if set(pair["scores"]) != set(scorers):
            sys.exit(f"{scores_path}: {name} line {line} lacks a score of every scorer")
        text = json.loads(lines[name][line - 1])
        a, b = words(text["a"]), words(text["b"])
        union = set(a) | set(b)
        pair["jaccard"] = len(set(a) & set(b)) / len(union) if union else 1.0
        pair["length"] = max(len(a), len(b))
        pair["line"], pair["a"], pair["b"] = line, text["a"], text["b"]
        pair["digits_differ"] = sorted(DIGITS.findall(text["a"])) != sorted(DIGITS.findall(text["b"]))
        files[name].append(pair)
    result = {"scorers": scorers, "files": {}}
    for name, rows in files.items():
        groups = {"all": summarize(rows, scorers), "jaccard": {}, "longer_words": {}, "digits_differ": {}}
        for key, edges, field in (("jaccard", JACCARD_EDGES, "jaccard"),
                                  ("longer_words", LENGTH_EDGES, "length")):
            buckets = defaultdict(list)
            for row in rows:
                buckets[bucket_label(row[field], edges)].append(row)
            for lo, hi in zip(edges[:-1], edges[1:]):
                label = bucket_label(lo, edges)
                if label in buckets:
                    groups[key][label] = summarize(buckets[label], scorers)
        for flag in (True, False):
            groups["digits_differ"][str(flag).lower()] = summarize(
                [row for row in rows if row["digits_differ"] == flag], scorers)
        if extreme_count > 0 and len(scorers) >= 2:
            groups["extremes"] = extremes(rows, scorers, extreme_count)
        result["files"][name] = groups
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and not sys.argv[3].isdigit()):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 0)
