#!/usr/bin/env python3
"""The pooled-share table of docs/RESULTS.md: for an F5 run, what each share of
the pooled cosine in its calibration (docs/TRAINING.md) gives on dev.

  scripts/pooled_share_table.py pairs TRIPLES.jsonl > PAIRS.jsonl
      near-miss triples as pairs: (query, positive) label 1, (query, negative) label 0
  scripts/pooled_share_table.py table SCORES.jsonl RUN.json [--two-sided]
      SCORES.jsonl: `pairs-eval --scores-out` with --verifier cosine and --verifier f5:RUN.valn;
      RUN.json: the run's `train-verifier --json` summary (its calibration, without a pooled term
      or with the one-sided one, is undone to recover the network's logit; then each share is
      refitted: Platt scaling and the threshold).
      The pooled term is one-sided, min(c - mean, 0), as the verifier's; --two-sided refits
      the plain c - mean instead (the variant that was not adopted).
"""
import collections
import json
import math
import sys

import numpy as np


def make_pairs(path):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                t = json.loads(line)
                q, p, neg = t["query"], t["positive"], t["negative"]
            except (json.JSONDecodeError, KeyError) as e:
                sys.exit(f"{path}:{n}: not a triple with query, positive, negative ({e})")
            print(json.dumps({"a": q, "b": p, "label": 1}))
            print(json.dumps({"a": q, "b": neg, "label": 0}))


def auc(scores, labels):
    s, y = np.asarray(scores, float), np.asarray(labels)
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n1 = int(y.sum())
    n0 = len(y) - n1
    return (ranks[y == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)


def platt(u, y, w):
    a, b = 1.0, 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-(a * u + b)))
        r, h = w * (p - y), w * np.maximum(p * (1 - p), 1e-12)
        ga, gb = (r * u).sum(), r.sum()
        haa, hab, hbb = (h * u * u).sum() + 1e-9, (h * u).sum(), h.sum() + 1e-9
        det = haa * hbb - hab * hab
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        a, b = max(a - da, 1e-3), b - db
        if abs(da) + abs(db) < 1e-9:
            break
    return a, b


def table(scores_path, run_path, two_sided=False):
    with open(run_path) as f:
        cal = json.load(f)["calibration"]
    cosine, f5 = {}, collections.defaultdict(list)
    with open(scores_path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for r in rows:
        if r["scorer"] == "cosine":
            cosine[(r["file"], r["line"])] = r["score"]
    for r in rows:
        if r["scorer"].startswith("f5") or r["scorer"] == "default":
            key = (r["file"], r["line"])
            p = min(max(r["score"], 1e-7), 1 - 1e-7)
            c = cosine[key]
            pooled = min(c - cal["pooled_center"], 0.0)  # the verifier's one-sided term
            z = (math.log(p / (1 - p)) - cal["pooled_weight"] * pooled - cal["bias"]) / cal["scale"]
            f5[r["file"]].append((z, c, r["label"]))
    names = sorted(f5)
    Z = {n: np.array([x[0] for x in f5[n]]) for n in names}
    C = {n: np.array([x[1] for x in f5[n]]) for n in names}
    Y = {n: np.array([x[2] for x in f5[n]]) for n in names}
    wt = {n: 1 / len(Z[n]) for n in names}
    total = sum(wt[n] * len(Z[n]) for n in names)
    mean = lambda X: sum(wt[n] * X[n].sum() for n in names) / total
    sd = lambda X, m: math.sqrt(sum(wt[n] * (X[n] ** 2).sum() for n in names) / total - m * m)
    zm, cm = mean(Z), mean(C)
    zs, cs = sd(Z, zm), sd(C, cm)
    print(f"groups: {', '.join(names)}")
    print("| pooled share | dev macro AUC | threshold | mean dev verdict accuracy | groups within 0.03 | near-miss negatives served |")
    print("|---:|---:|---:|---:|---:|---:|")
    for share in [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]:
        term = {n: (C[n] - cm) if two_sided else np.minimum(C[n] - cm, 0) for n in names}
        U = {n: (1 - share) * Z[n] / zs + share * term[n] / cs for n in names}
        macro = np.mean([auc(U[n], Y[n]) for n in names])
        a, b = platt(np.concatenate([U[n] for n in names]), np.concatenate([Y[n] for n in names]),
                     np.concatenate([np.full(len(U[n]), wt[n]) for n in names]))
        P = {n: 1 / (1 + np.exp(-(a * U[n] + b))) for n in names}
        best, thr = -1, 0.5
        for t in np.arange(2, 99) / 100:
            m = np.mean([((P[n] >= t) == (Y[n] == 1)).mean() for n in names])
            if m > best + 1e-12:
                best, thr = m, t
        within = 0
        for n in names:
            own_best = max(((P[n] >= t) == (Y[n] == 1)).mean() for t in np.unique(P[n]))
            within += own_best - ((P[n] >= thr) == (Y[n] == 1)).mean() <= 0.03
        nm = [n for n in names if n.startswith("nearmiss")]
        served = f"{(P[nm[0]][Y[nm[0]] == 0] >= thr).mean():.3f}" if nm else "—"
        print(f"| {share:g} | {macro:.3f} | {thr:.2f} | {best:.3f} | {within} of {len(names)} | {served} |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "pairs":
        make_pairs(sys.argv[2])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "table" and sys.argv[4:] in ([], ["--two-sided"]):
        table(sys.argv[2], sys.argv[3], two_sided=len(sys.argv) == 5)
    else:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
