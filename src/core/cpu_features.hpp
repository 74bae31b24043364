#pragma once
// CPU features that not every compiler's __builtin_cpu_supports knows (clang 14
// lacks "f16c"), read from CPUID directly.
#include <cpuid.h>

namespace verity {

// F16C: the half <-> float conversion instructions (CPUID.1:ECX bit 29).
inline bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

}  // namespace verity
