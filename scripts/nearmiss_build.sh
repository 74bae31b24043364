#!/usr/bin/env bash
# Builds the near-miss triples (train/dev/test.jsonl + manifest.json) from
# ../shared/data into OUT_DIR (default: data/nearmiss under the repository
# root, which .gitignore excludes). Extra arguments go to `verity nearmiss-build`.
# Usage: scripts/nearmiss_build.sh [OUT_DIR] [VERITY_BINARY] [extra flags...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/data/nearmiss}"
VERITY="${2:-$ROOT/build/verity}"
shift $(( $# > 2 ? 2 : $# ))
DATA="${VERITY_SHARED_DATA:-$ROOT/../shared/data}"
exec "$VERITY" nearmiss-build --data-root "$DATA" --out "$OUT" --seed 1 \
  --max-per-type 4000 --max-cannot 2500 --max-text 2000 --max-stepgame 4000 \
  --max-targeted 20000 "$@"
