#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, converts the
# pretrained models, then evaluates BM25 on SciFact (test split) and prints
# the metrics table. Extra arguments go to `verity eval`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${VERITY_DATA:-$root/../shared/data}"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
bash "$root/scripts/setup_models.sh"
"$root/build/verity" eval --dataset "$data/beir/scifact" --split test --retriever bm25 --k 100 "$@"
