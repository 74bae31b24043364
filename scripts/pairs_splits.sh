#!/usr/bin/env bash
# Splits every shared labelled pair set into train/dev/test (70/15/15, seed 1)
# with `verity pairs-split`: pairs that share a sentence stay in one part.
# Output: OUT_DIR/<source>/{train,dev,test}.jsonl + manifest.json (default
# data/pairs under the repository root, outside git). The test parts are read
# once, by scripts/verifier_results.sh, for the reported figures.
# Usage: scripts/pairs_splits.sh [OUT_DIR] [VERITY_BINARY]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/data/pairs}"
VERITY="${2:-$ROOT/build/verity}"
DATA="${VERITY_SHARED_DATA:-$ROOT/../shared/data}/pairs"
split() {  # NAME FILE...
  local name="$1"; shift
  local args=()
  for f in "$@"; do args+=(--data "$DATA/$f"); done
  [ -s "$OUT/$name/manifest.json" ] && { echo "pairs_splits: $OUT/$name exists, kept" >&2; return; }
  "$VERITY" pairs-split "${args[@]}" --source "$name" --out "$OUT/$name" --seed 1 --skip-invalid --quiet
}
split paws paws-wiki/dev.jsonl
split qqp qqp/pairs.jsonl
split sick sick/train.jsonl
split mrpc mrpc/train.jsonl
split apt apt/train.jsonl
split stsb stsb/train.jsonl stsb/dev.jsonl
echo "pairs_splits: train/dev/test of paws qqp sick mrpc apt stsb in $OUT" >&2
