#!/usr/bin/env python3
"""Probe: does a calibration that also sees what kind of pair it reads hold each set's verdicts
closer to that set's best threshold?

One threshold serves every pair set, and sets whose best thresholds lie apart miss it (docs/RESULTS.md,
"Verdicts and the threshold"). This refits the verdict by logistic regression on the scorer's logit
plus side inputs a verifier could compute from the two texts alone (pooled cosine, length, length
difference, word overlap), fitted over all sets at once (no set name, as at inference; each set
weighted equally), and reports per set the accuracy at P >= 0.5 against the set's best single
threshold. Two protocols: 5-fold cross-validation over the pooled pairs, and one set held out at a
time (fitted on the others, scored on it). The scorer's own verdicts at --threshold are the baseline.

Input: a `verity pairs-eval --scores-out` file holding the scorer and `cosine` for every pair, and
the pair files it names (FILE is read as PAIRS_DIR/FILE.jsonl).

Usage: conditional_calibration_probe.py SCORES.jsonl [--pairs-dir data/pairs] [--scorer default]
       [--threshold 0.49] [--seed 1]
Prints one JSON object.
"""
import argparse
import collections
import json
import math
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overlap_buckets import words  # noqa: E402

SIDE_INPUTS = {
    "logit": [0],
    "logit+cosine": [0, 1],
    "logit+length+overlap": [0, 2, 3, 4],
    "all": [0, 1, 2, 3, 4],
}


def fail(message):
    sys.exit(f"conditional_calibration_probe: {message}")


def read_scores(path, scorer):
    rows = collections.defaultdict(dict)
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            try:
                r = json.loads(line)
                key, name = (r["file"], int(r["line"])), r["scorer"]
                rows[key][name] = float(r["score"])
                rows[key]["label"] = int(r["label"])
            except (ValueError, KeyError, TypeError) as e:
                fail(f"{path}:{number}: not a --scores-out line ({e})")
    for key, r in rows.items():
        for name in (scorer, "cosine"):
            if name not in r:
                fail(f"{path}: {key[0]} line {key[1]} has no score of '{name}' (run pairs-eval with --verifier {name})")
    return rows


def read_texts(rows, pairs_dir):
    texts = {}
    for name in sorted({k[0] for k in rows}):
        path = f"{pairs_dir}/{name}.jsonl"
        try:
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if (name, number) in rows:
                        try:
                            r = json.loads(line)
                            texts[(name, number)] = (r["a"], r["b"])
                        except (ValueError, KeyError, TypeError) as e:
                            fail(f"{path}:{number}: not a pair line ({e})")
        except OSError as e:
            fail(f"{path}: {e.strerror}")
    missing = [k for k in rows if k not in texts]
    if missing:
        fail(f"{pairs_dir}/{missing[0][0]}.jsonl has no line {missing[0][1]}")
    return texts


def features(score, cosine, a, b):
    p = min(max(score, 1e-6), 1 - 1e-6)
    wa, wb = words(a), words(b)
    sa, sb = set(wa), set(wb)
    return [math.log(p / (1 - p)), cosine, math.log1p(len(wa) + len(wb)),
            abs(len(wa) - len(wb)) / max(1, len(wa) + len(wb)), len(sa & sb) / max(1, len(sa | sb))]


def fit(x, y, w, l2=1e-3):
    """Weighted logistic regression by Newton's method; the last coefficient is the bias."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    beta = np.zeros(xb.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-xb @ beta))
        grad = xb.T @ (w * (p - y)) + l2 * beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + l2 * np.eye(len(beta))
        beta -= np.linalg.solve(hess, grad)
    return beta


def predict(beta, x):
    return 1 / (1 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ beta)))


def best_accuracy(p, y):
    """The accuracy of the best single threshold (accept p >= t), rejecting everything included."""
    order = np.argsort(-p, kind="stable")
    ys, ps = y[order], p[order]
    correct = (1 - ys).sum() + np.cumsum(2 * ys - 1)  # accept the first k+1
    # only cut between distinct scores
    cuts = np.append(ps[1:] != ps[:-1], True)
    return max(float((1 - ys).sum()), float(correct[cuts].max())) / len(y)


def equal_set_weights(sets):
    counts = collections.Counter(sets)
    return np.array([len(sets) / (len(counts) * counts[s]) for s in sets])


def report(p, y, sets, names, threshold):
    per_set = {}
    for n in names:
        m = sets == n
        accuracy = float(((p[m] >= threshold) == (y[m] == 1)).mean())
        best = best_accuracy(p[m], y[m])
        per_set[n] = {"pairs": int(m.sum()), "accuracy": round(accuracy, 4), "best_accuracy": round(best, 4),
                      "gap": round(best - accuracy, 4)}
    gaps = [v["gap"] for v in per_set.values()]
    return {"within_0.03": sum(g <= 0.03 + 1e-9 for g in gaps), "sets": len(gaps), "worst_gap": max(gaps),
            "mean_accuracy": round(float(np.mean([v["accuracy"] for v in per_set.values()])), 4),
            "by_set": per_set}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scores")
    ap.add_argument("--pairs-dir", default="data/pairs")
    ap.add_argument("--scorer", default="default")
    ap.add_argument("--threshold", type=float, default=0.49, help="the scorer's own verdict threshold")
    ap.add_argument("--seed", type=int, default=1, help="cross-validation folds")
    args = ap.parse_args()
    rows = read_scores(args.scores, args.scorer)
    texts = read_texts(rows, args.pairs_dir)
    keys = sorted(rows)
    sets = np.array([k[0].split("/")[0] for k in keys])
    names = sorted(set(sets))
    if len(names) < 2:
        fail("the probe needs pairs of at least two sets")
    x = np.array([features(rows[k][args.scorer], rows[k]["cosine"], *texts[k]) for k in keys])
    y = np.array([rows[k]["label"] for k in keys], float)
    out = {"pairs": len(keys), "scorer": args.scorer,
           "scorer_verdicts": report(1 / (1 + np.exp(-x[:, 0])), y, sets, names, args.threshold)}
    rng = random.Random(args.seed)
    folds = np.array([rng.randrange(5) for _ in keys])
    for name, cols in SIDE_INPUTS.items():
        cv, held = np.zeros(len(y)), np.zeros(len(y))
        for f in range(5):
            train = folds != f
            beta = fit(x[train][:, cols], y[train], equal_set_weights(sets[train]))
            cv[~train] = predict(beta, x[~train][:, cols])
        for n in names:
            train = sets != n
            beta = fit(x[train][:, cols], y[train], equal_set_weights(sets[train]))
            held[~train] = predict(beta, x[~train][:, cols])
        out[name] = {"cross_validated": report(cv, y, sets, names, 0.5),
                     "set_held_out": report(held, y, sets, names, 0.5)}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
