#!/usr/bin/env bash
# Trains one run of the default verifier's recipe: F3, frozen USE-lite
# maps, near-miss triples mixed with SciFact *train* BM25 triples, early stop on dev.
# Recipe (docs/TRAINING.md): per-type balanced epochs (PER_TYPE triples of every
# type, retrieval included, per epoch), training maps cropped to WIDTH tokens,
# mean+max pooling, best epoch by the dev accuracy averaged over types, token
# vectors cached in TOKEN_CACHE across runs. Training data: NM_DATA_DIR/train.jsonl
# plus NM_DATA_DIR/extra-*/train.jsonl when present (scripts/nearmiss_extra.sh).
# Writes default.vvrf and default.json (the command, data hashes, accuracies) atomically
# enough: both are produced in a temp dir and moved into place at the end.
#   usage: scripts/train_default_verifier.sh [BUILD_DIR] [NM_DATA_DIR]
# Env: EPOCHS, PATIENCE, PER_TYPE, WIDTH, POOL, DEV_METRIC, MAX_TRAIN, RETRIEVAL_RATIO, SEED, TOKEN_CACHE;
# CKPT_DIR=D keeps checkpoints in D and RESUME=1 continues from D; OUT=DIR writes
# DIR/default.vvrf + DIR/default.json (default out/verifier-run). The committed default,
# an ensemble of such runs, is installed by scripts/select_default_verifier.sh.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build}"
nm="${2:-$repo/data/nearmiss}"  # scripts/nearmiss_build.sh writes it there
scifact="${VERITY_SHARED_DATA:-$repo/../shared/data}/beir/scifact"
out="${OUT:-$repo/out/verifier-run}"
mkdir -p "$out"
label="$out/default.vvrf"
tmp="$(mktemp -d "$out/.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

train=(--train "$nm/train.jsonl")
for extra in "$nm"/extra-*/train.jsonl; do
  [ -f "$extra" ] && train+=(--train "$extra")
done

cmd=("$build/verity" train-verifier
  "${train[@]}" --dev "$nm/dev.jsonl" --test "$nm/test.jsonl"
  --retrieval "$scifact" --retrieval-ratio "${RETRIEVAL_RATIO:-0.3}" --retrieval-top 20
  --encoder use-lite --mode frozen --verifier f3 --loss pairwise
  --epochs "${EPOCHS:-40}" --patience "${PATIENCE:-4}" --batch-size 32 --lr 1e-3 --seed "${SEED:-1}"
  --per-type "${PER_TYPE:-800}" --train-map-width "${WIDTH:-32}" --max-train "${MAX_TRAIN:-0}"
  --f3-pool "${POOL:-mean_max}" --dev-metric "${DEV_METRIC:-macro}"
  ${TOKEN_CACHE:+--token-cache "$TOKEN_CACHE"}
  --checkpoint-dir "${CKPT_DIR:-$tmp/ckpt}" ${RESUME:+--resume} --out "$tmp/default.vvrf" --json)
echo "+ ${cmd[*]}" >&2
"${cmd[@]}" > "$tmp/summary.json"

python3 - "$tmp/summary.json" "$tmp/default.json" "$nm" "$label" <<'PY'
import hashlib, json, subprocess, sys
summary = json.load(open(sys.argv[1]))
nm = sys.argv[3]
def sha256(p):
    return hashlib.sha256(open(p, "rb").read()).hexdigest()
summary["sha256"] = {f"{nm}/{s}.jsonl": sha256(f"{nm}/{s}.jsonl") for s in ("train", "dev", "test")}
for f in summary["inputs"]["train"]["files"]:
    summary["sha256"][f["path"]] = sha256(f["path"])
summary["git_sha"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
summary["file"] = sys.argv[4]
json.dump(summary, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
mv "$tmp/default.vvrf" "$out/default.vvrf"
mv "$tmp/default.json" "$out/default.json"
echo "wrote $out/default.vvrf and $out/default.json" >&2
