#!/usr/bin/env bash
# Verifier results table: F3/F4 × frozen/end2end, 3 seeds each, mean ± std of
# test pairwise accuracy (overall and per edit type) and training examples/s.
#   usage: scripts/verifier_results.sh [BUILD_DIR] [NM_DATA_DIR] [OUT_DIR]
# Env: SEEDS="1 2 3", CONFIGS="f3:frozen f4:frozen f3:end2end f4:end2end",
#      EPOCHS=4, MAX_TRAIN=3000 (near-miss triples per run; bounds CPU time).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build}"
nm="${2:-$repo/data/nearmiss}"  # scripts/nearmiss_build.sh writes it there
out="${3:-/work/tv-results}"
mkdir -p "$out"
seeds="${SEEDS:-1 2 3}"
configs="${CONFIGS:-f3:frozen f4:frozen f3:end2end f4:end2end}"

for config in $configs; do
  kind="${config%%:*}"; mode="${config##*:}"
  for seed in $seeds; do
    tag="$kind-$mode-seed$seed"
    [[ -s "$out/$tag.json" ]] && continue  # finished earlier
    extra=()
    [[ "$kind" == f4 ]] && extra+=(--vit-dim 128 --vit-layers 2 --vit-heads 4 --vit-mlp 256)
    echo "+ $tag" >&2
    "$build/verity" train-verifier --train "$nm/train.jsonl" --dev "$nm/dev.jsonl" --test "$nm/test.jsonl" \
      --encoder use-lite --mode "$mode" --verifier "$kind" --loss pairwise \
      --epochs "${EPOCHS:-4}" --patience 2 --batch-size 32 --lr 1e-3 --encoder-lr 1e-5 \
      --max-train "${MAX_TRAIN:-3000}" --seed "$seed" "${extra[@]}" \
      --out "$out/$tag.vvrf" --json > "$out/$tag.json.tmp"
    mv "$out/$tag.json.tmp" "$out/$tag.json"
  done
done

python3 - "$out" $configs <<'PY'
import json, statistics, sys, glob, os
out, configs = sys.argv[1], sys.argv[2:]
def ms(xs):
    if not xs: return "not run"
    if len(xs) == 1: return f"{xs[0]:.3f} (1 seed)"
    return f"{statistics.mean(xs):.3f} ± {statistics.stdev(xs):.3f}"
rows, types = [], set()
for config in configs:
    kind, mode = config.split(":")
    runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{kind}-{mode}-seed*.json"))]
    for r in runs: types |= set(r.get("test_pairwise_acc", {}).get("by_type", {}))
    rows.append((kind, mode, runs))
types = sorted(types)
print("| verifier | mode | seeds | test acc | " + " | ".join(types) + " | train ex/s |")
print("|---|---|---|---|" + "---|" * len(types) + "---|")
for kind, mode, runs in rows:
    acc = [r["test_pairwise_acc"]["accuracy"] for r in runs]
    per = [ms([r["test_pairwise_acc"]["by_type"][t]["accuracy"] for r in runs
               if t in r["test_pairwise_acc"]["by_type"]]) for t in types]
    eps = [r["examples_per_s"] for r in runs]
    print(f"| {kind} | {mode} | {len(runs)} | {ms(acc)} | " + " | ".join(per) + f" | {ms(eps)} |")
PY
