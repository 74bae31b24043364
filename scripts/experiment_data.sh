#!/usr/bin/env bash
# Inputs of the committed experiment configs (configs/*.json), written to
# out/exp/ (git-ignored): hard-negative sources mined from SciFact train
# (bm25, dense and hybrid with use-lite, generated) and the constructed
# controls (unrelated, false-negative), and the near-miss splits.
# Usage: scripts/experiment_data.sh [VERITY]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
verity="${1:-$root/build/verity}"
out="$root/out/exp"
data="$root/../shared/data"
scifact="$data/beir/scifact"
mkdir -p "$out/src" "$out/logs"
step() {
  local name=$1
  shift
  echo "== $name $(date -u +%T)"
  nice -n 5 "$@" > "$out/logs/$name.json" 2> "$out/logs/$name.err"
}
for source in bm25 generated dense hybrid; do
  step "mine-$source" "$verity" mine --dataset "$scifact" --split train --source "$source" --encoder use-lite \
    --num-negatives 1 --out "$out/src/$source.jsonl" --json
done
step make-sources "$verity" diagnose --make-sources "$out/mk" --dataset "$scifact" --split train --json
cp "$out/mk/unrelated.jsonl" "$out/mk/false-negative.jsonl" "$out/src/"
step nearmiss-build "$verity" nearmiss-build --out "$out/nearmiss" --data-root "$data" --json
echo "== done $(date -u +%T)"
