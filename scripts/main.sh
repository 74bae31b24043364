#!/usr/bin/env bash
# The README's main job on the default models: installs what is missing,
# builds, converts the pretrained models, then
#   1. indexes SciFact (BM25, USE-lite dense vectors and token vectors; cached
#      under $VERITY_CACHE_DIR or ~/.cache/verity, so a second run is fast),
#   2. prints the two-stage evaluation table on SciFact test,
#   3. shows near-miss verdicts on a few examples and writes their similarity
#      maps as pictures under OUT (default out/main),
#   4. shows the verified semantic cache: a paraphrase, a negation, a role
#      swap, an antonym and a swapped relation word ("after" for "before")
#      looked up against cached prompts (docs/CACHE.md).
# Usage: scripts/main.sh [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${VERITY_DATA:-$root/../shared/data}"
out="${1:-$root/out/main}"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
bash "$root/scripts/setup_models.sh"
verity="$root/build/verity"
mkdir -p "$out"

echo "== SciFact test: two-stage retrieval (first run encodes the corpus: several minutes) =="
rows=(
  "bm25|--retriever bm25"
  "dense (use-lite)|--retriever dense"
  "hybrid (weighted fusion, dense 0.2)|--retriever hybrid"
  "hybrid + F1 (the fastest verifier)|--retriever hybrid --verifier f1"
  "hybrid + default verifier (F5, calibrated; the two-stage default)|--retriever hybrid --verifier default"
)
echo "| pipeline | nDCG@10 | Acc@1 | Recall@100 | latency p50 ms |"
echo "|---|---|---|---|---|"
for row in "${rows[@]}"; do
  name="${row%%|*}"
  # shellcheck disable=SC2086
  "$verity" eval --dataset "$data/beir/scifact" --split test --encoder use-lite --k 100 --json \
    ${row#*|} > "$out/eval.json"
  python3 - "$out/eval.json" "$name" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {j['ndcg@10']:.4f} | {j['acc@1']:.4f} | {j['recall@100']:.4f} | "
      f"{j.get('latency_ms_p50', float('nan')):.1f} |")
PY
done

echo
echo "== Near-miss verdicts: each query against a paraphrase and a structural near-miss =="
echo "(the default verifier's scores are calibrated probabilities of same meaning; its verdicts use"
echo " its calibrated threshold. Token similarity alone (F1) often prefers the near-miss)"
examples=(
  "the dog bit the man|the man was bitten by the dog|the man bit the dog"
  "the drug is effective against the virus|the medication is effective against the virus|the drug is not effective against the virus"
  "the cup is to the left of the plate|the plate is to the right of the cup|the cup is to the right of the plate"
)
echo "| query | paraphrase | near-miss | F1 para / near | default para / near | verdict | maps |"
echo "|---|---|---|---|---|---|---|"
n=0
for ex in "${examples[@]}"; do
  IFS='|' read -r query positive negative <<< "$ex"
  n=$((n + 1))
  for side in positive negative; do
    doc="$positive"
    [ "$side" = negative ] && doc="$negative"
    "$verity" explain --query "$query" --doc "$doc" --out "$out/map-$n-$side.svg" --verifier f1,default \
      --json --quiet > "$out/explain-$side.json"
  done
  python3 - "$out" "$n" "$query" "$positive" "$negative" <<'PY'
import json, sys
out, n, q, p, neg = sys.argv[1:]
jp = json.load(open(f"{out}/explain-positive.json"))
jn = json.load(open(f"{out}/explain-negative.json"))
sp, sn = jp["scores"], jn["scores"]
vp, vn = jp["verdicts"].get("default", "?"), jn["verdicts"].get("default", "?")
ranked = "ranked below the paraphrase" if sp["default"] > sn["default"] else "NOT ranked below"
print(f"| {q} | {p} | {neg} | {sp['f1']:.3f} / {sn['f1']:.3f} | {sp['default']:.3f} / {sn['default']:.3f} | "
      f"paraphrase: {vp}; near-miss: {vn} ({ranked}) | {out}/map-{n}-positive.svg, {out}/map-{n}-negative.svg |")
PY
done
rm -f "$out/eval.json" "$out/explain-positive.json" "$out/explain-negative.json"

echo
echo "== Verified semantic cache: five cached prompts, seven new ones (docs/CACHE.md) =="
echo "(a pooled-cosine cache serves every prompt at or above its threshold, 0.8 in GPTCache;"
echo " verity serves only when the verifier's probability on the token map reaches the threshold)"
db="$out/cache-demo.sqlite"
rm -f "$db" "$db-wal" "$db-shm"
"$verity" cache put --db "$db" --prompt "Does the new drug reduce the risk of heart attacks?" \
  --response "Yes: in the trial it cut the risk by about a fifth." --quiet > /dev/null
"$verity" cache put --db "$db" --prompt "The dog bit the man." --response "A dog attacked a man." --quiet > /dev/null
"$verity" cache put --db "$db" --prompt "Is port 6379 open by default?" --response "Yes, Redis listens on it." \
  --quiet > /dev/null
"$verity" cache put --db "$db" --namespace fitness --prompt "Should I eat before a workout?" \
  --response "A light snack an hour before helps." --quiet > /dev/null
"$verity" cache put --db "$db" --namespace settings --prompt "How do I enable dark mode?" \
  --response "Settings > Display > Dark mode: on." --quiet > /dev/null
lookups=(  # kind|namespace|new prompt
  "paraphrase|default|Does the new medication reduce the risk of heart attacks?"
  "negation|default|Does the new drug not reduce the risk of heart attacks?"
  "role swap|default|The man bit the dog."
  "antonym|default|Is port 6379 closed by default?"
  "relation|fitness|Should I eat after a workout?"
  "direction|default|Does the new drug increase the risk of heart attacks?"
  "split word|settings|How do I disable dark mode?"
)
echo "| new prompt | kind | cosine | cosine rule (>= 0.8) | verifier probability | threshold | verity |"
echo "|---|---|---|---|---|---|---|"
for row in "${lookups[@]}"; do
  IFS='|' read -r kind namespace prompt <<< "$row"
  "$verity" cache lookup --db "$db" --namespace "$namespace" --prompt "$prompt" --json --quiet > "$out/lookup.json"
  python3 - "$out/lookup.json" "$kind" "$prompt" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
cos = j["similarity"] or 0.0
p = j["probability"]
verdict = "hit: serves \"" + j["response"] + "\"" if j["hit"] else f"refused ({j['reason']})"
print(f"| {sys.argv[3]} | {sys.argv[2]} | {cos:.3f} | {'serves' if cos >= 0.8 else 'refuses'} | "
      f"{p if p is None else format(p, '.3g')} | {j['threshold']:.3g} ({j['threshold_source']}) | {verdict} |")
PY
done
rm -f "$out/lookup.json"
if "$verity" cache stats --db "$db" --json --quiet | grep -q '"threshold_source": "fallback"'; then
  echo "(the verifier has no calibrated threshold, so the cache's fallback 0.5 applies)"
fi
