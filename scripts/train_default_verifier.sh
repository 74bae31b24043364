#!/usr/bin/env bash
# The default verifier's recipe on use-lite, in two rounds of seeds 1-3:
# teachers (scripts/train_verifier.sh's recipe), then students trained by the
# same recipe with all three teachers distilled in (--distill-from, weight
# 0.8). The default is the student with the best dev macro AUC. Each run's
# summary JSON goes next to its weights; installing one as
# assets/verifiers/default.valn (with its record in default.json) is a
# separate, deliberate step. A finished run is kept on a rerun.
# Usage: scripts/train_default_verifier.sh [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/out/verifier-f5}"
mkdir -p "$OUT"
run() {  # NAME SEED [flags...]
  local name="$1" seed="$2"; shift 2
  [ -s "$OUT/$name.json" ] && return 0
  bash "$ROOT/scripts/train_verifier.sh" "$OUT/$name.valn" use-lite "$seed" "$@" > "$OUT/$name.json.tmp"
  mv "$OUT/$name.json.tmp" "$OUT/$name.json"
}
teachers=()
for seed in 1 2 3; do
  run "teacher-seed$seed" "$seed"
  teachers+=(--distill-from "$OUT/teacher-seed$seed.valn")
done
for seed in 1 2 3; do
  run "seed$seed" "$seed" "${teachers[@]}" --distill-weight 0.8
done
