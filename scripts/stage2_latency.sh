#!/usr/bin/env bash
# The two-stage pipeline's latency on SciFact test for several verifiers, run in turn so that
# each round sees the same load: one line per run (round, verifier, kernel path, nDCG@10, p50,
# p95, stage-2 p50 in ms). This VM's latencies drift between runs, so compare within a round.
#
#   scripts/stage2_latency.sh [--rounds N] [--binary PATH] [--avx512] [--avx2] VERIFIER...
#     --avx512: also run each verifier on the AVX-512 path pinned (VERITY_KERNEL_ISA=avx512:
#               where the CPU has AMX tiles, the maps' products without them).
#     --avx2: also run each verifier on the kernels' AVX2 path (VERITY_KERNEL_ISA=avx2).
#   e.g. scripts/stage2_latency.sh --avx2 f1 default f5:OTHER.valn
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds=3 binary="$root/build/verity" avx512=0 avx2=0 verifiers=()
while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --avx512) avx512=1; shift ;;
    --avx2) avx2=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "stage2_latency.sh: unknown option $1" >&2; exit 2 ;;
    *) verifiers+=("$1"); shift ;;
  esac
done
((${#verifiers[@]})) || { echo "stage2_latency.sh: name at least one verifier" >&2; exit 2; }
data="${VERITY_DATA:-$root/../shared/data}/beir/scifact"
[[ -d "$data" ]] || { echo "stage2_latency.sh: no SciFact at $data" >&2; exit 1; }
paths=(native); ((avx512)) && paths+=(avx512); ((avx2)) && paths+=(avx2)
echo "# $(date -u '+%F %T UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" >&2
for ((r = 1; r <= rounds; ++r)); do
  for path in "${paths[@]}"; do
    for v in "${verifiers[@]}"; do
      if [[ $path == native ]]; then isa=(env); else isa=(env VERITY_KERNEL_ISA=$path); fi
      "${isa[@]}" "$binary" eval --dataset "$data" --retriever hybrid --verifier "$v" --json --quiet |
        /usr/bin/python3 -c 'import json, sys
d = json.load(sys.stdin)
print(*sys.argv[1:], round(d["ndcg@10"], 4), *(round(d[k], 2) for k in ("latency_ms_p50", "latency_ms_p95", "stage2_latency_ms_p50")))' "$r" "$v" "$path"
    done
  done
done
echo "# $(date -u '+%F %T UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
