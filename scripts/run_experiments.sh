#!/usr/bin/env bash
# Runs the committed experiment configs (configs/*.json) in order; each is
# resumable (finished runs are skipped on a rerun). Inputs: scripts/experiment_data.sh.
# Usage: scripts/run_experiments.sh [VERITY] [CONFIG...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
verity="${1:-$root/build/verity}"
shift || true
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(tradeoff-glove transfer-glove tradeoff-use-lite)
mkdir -p "$root/out/exp/logs"
for name in "${configs[@]}"; do
  kind="${name%%-*}"
  echo "== $name ($kind) $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  nice -n 5 "$verity" experiment "$kind" --config "$root/configs/$name.json" --json \
    > "$root/out/exp/logs/$name.json" 2> "$root/out/exp/logs/$name.err"
  echo "   done $(date -u +%FT%TZ)"
done
