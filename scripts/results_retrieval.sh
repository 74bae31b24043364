#!/usr/bin/env bash
# Reproduces the retrieval-quality tables of docs/RESULTS.md: every
# (dataset, pipeline) row is one `verity eval --json` run; prints a markdown
# table and keeps the raw JSON under OUT (default out/results).
# Usage: scripts/results_retrieval.sh [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${VERITY_DATA:-$root/../shared/data}"
out="${1:-$root/out/results}"
verity="$root/build/verity"
mkdir -p "$out"

rows=(
  "bm25|--retriever bm25"
  "dense use-lite|--retriever dense --encoder use-lite"
  "dense glove|--retriever dense --encoder glove"
  "hybrid (rrf) use-lite|--retriever hybrid --encoder use-lite"
  "hybrid + F0|--retriever hybrid --encoder use-lite --verifier f0"
  "hybrid + F1|--retriever hybrid --encoder use-lite --verifier f1"
  "hybrid + F2|--retriever hybrid --encoder use-lite --verifier f2"
  "bm25 + F1|--retriever bm25 --encoder use-lite --verifier f1"
  "hybrid + F1 (weighted 0.5)|--retriever hybrid --encoder use-lite --verifier f1 --combine weighted"
)

echo "| dataset | pipeline | nDCG@10 | Acc@1 | Recall@100 | MRR@10 | queries |"
echo "|---|---|---|---|---|---|---|"
for ds in scifact cranfield; do
  for row in "${rows[@]}"; do
    name="${row%%|*}"
    args="${row#*|}"
    file="$out/${ds}-$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_').json"
    # shellcheck disable=SC2086
    "$verity" eval --dataset "$data/beir/$ds" --split test --k 100 --quiet --json $args > "$file"
    python3 - "$file" "$ds" "$name" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {sys.argv[3]} | {j['ndcg@10']:.4f} | {j['acc@1']:.4f} | "
      f"{j['recall@100']:.4f} | {j['mrr@10']:.4f} | {j['queries']} |")
PY
  done
done
