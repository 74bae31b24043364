#!/usr/bin/env bash
# Extra near-miss *training* triples next to an existing build (scripts/nearmiss_build.sh):
# every CANNOT pair (the base build samples 2,500) and 6,000 sentences per text corpus
# (the base takes 2,000), all into train, none sharing a sentence with the base
# dev/test (--exclude). the F3 recipe of docs/TRAINING.md trained on base + extra.
# Usage: scripts/nearmiss_extra.sh [BASE_DIR] [VERITY_BINARY]
#   writes BASE_DIR/extra-cannot/ and BASE_DIR/extra-text/ (train.jsonl + manifest.json)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BASE="${1:-$ROOT/data/nearmiss}"
VERITY="${2:-$ROOT/build/verity}"
DATA="${VERITY_SHARED_DATA:-$ROOT/../shared/data}"
for split in dev test; do
  [ -s "$BASE/$split.jsonl" ] || { echo "nearmiss_extra: $BASE/$split.jsonl missing (run scripts/nearmiss_build.sh first)" >&2; exit 1; }
done
held_out=(--exclude "$BASE/dev.jsonl" --exclude "$BASE/test.jsonl")
"$VERITY" nearmiss-build --data-root "$DATA" --out "$BASE/extra-cannot" --seed 1 --ratios 1,0,0 \
  --max-per-type 0 --max-cannot 0 --sources cannot "${held_out[@]}"
"$VERITY" nearmiss-build --data-root "$DATA" --out "$BASE/extra-text" --seed 1 --ratios 1,0,0 \
  --max-per-type 0 --max-text 6000 --max-targeted 0 --sources sotu,moby-dick "${held_out[@]}"
