#!/usr/bin/env bash
# Configures and builds verity (Release) into build/: everything, or the targets named.
#   scripts/build.sh [--target T ...]   (arguments go to `cmake --build`)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${VERITY_BUILD_JOBS:-$(nproc)}"
if [ ! -f "$root/build/build.ninja" ]; then
  cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
fi
cmake --build "$root/build" -j "$jobs" "$@" >&2
