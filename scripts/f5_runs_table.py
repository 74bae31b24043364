#!/usr/bin/env python3
"""Dev figures of F5 training runs, per variant: mean ± std over seeds.

Reads the summaries `train-verifier --verifier f5 --json` wrote (one JSON file
per run) and prints, per variant, the kept epoch's dev AUC of every group
(the pair sources and "nearmiss"), the macro over them (of the calibrated
score, as the run chose it), the near-miss dev pairwise accuracy per type, the
threshold, the parameter count, and per seed how many dev groups have verdicts
within 0.03 of their best single threshold's accuracy. A variant is every file whose name, less
its seed suffix "-s<N>.json", is the same: out/ph/base-s1.json and
out/ph/base-s2.json are variant "base".

  scripts/f5_runs_table.py out/ph/*.json            # a Markdown table
  scripts/f5_runs_table.py --json out/ph/*.json     # the same as JSON
"""
import json
import math
import os
import re
import sys


def mean_std(values):
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def read_run(path):
    try:
        with open(path) as f:
            run = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"{path}: {e}")
    for key in ("best_epoch", "epoch_log", "calibration", "dev_nearmiss_pairwise_acc", "parameters"):
        if key not in run:
            sys.exit(f"{path}: no '{key}': not a train-verifier --verifier f5 --json summary")
    kept = [e for e in run["epoch_log"] if e["epoch"] == run["best_epoch"]]
    if not kept:
        sys.exit(f"{path}: epoch_log has no entry for best_epoch {run['best_epoch']}")
    dev = run.get("dev", {})
    return {
        "within": sum(1 for m in dev.values() if m["best_accuracy"] - m["accuracy"] <= 0.03),
        "groups": len(dev),
        "auc": kept[0]["dev_auc"],
        "macro": run["best_dev_macro_auc"],
        "nearmiss": run["dev_nearmiss_pairwise_acc"],
        "threshold": run["calibration"]["threshold"],
        "parameters": run["parameters"],
        "epoch": run["best_epoch"],
    }


def main(argv):
    as_json = "--json" in argv
    paths = [a for a in argv if a != "--json"]
    if not paths:
        sys.exit(__doc__)
    variants = {}
    for path in paths:
        name = re.sub(r"-s\d+$", "", os.path.splitext(os.path.basename(path))[0])
        variants.setdefault(name, []).append(read_run(path))
    report = {}
    for name, runs in variants.items():
        groups = sorted(set().union(*(r["auc"] for r in runs)))
        types = sorted(set().union(*(r["nearmiss"] for r in runs)))
        report[name] = {
            "seeds": len(runs),
            "parameters": runs[0]["parameters"],
            "epochs": [r["epoch"] for r in runs],
            # per seed: dev groups whose verdict accuracy is within 0.03 of their best threshold's
            "within_0.03": [f"{r['within']} of {r['groups']}" for r in runs],
            "auc": {g: mean_std([r["auc"][g] for r in runs if g in r["auc"]]) for g in groups},
            "macro": mean_std([r["macro"] for r in runs]),
            "nearmiss_pairwise": {t: mean_std([r["nearmiss"][t] for r in runs if t in r["nearmiss"]]) for t in types},
            "threshold": mean_std([r["threshold"] for r in runs]),
        }
    if as_json:
        json.dump(report, sys.stdout, indent=2, sort_keys=True)
        print()
        return
    groups = sorted(set().union(*(v["auc"] for v in report.values())))
    types = sorted(set().union(*(v["nearmiss_pairwise"] for v in report.values())))
    fmt = lambda ms: f"{ms[0]:.3f} ± {ms[1]:.3f}"
    print("| variant | seeds | params | " + " | ".join(groups) + " | macro | near-miss pairwise (" + " / ".join(types) + ") | threshold | within 0.03 (per seed) |")
    print("|---|---:|---:|" + "---:|" * (len(groups) + 1) + "---|---:|---|")
    for name, v in report.items():
        cells = [fmt(v["auc"][g]) if g in v["auc"] else "—" for g in groups]
        pairwise = " / ".join(f"{v['nearmiss_pairwise'][t][0]:.3f}" if t in v["nearmiss_pairwise"] else "—" for t in types)
        print(f"| {name} | {v['seeds']} | {v['parameters']:,} | " + " | ".join(cells) +
              f" | {fmt(v['macro'])} | {pairwise} | {v['threshold'][0]:.2f} | {', '.join(v['within_0.03'])} |")


if __name__ == "__main__":
    main(sys.argv[1:])
