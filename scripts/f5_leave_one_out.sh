#!/usr/bin/env bash
# How F5's recipe does on a kind of pair it never saw: for each of the six
# shared pair sets, train by scripts/train_verifier.sh's recipe on the other
# five (their train parts; their dev parts choose the epoch and fit the
# calibration), then score the held-out set's dev part with the network and
# with pooled cosine in one pairs-eval run. Test parts are not read.
# Usage: scripts/f5_leave_one_out.sh OUT_DIR [SEED] [train-verifier flags...]
#   e.g. scripts/f5_leave_one_out.sh out/loso 1 --f5-pooled-head 4
# Per held-out set S: OUT_DIR/S.valn, S.json (training summary), S-eval.json
# (pairs-eval: scorers "cosine" and "f5:OUT_DIR/S.valn"); a finished step is
# kept on a rerun. Prints one JSON object: per held-out set and their macro,
# the dev AUC of the network trained without it and of pooled cosine.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:?usage: scripts/f5_leave_one_out.sh OUT_DIR [SEED] [flags...]}"
SEED="${2:-1}"
shift $(( $# > 2 ? 2 : $# ))
OUT="$(realpath -m --relative-base="$ROOT" "$OUT")"
cd "$ROOT"
VERITY="${VERITY:-build/verity}"
SOURCES=(paws qqp sick mrpc apt stsb)
mkdir -p "$OUT"
for held in "${SOURCES[@]}"; do
  if [ ! -s "$OUT/$held.json" ]; then
    rest=()
    for s in "${SOURCES[@]}"; do [ "$s" = "$held" ] || rest+=("$s"); done
    echo "f5_leave_one_out: training without $held" >&2
    VERITY_F5_SOURCES="${rest[*]}" bash scripts/train_verifier.sh "$OUT/$held.valn" use-lite "$SEED" --quiet "$@" \
      > "$OUT/$held.json.tmp"
    mv "$OUT/$held.json.tmp" "$OUT/$held.json"
  fi
  if [ ! -s "$OUT/$held-eval.json" ]; then
    "$VERITY" pairs-eval --data "data/pairs/$held/dev.jsonl" --max-pairs 1500 --verifier cosine \
      --verifier "f5:$OUT/$held.valn" --json --quiet > "$OUT/$held-eval.json.tmp"
    mv "$OUT/$held-eval.json.tmp" "$OUT/$held-eval.json"
  fi
done
/usr/bin/python3 - "$OUT" "${SOURCES[@]}" <<'PY'
import json, sys
out, sources = sys.argv[1], sys.argv[2:]
rows = {}
for s in sources:
    with open(f"{out}/{s}-eval.json") as f:
        scorers = json.load(f)["scorers"]
    rows[s] = {("cosine" if name == "cosine" else "f5"): round(next(iter(v["files"].values()))["auc"], 4)
               for name, v in scorers.items()}
rows["macro"] = {k: round(sum(rows[s][k] for s in sources) / len(sources), 4) for k in ("cosine", "f5")}
json.dump(rows, sys.stdout, indent=2)
print()
PY
