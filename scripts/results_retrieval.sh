#!/usr/bin/env bash
# Reproduces the retrieval-quality tables of docs/RESULTS.md: every
# (dataset, pipeline) row is one `verity eval --json` run; prints a markdown
# table and keeps the raw JSON under OUT (default out/results).
# Usage: scripts/results_retrieval.sh [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${VERITY_DATA:-$root/../shared/data}"
out="${1:-$root/out/results}"
verity="${VERITY_BIN:-$root/build/verity}"
mkdir -p "$out"

rows=(
  "bm25|--retriever bm25"
  "dense use-lite|--retriever dense --encoder use-lite"
  "dense glove|--retriever dense --encoder glove"
  "hybrid (rrf) use-lite|--retriever hybrid --fusion rrf --encoder use-lite"
  "hybrid (weighted 0.2) use-lite|--retriever hybrid --fusion weighted --dense-weight 0.2 --encoder use-lite"
  "hybrid (rrf) + F0 rerank|--retriever hybrid --fusion rrf --encoder use-lite --verifier f0 --combine rerank"
  "hybrid (rrf) + F1 rerank|--retriever hybrid --fusion rrf --encoder use-lite --verifier f1 --combine rerank"
  "hybrid (rrf) + F2 rerank|--retriever hybrid --fusion rrf --encoder use-lite --verifier f2 --combine rerank"
  "bm25 + F1 rerank|--retriever bm25 --encoder use-lite --verifier f1 --combine rerank"
  "two-stage default: hybrid + F1 (weighted 0.2/0.2)|--retriever hybrid --encoder use-lite --verifier f1"
  "hybrid + F0 (weighted 0.2/0.2)|--retriever hybrid --encoder use-lite --verifier f0"
  "hybrid + F2 (weighted 0.2/0.2)|--retriever hybrid --encoder use-lite --verifier f2"
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
