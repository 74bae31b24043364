#!/usr/bin/env bash
# nDCG@10 of verifiers on SciFact and Cranfield test (hybrid stage 1, weighted
# fusion 0.2, K = 100 candidates, USE-lite): stage 1 alone; every run of
# the F3 seed ensemble in the two-stage default (0.8 · stage 1 +
# 0.2 · verifier) and as the only ranker (--combine rerank); F0-F2 as the only
# ranker; and the installed default (assets/verifiers/f3-ensemble.vens, the seed
# ensemble) both ways. Then prints the issue-5 table (test pairwise accuracy per
# type from each run's default.json and the default's, nDCG@10 mean ± std per width).
#   usage: scripts/verifier_ndcg.sh [BUILD_DIR] [RUNS_DIR] [OUT_DIR]
# Finished evaluations are kept in OUT_DIR and skipped on a rerun.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build}"
runs="${2:-$repo/out/default-verifier-runs}"
out="${3:-$runs/evals}"
shared="${VERITY_SHARED_DATA:-$repo/../shared/data}"
mkdir -p "$out"
common=(--dataset "$shared/beir/scifact" --dataset "$shared/beir/cranfield" --retriever hybrid
        --candidates 100 --encoder use-lite --json --quiet)
run() {
  local dest="$1"; shift
  [ -s "$dest" ] && return 0
  echo "+ verity eval $* -> $dest" >&2
  "$build/verity" eval "${common[@]}" "$@" > "$dest.tmp"
  mv "$dest.tmp" "$dest"
}
run "$out/stage1.json" --verifier none
for dir in "$runs"/w*-seed*/; do
  name="$(basename "$dir")"
  run "$out/$name.json" --verifier "f3:$dir/default.vvrf"
done
for dir in "$runs"/w*-seed*/; do
  name="$(basename "$dir")"
  run "$out/$name-rerank.json" --verifier "f3:$dir/default.vvrf" --combine rerank
done
for v in f0 f1 f2; do run "$out/$v-rerank.json" --verifier "$v" --combine rerank; done
default="$repo/assets/verifiers/f3-ensemble.vens"
if [ -s "$default" ]; then
  run "$out/default.json" --verifier default
  run "$out/default-rerank.json" --verifier default --combine rerank
fi

python3 - "$runs" "$out" "$repo/assets/verifiers/default.json" <<'PY'
import glob, json, os, statistics, sys
runs, out, default_record = sys.argv[1], sys.argv[2], sys.argv[3]
def ndcg(path):
    j = json.load(open(path))
    per = {name: d["ndcg@10"] for name, d in j["datasets"].items()}
    return per["scifact"], per["cranfield"]
def ms(xs):
    return f"{xs[0]:.4f}" if len(xs) == 1 else f"{statistics.mean(xs):.4f} ± {statistics.stdev(xs):.4f}"
types = ["negation", "numeric", "role_swap", "spatial"]
s1 = ndcg(f"{out}/stage1.json")
print(f"stage 1: SciFact {s1[0]:.4f}, Cranfield {s1[1]:.4f}")
print("| verifier | runs | " + " | ".join(types) + " | SciFact two-stage | Cranfield two-stage | SciFact rerank | Cranfield rerank |")
print("|---|---|" + "---:|" * (len(types) + 4))
for v in ["f0", "f1", "f2"]:
    r = ndcg(f"{out}/{v}-rerank.json")
    print(f"| {v} | 1 | " + " | ".join(["see above"] * len(types)) + f" | | | {r[0]:.4f} | {r[1]:.4f} |")
groups = {}
for path in sorted(glob.glob(f"{runs}/w*-seed*/default.json")):
    name = os.path.basename(os.path.dirname(path))
    groups.setdefault(name.split("-")[0], []).append(name)
for width, names in groups.items():
    acc = {t: [json.load(open(f"{runs}/{n}/default.json"))["test_pairwise_acc"]["by_type"][t]["accuracy"] for n in names] for t in types}
    two = [ndcg(f"{out}/{n}.json") for n in names]
    rr = [ndcg(f"{out}/{n}-rerank.json") for n in names]
    cells = [ms(acc[t]) for t in types] + [ms([x[0] for x in two]), ms([x[1] for x in two]),
                                           ms([x[0] for x in rr]), ms([x[1] for x in rr])]
    print(f"| f3 frozen, mean_max, width {width[1:]} | {len(names)} seeds | " + " | ".join(cells) + " |")
    for n in names:
        a = json.load(open(f"{runs}/{n}/default.json"))["test_pairwise_acc"]["by_type"]
        t2, r2 = ndcg(f"{out}/{n}.json"), ndcg(f"{out}/{n}-rerank.json")
        print(f"| &nbsp; {n} | 1 | " + " | ".join(f"{a[t]['accuracy']:.3f}" for t in types) +
              f" | {t2[0]:.4f} | {t2[1]:.4f} | {r2[0]:.4f} | {r2[1]:.4f} |")
if os.path.exists(f"{out}/default.json") and os.path.exists(default_record):
    rec = json.load(open(default_record))
    a = rec["test_pairwise_acc"]["by_type"]
    t2, r2 = ndcg(f"{out}/default.json"), ndcg(f"{out}/default-rerank.json")
    print(f"| **default: ensemble of {len(rec['members'])}** | {len(rec['members'])} seeds | " +
          " | ".join(f"**{a[t]:.3f}**" for t in types) +
          f" | {t2[0]:.4f} | {t2[1]:.4f} | {r2[0]:.4f} | {r2[1]:.4f} |")
PY
