#!/usr/bin/env bash
# Builds the libFuzzer harnesses (scripts/asan_build.sh: clang, ASan+UBSan) and runs
# each for SECONDS (default 60; with --cpu, SECONDS of CPU time per target). Options
# after SECONDS go to scripts/fuzz.py (--only a,b  --jobs N  --out REPORT.json  --nice N).
#   scripts/fuzz.sh [SECONDS] [--cpu] [--only NAMES] [--jobs N]
# Exit 1 when a target finds a crash; its input is in build-asan/fuzz-artifacts/<target>/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/asan_build.sh" fuzzers
source "$root/scripts/sanitizer_env.sh"
exec /usr/bin/python3 "$root/scripts/fuzz.py" "$@"
