#!/usr/bin/env bash
# Validity of each `verity perturb` generator on real sentences: emitted share,
# share of outputs that re-parse completely with Link Grammar, and a seeded
# sample of 50 outputs per type for hand-checking (docs/perturb_checklist.md).
# Inputs are read from ../shared/data and never copied into the repo.
# Usage: scripts/perturb_validity.sh [VERITY_BINARY] [WORK_DIR]   (TYPES="spatial ..." limits the types)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
verity="${1:-$root/build/verity}"
work="${2:-$(mktemp -d /tmp/perturb_validity.XXXXXX)}"
data="${VERITY_SHARED_DATA:-$root/../shared/data}"
mkdir -p "$work"

# SciFact claims already are {"text": ...} JSONL.
scifact="$data/beir/scifact/queries.jsonl"
# State of the Union 2000-2018: sentences of 6-30 words, one per line (plain).
sotu="$work/sotu_sentences.txt"
python3 - "$data/text/sotu" "$sotu" <<'PY'
import os, re, sys
src, dst = sys.argv[1], sys.argv[2]
out = []
for name in sorted(os.listdir(src)):
    if not name[:4].isdigit() or int(name[:4]) < 2000:
        continue
    text = re.sub(r"\s+", " ", open(os.path.join(src, name), encoding="utf-8").read())
    for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text):
        if 6 <= len(s.split()) <= 30 and s[-1] in ".!?":
            out.append(s)
open(dst, "w", encoding="utf-8").write("\n".join(out[:2000]) + "\n")
PY

printf '| type | corpus | sentences | emitted | emitted %% | reparse_rate | top skip reasons |\n'
printf '|---|---|---:|---:|---:|---:|---|\n'
for type in ${TYPES:-negation negation:mode=antonym role_swap spatial numeric passive synonym}; do
  for corpus in scifact sotu; do
    if [ "$corpus" = scifact ]; then input="$scifact"; plain=""; else input="$sotu"; plain="--plain"; fi
    out="$work/${type//:/_}.$corpus.jsonl"
    summary=$("$verity" perturb --quiet --json --seed 1 --type "$type" --input "$input" $plain --output "$out")
    python3 - "$type" "$corpus" "$summary" <<'PY'
import json, sys
t, c, s = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
reasons = sorted(s["skip_reasons"].items(), key=lambda kv: -kv[1])[:3]
print(f"| {t} | {c} | {s['sentences']} | {s['emitted']} | {100*s['emitted']/max(1,s['sentences']):.1f} | "
      f"{s['reparse_rate']:.3f} | {', '.join(f'{k}={v}' for k, v in reasons)} |")
PY
  done
  # Hand-check sample: 50 outputs over both corpora, seeded.
  python3 - "$work" "${type//:/_}" <<'PY'
import json, random, sys
work, t = sys.argv[1], sys.argv[2]
rows = []
for c in ("scifact", "sotu"):
    rows += [json.loads(l) for l in open(f"{work}/{t}.{c}.jsonl", encoding="utf-8")]
random.Random(1).shuffle(rows)
with open(f"{work}/sample_{t}.txt", "w", encoding="utf-8") as f:
    for i, r in enumerate(rows[:50], 1):
        f.write(f"{i}. {r['text']}\n   -> {r['perturbed']}\n   [{r['original_span']} => {r['new_span']}] reparses={r['reparses']}\n")
PY
done
echo "samples for hand-checking: $work/sample_*.txt" >&2
