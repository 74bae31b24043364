#!/usr/bin/env bash
# Sanitizer runs (docs/RELIABILITY.md):
#   asan  build-asan/ (clang, ASan+UBSan on everything verity compiles) runs the full
#         ctest suite;
#   tsan  build-tsan/ (clang, TSan) runs the concurrent code's tests: the server, the
#         search pipeline and the semantic cache.
# libtorch, Link Grammar and the other prebuilt libraries are not instrumented.
#   scripts/sanitize.sh [asan|tsan|all] [extra ctest args]   (default all)
# Env: VERITY_BUILD_JOBS; ASAN_BUILD_DIR / TSAN_BUILD_DIR.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
what="${1:-all}"
[[ $# -gt 0 ]] && shift
case "$what" in asan|tsan|all) ;; *) echo "usage: $0 [asan|tsan|all] [ctest args]" >&2; exit 2 ;; esac
jobs="${VERITY_BUILD_JOBS:-$(nproc)}"
bash "$root/scripts/setup.sh" --sanitizers
source "$root/scripts/sanitizer_env.sh"
export VERITY_REQUIRE_MODELS="${VERITY_REQUIRE_MODELS:-1}"
# Tests under ASan/TSan run several times slower; ctest's own per-test limit applies.
timeout_s="${VERITY_SANITIZE_TEST_TIMEOUT:-3000}"

# The concurrent code's tests.
TSAN_TESTS='^(ServeTest|RequestFraming|PipelineTest|PipelineParts|CacheTest|StoreTest|NamespaceIndex|CacheServeTest)\.'

status=0
if [[ "$what" == asan || "$what" == all ]]; then
  bash "$root/scripts/asan_build.sh" verity_test_suite
  echo "sanitize: ASan+UBSan, full ctest suite" >&2
  (cd "${ASAN_BUILD_DIR:-$root/build-asan}" && ctest --output-on-failure --timeout "$timeout_s" -j "$jobs" "$@") ||
    status=1
fi
if [[ "$what" == tsan || "$what" == all ]]; then
  dir="${TSAN_BUILD_DIR:-$root/build-tsan}"
  if [[ ! -f "$dir/build.ninja" ]]; then
    CC=clang CXX=clang++ cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
      -DVERITY_SANITIZE=thread -DVERITY_BUILD_BENCH=OFF >&2
  fi
  cmake --build "$dir" -j "$jobs" --target verity serve_tests search_tests cache_tests >&2
  echo "sanitize: TSan, $TSAN_TESTS" >&2
  (cd "$dir" && ctest --output-on-failure --timeout "$timeout_s" -j "$jobs" -R "$TSAN_TESTS" "$@") || status=1
fi
exit $status
