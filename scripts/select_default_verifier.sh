#!/usr/bin/env bash
# Model selection for the default verifier: trains the default recipe
# (scripts/train_default_verifier.sh) for every WIDTH in WIDTHS and SEED in
# SEEDS into RUNS/w<WIDTH>-seed<SEED>/, then installs the run with the best dev
# score (best_dev_pairwise_acc under --dev-metric macro: mean dev accuracy over
# the edit types and SciFact retrieval) as assets/verifiers/default.{vvrf,json}.
# The test split plays no part in the choice. Finished runs are kept and
# skipped on a rerun; RUNS/ckpt-w<WIDTH>-seed<SEED> holds each run's checkpoints.
#   usage: scripts/select_default_verifier.sh [BUILD_DIR] [NM_DATA_DIR] [RUNS_DIR]
# Env: WIDTHS="32 64", SEEDS="1 2 3", TOKEN_CACHE (passed on).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build}"
nm="${2:-$repo/data/nearmiss}"
runs="${3:-$repo/out/default-verifier-runs}"
mkdir -p "$runs"
for width in ${WIDTHS:-32 64}; do
  for seed in ${SEEDS:-1 2 3}; do
    dir="$runs/w$width-seed$seed"
    [ -s "$dir/default.json" ] && continue
    ckpt="$runs/ckpt-w$width-seed$seed"
    resume=
    [ -s "$ckpt/checkpoint.vtck" ] && resume=1
    OUT="$dir" WIDTH="$width" SEED="$seed" CKPT_DIR="$ckpt" RESUME="$resume" \
      bash "$repo/scripts/train_default_verifier.sh" "$build" "$nm"
  done
done
python3 - "$runs" "$repo/assets/verifiers" <<'PY'
import glob, json, os, shutil, sys
runs, assets = sys.argv[1], sys.argv[2]
rows = []
for path in sorted(glob.glob(os.path.join(runs, "w*-seed*/default.json"))):
    s = json.load(open(path))
    rows.append((s["best_dev_pairwise_acc"], os.path.dirname(path), s))
    test = {k: round(v["accuracy"], 3) for k, v in s["test_pairwise_acc"]["by_type"].items()}
    print(f"{os.path.basename(os.path.dirname(path))}: dev {s['dev_metric']} {s['best_dev_pairwise_acc']:.4f}  test {test}",
          file=sys.stderr)
best_score, best_dir, summary = max(rows, key=lambda r: r[0])
summary["selected_from"] = [{"run": os.path.basename(d), "best_dev": score} for score, d, _ in rows]
summary["file"] = "assets/verifiers/default.vvrf"
tmp = os.path.join(assets, ".default.json.tmp")
json.dump(summary, open(tmp, "w"), indent=2, sort_keys=True)
shutil.copyfile(os.path.join(best_dir, "default.vvrf"), os.path.join(assets, ".default.vvrf.tmp"))
os.replace(os.path.join(assets, ".default.vvrf.tmp"), os.path.join(assets, "default.vvrf"))
os.replace(tmp, os.path.join(assets, "default.json"))
print(f"selected {os.path.basename(best_dir)} (dev {best_score:.4f}) -> {assets}/default.vvrf", file=sys.stderr)
PY
