#!/usr/bin/python3
"""Does a question-word signal add anything to a scorer? Per data file of a
pairs-eval run: the scorer's AUC, and the cross-validated AUC of a logistic
regression on its logit alone and on its logit plus one flag chosen from the
texts alone: the two texts hold different sets of question words (how, what,
when, where, why, which, who, whom, whose).

Usage: scripts/question_word_probe.py REPORT.json SCORES.jsonl [SCORER]
  REPORT.json   pairs-eval --json output (its data paths)
  SCORES.jsonl  pairs-eval --scores-out of the same run
  SCORER        the scorer read (default "default")
Prints one JSON object: per data file, the pair count, the share of pairs whose
question words differ, the same-meaning share among those, and the three AUCs
(5 folds, seeded). Needs numpy (Debian's python3-numpy).
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overlap_buckets import report_lines, roc_auc, words  # noqa: E402

QUESTION_WORDS = {"how", "what", "when", "where", "why", "which", "who", "whom", "whose"}
FOLDS = 5


def question_words_differ(a, b):
    return float((set(words(a)) & QUESTION_WORDS) != (set(words(b)) & QUESTION_WORDS))


def fit_logistic(x, y, steps=50):
    """Newton's method on standardized columns plus an intercept (a small ridge keeps it stable)."""
    mean, sd = x.mean(0), x.std(0) + 1e-9
    z = np.column_stack([(x - mean) / sd, np.ones(len(x))])
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        hessian = z.T @ (z * (p * (1 - p))[:, None]) + 1e-6 * np.eye(len(w))
        w -= np.linalg.solve(hessian, z.T @ (p - y))
    return lambda q: 1 / (1 + np.exp(-np.column_stack([(q - mean) / sd, np.ones(len(q))]) @ w))


def cross_validated(x, y):
    order = np.random.default_rng(0).permutation(len(y))
    out = np.empty(len(y))
    for fold in range(FOLDS):
        test = order[fold::FOLDS]
        train = np.setdiff1d(order, test)
        out[test] = fit_logistic(x[train], y[train])(x[test])
    return out


def main(report_path, scores_path, scorer="default"):
    lines = report_lines(report_path)
    rows = {}
    with open(scores_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
                if row["scorer"] == scorer:
                    rows.setdefault(row["file"], []).append((int(row["line"]), int(row["label"]), float(row["score"])))
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{scores_path}:{n}: not a pairs-eval score row ({e})")
    if not rows:
        sys.exit(f"{scores_path}: no scores of {scorer!r}")
    out = {}
    for name, scored in sorted(rows.items()):
        if name not in lines:
            sys.exit(f"{scores_path}: file {name!r} is not in {report_path}")
        y = np.array([label for _, label, _ in scored], dtype=float)
        score = np.array([s for _, _, s in scored])
        logit = np.log(np.clip(score, 1e-9, 1 - 1e-9) / (1 - np.clip(score, 1e-9, 1 - 1e-9)))
        flag = []
        for ln, _, _ in scored:
            try:
                pair = json.loads(lines[name][ln - 1])
                flag.append(question_words_differ(pair["a"], pair["b"]))
            except (IndexError, ValueError, KeyError, TypeError) as e:
                sys.exit(f"{scores_path}: {name} line {ln} is no labelled pair in its data file ({e!r})")
        flag = np.array(flag)
        entry = {"pairs": len(scored), "question_words_differ": round(float(flag.mean()), 3),
                 "same_share_where_they_differ": round(float(y[flag == 1].mean()), 3) if flag.any() else None,
                 "auc": roc_auc(list(y), list(score))}
        if entry["auc"] is not None and len(scored) >= 2 * FOLDS:
            entry["auc_logit_cv"] = roc_auc(list(y), list(cross_validated(logit[:, None], y)))
            entry["auc_logit_and_flag_cv"] = roc_auc(list(y), list(cross_validated(np.column_stack([logit, flag]), y)))
        out[name] = {k: (round(v, 3) if isinstance(v, float) and math.isfinite(v) else v) for k, v in entry.items()}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
