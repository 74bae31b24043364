#!/usr/bin/env bash
# Runs the kernels' AVX2 and AVX-512 paths on any x86 CPU: compiles the
# kernel sources (verify/kernels.cpp, encode/packed_linear.cpp) with the
# intrinsics routed through SIMDe's portable implementations
# (tools/simd_emulation/intrinsics_shim.hpp) and every path reported as
# supported, then runs their tests (tests/verify/kernels_test.cpp,
# tests/encode/packed_linear_test.cpp). Slow code, same results: a
# check of the vector paths' logic where the CPU cannot run them natively.
# Exit 77 (ctest: skipped) when SIMDe is not installed (scripts/setup.sh
# installs libsimde-dev).
#   usage: scripts/simd_emulation_check.sh [WORK_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$root/build/simd-emulation}"
if [ ! -f /usr/include/simde/x86/avx512.h ]; then
  echo "simd emulation check: SIMDe headers missing (apt-get install libsimde-dev); skipped" >&2
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/src" "$work/override/core"
python3 - "$root" "$work" <<'PY'
import re, sys
root, work = sys.argv[1:]
# Every path "supported": the emulated intrinsics run on any CPU.
features = open(f"{root}/src/core/cpu_features.hpp").read()
marker = "inline bool isa_supported(Isa isa) {"
if marker not in features:
    sys.exit("simd emulation check: isa_supported() not found in src/core/cpu_features.hpp")
features = features.replace(marker, "inline bool isa_supported(Isa) { return true; }\ninline bool isa_supported_natively(Isa isa) {")
open(f"{work}/override/core/cpu_features.hpp", "w").write(features)
for name in ("verify/kernels.cpp", "encode/packed_linear.cpp"):
    text = open(f"{root}/src/{name}").read()
    if "#include <immintrin.h>" not in text:
        sys.exit(f"simd emulation check: src/{name} no longer includes <immintrin.h>")
    text = text.replace("#include <immintrin.h>", f'#include "{root}/tools/simd_emulation/intrinsics_shim.hpp"')
    text = re.sub(r'__attribute__\(\(target\("[^"]*"\)\)\)', "", text)  # plain code now: no ISA attributes
    open(f"{work}/src/{name.replace('/', '_')}", "w").write(text)
PY
flags=(-std=gnu++20 -O1 -I"$work/override" -I"$root/src")
c++ "${flags[@]}" -c "$work/src/verify_kernels.cpp" -o "$work/kernels.o"
c++ "${flags[@]}" -c "$work/src/encode_packed_linear.cpp" -o "$work/packed_linear.o"
c++ "${flags[@]}" "$root/tests/verify/kernels_test.cpp" "$root/tests/encode/packed_linear_test.cpp" \
  "$work/kernels.o" "$work/packed_linear.o" -lgtest -lgtest_main -pthread -o "$work/emulated_tests"
"$work/emulated_tests"
