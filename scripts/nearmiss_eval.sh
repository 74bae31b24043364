#!/usr/bin/env bash
# Prints the near-miss table of docs/NEARMISS.md: pairwise accuracy per type,
# overall pairwise accuracy and ROC-AUC on a split, for the pooled-cosine
# baseline (none) and the verifiers F0-F2 (plus any extra specs given).
# Usage: scripts/nearmiss_eval.sh [DATA_DIR] [VERITY_BINARY] [ENCODER] [extra verifier specs...]
# Raw JSON per verifier is kept in $OUT_DIR (default DATA_DIR/eval).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATA="${1:-$ROOT/data/nearmiss}"
VERITY="${2:-$ROOT/build/verity}"
ENCODER="${3:-use-lite}"
shift $(( $# > 3 ? 3 : $# ))
SPLIT="${SPLIT:-test}"
OUT_DIR="${OUT_DIR:-$DATA/eval}"
mkdir -p "$OUT_DIR"
VERIFIERS=(none f0 f1 f2 "$@")
for v in "${VERIFIERS[@]}"; do
  name="$(echo "$v" | tr '/:' '__')"
  "$VERITY" nearmiss-eval --data "$DATA/$SPLIT.jsonl" --encoder "$ENCODER" --verifier "$v" --json --quiet \
    > "$OUT_DIR/$SPLIT.$name.json"
done
python3 - "$OUT_DIR" "$SPLIT" "${VERIFIERS[@]}" <<'PY'
import json, sys
out_dir, split, verifiers = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []
for v in verifiers:
    name = v.replace('/', '_').replace(':', '_')
    rows.append((v, json.load(open(f"{out_dir}/{split}.{name}.json"))))
types = sorted({t for _, r in rows for t in r["by_type"]})
counts = rows[0][1]["by_type"]
per_type = ", ".join("%s %d" % (t, counts[t]["count"]) for t in types)
print(f"Split `{split}`, encoder `{rows[0][1]['encoder']}`, {rows[0][1]['count']} triples ({per_type}).\n")
print("| verifier | " + " | ".join(f"{t} acc" for t in types) + " | all acc | AUC |")
print("|---|" + "---:|" * (len(types) + 2))
for v, r in rows:
    label = "none (pooled cosine)" if v == "none" else v
    cells = [f"{r['by_type'][t]['pairwise_acc']:.3f}" for t in types]
    print(f"| {label} | " + " | ".join(cells) + f" | {r['pairwise_acc']:.3f} | {r['auc']:.3f} |")
sources = sorted({s for _, r in rows for s in r["by_source"]})
print("\nPairwise accuracy by source (triples: " +
      ", ".join("%s %d" % (s, rows[0][1]["by_source"][s]["count"]) for s in sources) + ").\n")
print("| verifier | " + " | ".join(sources) + " |")
print("|---|" + "---:|" * len(sources))
for v, r in rows:
    label = "none (pooled cosine)" if v == "none" else v
    print(f"| {label} | " + " | ".join(f"{r['by_source'][s]['pairwise_acc']:.3f}" for s in sources) + " |")
PY
