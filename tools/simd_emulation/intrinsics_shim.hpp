#pragma once
// Included in place of <immintrin.h> by scripts/simd_emulation_check.sh: the
// x86 intrinsics through SIMDe's portable implementations (Debian
// libsimde-dev), so the AVX2 and AVX-512 paths of the kernels run, and are
// tested, on a CPU without those instructions. SIMDe 0.7 lacks a few AVX-512
// intrinsics the kernels use; they are written here lane by lane.
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx2.h>
#include <simde/x86/avx512.h>
#include <simde/x86/fma.h>
#include <simde/x86/svml.h>

#include <cstdint>

#ifndef __mmask16
#define __mmask16 simde__mmask16
#endif
#ifndef _MM_FROUND_NO_EXC
#define _MM_FROUND_NO_EXC SIMDE_MM_FROUND_NO_EXC
#endif

namespace verity_simd_emulation {
inline void mask_storeu_ps(float* p, simde__mmask16 m, simde__m512 v) {
  float lanes[16];
  simde_mm512_storeu_ps(lanes, v);
  for (int i = 0; i < 16; ++i)
    if (m & (1u << i)) p[i] = lanes[i];
}
inline simde__m512 maskz_loadu_ps(simde__mmask16 m, const float* p) {
  float lanes[16];
  for (int i = 0; i < 16; ++i) lanes[i] = (m & (1u << i)) ? p[i] : 0.0f;
  return simde_mm512_loadu_ps(lanes);
}
inline float reduce_max_ps(simde__m512 v) {
  float lanes[16];
  simde_mm512_storeu_ps(lanes, v);
  float m = lanes[0];
  for (int i = 1; i < 16; ++i) m = lanes[i] > m ? lanes[i] : m;
  return m;
}
inline float reduce_add_ps(simde__m512 v) {
  float lanes[16];
  simde_mm512_storeu_ps(lanes, v);
  float s = 0;
  for (int i = 0; i < 16; ++i) s += lanes[i];
  return s;
}
inline simde__m512i cvttps_epi32(simde__m512 v) {
  float lanes[16];
  int32_t out[16];
  simde_mm512_storeu_ps(lanes, v);
  for (int i = 0; i < 16; ++i) out[i] = int32_t(lanes[i]);
  return simde_mm512_loadu_si512(out);
}
}  // namespace verity_simd_emulation

#define _mm512_mask_storeu_ps verity_simd_emulation::mask_storeu_ps
#define _mm512_maskz_loadu_ps verity_simd_emulation::maskz_loadu_ps
#define _mm512_reduce_max_ps verity_simd_emulation::reduce_max_ps
#define _mm512_reduce_add_ps verity_simd_emulation::reduce_add_ps
#define _mm512_cvttps_epi32 verity_simd_emulation::cvttps_epi32
