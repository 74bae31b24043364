#!/usr/bin/env bash
# Training throughput (examples/s) and peak resident memory of
# `verity train-encoder` for each backbone at the default batch size (32), on
# SciFact-train qrels triples with BM25 negatives (`verity pairs --source qrels`).
# BERT is a randomly initialized MiniLM-L6-shaped model (scripts/make_random_bert.py):
# no pretrained BERT checkpoint is installed, and speed depends only on the shape.
# No model is written (--out omitted), so the figures cover loading + training.
#
# usage: scripts/bench_encoder_training.sh [BUILD_DIR] [WORK_DIR]
#   env: STEPS_USE_LITE (default 5), STEPS_GLOVE (50), STEPS_BERT (3), BERT_MAX_LENGTH (128), THREADS (2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
work="${2:-/tmp/verity-encoder-bench}"
verity="$build/verity"
mkdir -p "$work"
[ -f "$work/train.jsonl" ] ||
  "$verity" pairs --source qrels --dataset "$root/../shared/data/beir/scifact" --split train --seed 1 \
    --out "$work/train.jsonl" --quiet
[ -f "$work/minilm-random/config.json" ] || /usr/bin/python3 "$root/scripts/make_random_bert.py" "$work/minilm-random"

run() {  # name encoder steps extra-args...
  local name="$1" encoder="$2" steps="$3"
  shift 3
  nice -n 5 "$verity" train-encoder --encoder "$encoder" --train "$work/train.jsonl" --max-steps "$steps" \
    --threads "${THREADS:-2}" --quiet --json "$@" > "$work/$name.json"
  /usr/bin/python3 - "$name" "$work/$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
print(f"{sys.argv[1]:9s} steps={r['steps']:3d} batch={r['batch_size']} params={r['trainable_parameters']:>9,d} "
      f"examples/s={r['examples_per_s']:8.2f} peak_rss_mb={r['peak_rss_mb']:7.0f} final_loss={r['final_loss']:.3f}")
PY
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(lscpu | sed -n 's/^Model name: *//p') nproc=$(nproc) git=$(git -C "$root" rev-parse --short HEAD)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run use-lite use-lite "${STEPS_USE_LITE:-5}"
run glove glove "${STEPS_GLOVE:-50}" --lr 1e-3
run bert "bert:$work/minilm-random" "${STEPS_BERT:-3}" --max-length "${BERT_MAX_LENGTH:-128}"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
