#!/usr/bin/env bash
# Configures build-asan/ (clang, ASan+UBSan on everything, libFuzzer harnesses) and
# builds the given ninja targets (default: everything). Used by fuzz.sh and sanitize.sh.
#   scripts/asan_build.sh [TARGET...]
# Env: ASAN_BUILD_DIR (default <repo>/build-asan), VERITY_BUILD_JOBS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${ASAN_BUILD_DIR:-$root/build-asan}"
jobs="${VERITY_BUILD_JOBS:-$(nproc)}"
bash "$root/scripts/setup.sh" --sanitizers
source "$root/scripts/sanitizer_env.sh"
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DVERITY_SANITIZE=address,undefined -DVERITY_FUZZ=ON -DVERITY_BUILD_BENCH=OFF >&2
fi
cmake --build "$dir" -j "$jobs" ${1:+--target "$@"} >&2
