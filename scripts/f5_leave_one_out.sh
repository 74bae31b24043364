#!/usr/bin/env bash
# How F5's recipe does on a kind of pair it never saw: for each of the six
# shared pair sets, train by scripts/train_verifier.sh's recipe on the other
# five (their train parts; their dev parts choose the epoch and fit the
# calibration), then score the held-out set's dev part with the network and
# with pooled cosine in one pairs-eval run. Test parts are not read.
# Usage: scripts/f5_leave_one_out.sh OUT_DIR [SEED] [train-verifier flags...]
#   e.g. scripts/f5_leave_one_out.sh out/loso 1 --f5-pooled-head 4
# Per held-out set S: OUT_DIR/S.valn, S.json (training summary), S-eval.json
# (pairs-eval: scorers "cosine" and "f5"); a finished step is kept on a rerun.
# Each held-out set has its own sample cache (data/f5-samples-loso-S.vpsc).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:?usage: scripts/f5_leave_one_out.sh OUT_DIR [SEED] [flags...]}"
SEED="${2:-1}"
shift $(( $# > 2 ? 2 : $# ))
OUT="$(realpath -m --relative-base="$ROOT" "$OUT")"
cd "$ROOT"
VERITY="${VERITY:-build/verity}"
PAIRS="data/pairs"
NEARMISS="data/nearmiss"
[ -s "$PAIRS/stsb/manifest.json" ] || bash scripts/pairs_splits.sh "$PAIRS" "$VERITY"
[ -s "$NEARMISS/dev.jsonl" ] || bash scripts/nearmiss_build.sh "$NEARMISS" "$VERITY"
mkdir -p "$OUT"
SOURCES=(paws qqp sick mrpc apt stsb)
for held in "${SOURCES[@]}"; do
  if [ ! -s "$OUT/$held.json" ]; then
    args=()
    for s in "${SOURCES[@]}"; do
      [ "$s" = "$held" ] || args+=(--pairs "$PAIRS/$s/train.jsonl" --dev-pairs "$PAIRS/$s/dev.jsonl")
    done
    echo "f5_leave_one_out: training without $held" >&2
    "$VERITY" train-verifier --verifier f5 "${args[@]}" --train "$NEARMISS/train.jsonl" --dev "$NEARMISS/dev.jsonl" \
      --max-pairs-per-source 8000 --max-dev-pairs-per-source 1500 --sample-seed 1 --f5-embedding 0 --epochs 48 \
      --patience 0 --lr 2e-3 --lr-schedule cosine --weight-decay 0.01 --encoder use-lite --seed "$SEED" \
      --token-cache "data/f5-samples-loso-$held.vpsc" --out "$OUT/$held.valn" --json --quiet "$@" > "$OUT/$held.json.tmp"
    mv "$OUT/$held.json.tmp" "$OUT/$held.json"
  fi
  if [ ! -s "$OUT/$held-eval.json" ]; then
    "$VERITY" pairs-eval --data "$PAIRS/$held/dev.jsonl" --max-pairs 1500 --verifier cosine \
      --verifier "f5:$OUT/$held.valn" --json --quiet > "$OUT/$held-eval.json.tmp"
    mv "$OUT/$held-eval.json.tmp" "$OUT/$held-eval.json"
  fi
done
# One line per held-out set: its dev AUC by the network trained without it, and by pooled cosine.
/usr/bin/python3 - "$OUT" "${SOURCES[@]}" <<'EOF'
import json, sys
out, sources = sys.argv[1], sys.argv[2:]
rows = {}
for s in sources:
    with open(f"{out}/{s}-eval.json") as f:
        report = json.load(f)
    auc = {}
    for name, scorer in report["scorers"].items():
        files = scorer["files"]
        auc["cosine" if name == "cosine" else "f5"] = round(next(iter(files.values()))["auc"], 4)
    rows[s] = auc
rows["macro"] = {k: round(sum(r[k] for r in rows.values()) / len(sources), 4) for k in ("cosine", "f5")}
json.dump(rows, sys.stdout, indent=2)
print()
EOF
