#!/usr/bin/env bash
# Chooses the two-stage default on SciFact's *train* split only (809 queries;
# the test splits stay untouched for reporting): hybrid weighted-fusion weights
# and the verifier's weight in the final weighted combine. Prints a markdown
# table (one `verity eval --json` per row) and keeps the raw JSON under OUT.
# Usage: scripts/tune_two_stage.sh [OUT] [VERIFIER]   (VERIFIER default f1)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${VERITY_DATA:-$root/../shared/data}"
out="${1:-$root/out/tune}"
verifier="${2:-f1}"
verity="${VERITY_BIN:-$root/build/verity}"
mkdir -p "$out"

rows=("bm25|--retriever bm25")
for dw in 0.1 0.2 0.3; do
  rows+=("hybrid weighted dense=$dw|--retriever hybrid --fusion weighted --dense-weight $dw")
done
for a in 0.1 0.2 0.3; do
  rows+=("bm25 + $verifier weighted a=$a|--retriever bm25 --verifier $verifier --combine weighted --verifier-weight $a")
done
for dw in 0.1 0.2; do
  for a in 0.1 0.2; do
    rows+=("hybrid dense=$dw + $verifier a=$a|--retriever hybrid --fusion weighted --dense-weight $dw --verifier $verifier --combine weighted --verifier-weight $a")
  done
done

echo "| pipeline (SciFact train) | nDCG@10 | Acc@1 | Recall@100 |"
echo "|---|---|---|---|"
for row in "${rows[@]}"; do
  name="${row%%|*}"
  args="${row#*|}"
  file="$out/train-$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_').json"
  # shellcheck disable=SC2086
  "$verity" eval --dataset "$data/beir/scifact" --split train --encoder use-lite --k 100 --quiet --json $args > "$file"
  python3 - "$file" "$name" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {j['ndcg@10']:.4f} | {j['acc@1']:.4f} | {j['recall@100']:.4f} |")
PY
done
