#!/usr/bin/env bash
# Trains and calibrates an F5 verifier for one encoder from the shared data:
# the six labelled pair sets (train parts; dev parts choose the epoch, fit the
# calibration and the verdict threshold) beside the near-miss triples. The
# file records the encoder, so using it on another encoder's maps is an error.
# Makes the pair splits (scripts/pairs_splits.sh) and the near-miss build
# (scripts/nearmiss_build.sh) first when they are missing.
# Usage: scripts/train_verifier.sh OUT.valn [ENCODER] [SEED] [train-verifier flags...]
#   e.g. scripts/train_verifier.sh out/bert.valn bert:/path/to/checkpoint 1
# Env: VERITY_F5_SOURCES="paws qqp sick mrpc apt stsb" (the default): the pair
# sets trained on (scripts/f5_leave_one_out.sh leaves one out).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:?usage: scripts/train_verifier.sh OUT.valn [ENCODER] [SEED] [flags...]}"
ENCODER="${2:-use-lite}"
SEED="${3:-1}"
shift $(( $# > 3 ? 3 : $# ))
# Paths relative to the repository (where they lie inside it), so the
# provenance in the file holds no machine's paths.
OUT="$(realpath -m --relative-base="$ROOT" "$OUT")"
[ -z "${VERITY:-}" ] || VERITY="$(realpath -m --relative-base="$ROOT" "$VERITY")"
cd "$ROOT"
VERITY="${VERITY:-build/verity}"
PAIRS="data/pairs"
NEARMISS="data/nearmiss"
[ -s "$PAIRS/stsb/manifest.json" ] || bash scripts/pairs_splits.sh "$PAIRS" "$VERITY"
[ -s "$NEARMISS/dev.jsonl" ] || bash scripts/nearmiss_build.sh "$NEARMISS" "$VERITY"
ALL_SOURCES="paws qqp sick mrpc apt stsb"
SOURCES="${VERITY_F5_SOURCES:-$ALL_SOURCES}"
args=()
for s in $SOURCES; do
  [ -s "$PAIRS/$s/train.jsonl" ] || { echo "train_verifier: no pair set '$s' in $PAIRS" >&2; exit 2; }
  args+=(--pairs "$PAIRS/$s/train.jsonl" --dev-pairs "$PAIRS/$s/dev.jsonl")
done
# The sample cache holds maps and token identities per encoder (and per set
# of sources), so seeds and variants encode each text once.
cache="data/f5-samples-$(printf '%s' "$ENCODER" | tr -c 'A-Za-z0-9._-' '_')"
[ "$SOURCES" = "$ALL_SOURCES" ] || cache="$cache-$(printf '%s' "$SOURCES" | tr -c 'A-Za-z0-9' '_')"
cache="$cache.vpsc"
mkdir -p "$(dirname "$OUT")"
# The recipe; a flag given after SEED replaces the recipe's value of that flag
# (e.g. "--epochs 8 --patience 3 --lr-schedule constant", the recipe before
# the cosine schedule), since train-verifier refuses a flag given twice.
# --sample-seed 1: every seed trains and chooses its epoch on the same capped
# sample (only QQP is larger than the caps), so the seeds differ in
# initialization and order only; every recorded run drew that sample.
recipe=(--max-pairs-per-source 8000 --max-dev-pairs-per-source 1500 --sample-seed 1 --f5-embedding 0 --epochs 48
        --patience 0 --lr 2e-3 --lr-schedule cosine --weight-decay 0.01)
for ((i = 0; i < ${#recipe[@]}; i += 2)); do
  flag="${recipe[i]}"
  for given in "$@"; do
    [ "$given" = "$flag" ] && continue 2
  done
  args+=("$flag" "${recipe[i + 1]}")
done
exec "$VERITY" train-verifier --verifier f5 "${args[@]}" \
  --train "$NEARMISS/train.jsonl" --dev "$NEARMISS/dev.jsonl" \
  --encoder "$ENCODER" --seed "$SEED" --token-cache "$cache" --out "$OUT" --json "$@"
