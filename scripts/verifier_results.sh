#!/usr/bin/env bash
# Verifier results table (issue 5): rows none, F0-F2 (no parameters: one
# nearmiss-eval run each, the same for every seed), F3/F4 × frozen/end2end
# (3 seeds each); columns test pairwise accuracy per edit type, mean ± std,
# and training examples/s; with NDCG=1 also nDCG@10 on SciFact and Cranfield
# when the verifier alone reranks hybrid stage 1's top 100.
#   usage: scripts/verifier_results.sh [BUILD_DIR] [NM_DATA_DIR] [OUT_DIR]
# Env: SEEDS="1 2 3", CONFIGS="f3:frozen f4:frozen f3:end2end f4:end2end",
#      BASELINES="none f0 f1 f2" (BASELINES= to skip),
#      EPOCHS=8, PER_TYPE=400 (balanced epochs: triples per type per epoch),
#      WIDTH=32 (training map width), MAX_TRAIN=0 (near-miss train cap, 0 = all),
#      E2E_EPOCHS=1, E2E_PER_TYPE=60, E2E_MAX_TRAIN=1000 (end-to-end rows run a
#      smaller budget: the sampled near-miss pool is also what they re-encode),
#      NDCG=0 (1: add the reranking columns; ~10 min per verifier on 2 cores),
#      TOKEN_CACHE=FILE (frozen rows: train-verifier --token-cache, encode once).
# Every run's JSON stays in OUT_DIR; finished runs are skipped on a rerun.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build}"
nm="${2:-$repo/data/nearmiss}"  # scripts/nearmiss_build.sh writes it there
out="${3:-/work/tv-results}"
shared="${VERITY_SHARED_DATA:-$repo/../shared/data}"
mkdir -p "$out"
seeds="${SEEDS:-1 2 3}"
configs="${CONFIGS:-f3:frozen f4:frozen f3:end2end f4:end2end}"
baselines="${BASELINES-none f0 f1 f2}"

# Writes $2 from the stdout of the rest of the command, atomically; skips if $2 exists.
run_to() {
  local dest="$1"; shift
  [[ -s "$dest" ]] && return 0
  echo "+ $*" >&2
  "$@" > "$dest.tmp"
  mv "$dest.tmp" "$dest"
}

ndcg() {  # ndcg SPEC TAG
  [[ "${NDCG:-0}" == 1 ]] || return 0
  run_to "$out/$2.eval.json" "$build/verity" eval --dataset "$shared/beir/scifact" \
    --dataset "$shared/beir/cranfield" --retriever hybrid --candidates 100 --verifier "$1" \
    --combine rerank --encoder "${3:-use-lite}" --json
}

for v in $baselines; do
  run_to "$out/$v.json" "$build/verity" nearmiss-eval --data "$nm/test.jsonl" --verifier "$v" --json
  [[ "$v" == none ]] || ndcg "$v" "$v"
done

for config in $configs; do
  kind="${config%%:*}"; mode="${config##*:}"
  for seed in $seeds; do
    tag="$kind-$mode-seed$seed"
    extra=()
    [[ "$kind" == f4 ]] && extra+=(--vit-dim 128 --vit-layers 2 --vit-heads 4 --vit-mlp 256)
    [[ "$mode" == frozen && -n "${TOKEN_CACHE:-}" ]] && extra+=(--token-cache "$TOKEN_CACHE")
    if [[ "$mode" == end2end ]]; then
      extra+=(--epochs "${E2E_EPOCHS:-1}" --per-type "${E2E_PER_TYPE:-60}" --patience 0
              --max-train "${E2E_MAX_TRAIN:-1000}")
    else
      extra+=(--epochs "${EPOCHS:-8}" --per-type "${PER_TYPE:-400}" --patience 2 --max-train "${MAX_TRAIN:-0}")
    fi
    run_to "$out/$tag.json" "$build/verity" train-verifier --train "$nm/train.jsonl" --dev "$nm/dev.jsonl" \
      --test "$nm/test.jsonl" --encoder use-lite --mode "$mode" --verifier "$kind" --loss pairwise \
      --batch-size 32 --lr 1e-3 --encoder-lr 1e-5 --train-map-width "${WIDTH:-32}" \
      --seed "$seed" "${extra[@]}" --out "$out/$tag.vvrf" --json
    encoder=use-lite
    [[ "$mode" == end2end ]] && encoder="$out/$tag.vvrf.encoder"
    ndcg "$kind:$out/$tag.vvrf" "$tag" "$encoder"
  done
done

python3 - "$out" "$baselines" $configs <<'PY'
import json, statistics, sys, glob, os
out, baselines, configs = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
def ms(xs, digits=3, one=" (1 seed)"):
    if not xs: return "not run"
    if len(xs) == 1: return f"{xs[0]:.{digits}f}{one}"
    return f"{statistics.mean(xs):.{digits}f} ± {statistics.stdev(xs):.{digits}f}"
def ndcgs(tag_glob):
    got = {"scifact": [], "cranfield": []}
    for p in sorted(glob.glob(f"{out}/{tag_glob}.eval.json")):
        for name, d in json.load(open(p))["datasets"].items():
            if name in got: got[name].append(d["ndcg@10"])
    return got
rows, types = [], set()
for v in baselines:
    p = f"{out}/{v}.json"
    if not os.path.exists(p): continue
    r = json.load(open(p))
    per = {t: [x["pairwise_acc"]] for t, x in r["by_type"].items()}
    types |= set(per)
    rows.append((v, "—", "no parameters (1 run)", per, [r["pairwise_acc"]], [], ndcgs(v)))
for config in configs:
    kind, mode = config.split(":")
    runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{kind}-{mode}-seed*.json"))
            if not p.endswith(".eval.json")]
    per = {}
    for r in runs:
        for t, x in r.get("test_pairwise_acc", {}).get("by_type", {}).items():
            per.setdefault(t, []).append(x["accuracy"])
    types |= set(per)
    rows.append((kind, mode, f"{len(runs)} seeds", per, [r["test_pairwise_acc"]["accuracy"] for r in runs],
                 [r["examples_per_s"] for r in runs], ndcgs(f"{kind}-{mode}-seed*")))
types = sorted(types)
print("| verifier | mode | runs | " + " | ".join(types) + " | all | nDCG@10 SciFact | nDCG@10 Cranfield | train ex/s |")
print("|---|---|---|" + "---|" * len(types) + "---|---|---|---|")
for name, mode, n, per, acc, eps, nd in rows:
    one = "" if mode == "—" else " (1 seed)"  # parameter-free rows: one deterministic run
    print(f"| {name} | {mode} | {n} | " + " | ".join(ms(per.get(t, []), one=one) for t in types) +
          f" | {ms(acc, one=one)} | {ms(nd['scifact'], 4, one)} | {ms(nd['cranfield'], 4, one)} | {ms(eps, 1) if eps else '—'} |")
PY
