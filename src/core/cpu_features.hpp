#pragma once
// CPU features: the SIMD paths that the hand-written kernels dispatch on at
// run time (verify/kernels.hpp, encode/packed_linear.hpp), and features that
// not every compiler's __builtin_cpu_supports knows (clang 14 lacks "f16c"),
// read from CPUID directly.
#include <cpuid.h>

#include <string_view>

namespace verity {

// A kernel's instruction-set path. Every kernel takes the path to run, so
// tests can check each one this CPU has; callers pass best_isa().
enum class Isa { portable, avx2, avx512 };

// Whether this CPU runs that path (avx2 means AVX2 with FMA; avx512, AVX-512F).
inline bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::portable:
      return true;
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f");
  }
  return false;
}

// The fastest path this CPU runs (read once).
inline Isa best_isa() {
  static const Isa best = isa_supported(Isa::avx512) ? Isa::avx512
                          : isa_supported(Isa::avx2) ? Isa::avx2
                                                     : Isa::portable;
  return best;
}

inline std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::portable:
      return "portable";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

// F16C: the half <-> float conversion instructions (CPUID.1:ECX bit 29).
inline bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

}  // namespace verity
