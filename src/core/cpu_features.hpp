#pragma once
// CPU features: the SIMD paths that the hand-written kernels dispatch on at
// run time (verify/kernels.hpp, encode/packed_linear.hpp), and features that
// not every compiler's __builtin_cpu_supports knows (clang 14 lacks "f16c"),
// read from CPUID directly. VERITY_KERNEL_ISA pins a slower path.
#include <cpuid.h>

#include <cstdlib>
#include <string_view>

#include "core/error.hpp"

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

// The path a VERITY_KERNEL_ISA value asks for: unset, empty or "auto" is the
// fastest this CPU runs; "avx512", "avx2" or "portable" pins that path, so a
// fleet of mixed CPUs can round alike and an AVX2 figure can be reproduced on
// an AVX-512 machine. A path this CPU lacks, or another word, is a ConfigError.
inline Isa isa_from_setting(const char* value) {
  const std::string_view v = value ? value : "";
  if (v.empty() || v == "auto")
    return isa_supported(Isa::avx512) ? Isa::avx512 : isa_supported(Isa::avx2) ? Isa::avx2 : Isa::portable;
  for (Isa isa : {Isa::avx512, Isa::avx2, Isa::portable})
    if (v == isa_name(isa)) {
      VERITY_CHECK(isa_supported(isa), ConfigError, "VERITY_KERNEL_ISA=", v, ": this CPU has no ", v, " path");
      return isa;
    }
  throw ConfigError(cat("VERITY_KERNEL_ISA='", v, "': expected auto, avx512, avx2 or portable"));
}

// The path every hand-written kernel runs: $VERITY_KERNEL_ISA, by default the
// fastest this CPU runs (read once).
inline Isa best_isa() {
  static const Isa best = isa_from_setting(std::getenv("VERITY_KERNEL_ISA"));
  return best;
}

// Whether $VERITY_KERNEL_ISA names a path rather than leaving the choice to
// the CPU (unset, empty or "auto"): a pinned path runs its own instructions
// alone, without extensions beside it (AMX tiles).
inline bool isa_pinned() {
  static const bool pinned = [] {
    const char* v = std::getenv("VERITY_KERNEL_ISA");
    return v && *v && std::string_view(v) != "auto";
  }();
  return pinned;
}

// F16C: the half <-> float conversion instructions (CPUID.1:ECX bit 29).
inline bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

}  // namespace verity
