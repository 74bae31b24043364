#!/usr/bin/env bash
# The default verifier's recipe (scripts/train_verifier.sh on use-lite) over
# seeds 1-3, for the mean ± std in docs/TRAINING.md. Each run's summary JSON
# goes next to its weights; installing one as assets/verifiers/default.valn
# (with its record in default.json) is a separate, deliberate step.
# Usage: scripts/train_default_verifier.sh [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/out/verifier-f5}"
mkdir -p "$OUT"
for seed in 1 2 3; do
  bash "$ROOT/scripts/train_verifier.sh" "$OUT/seed$seed.valn" use-lite "$seed" > "$OUT/seed$seed.json"
done
