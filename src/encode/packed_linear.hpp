#pragma once
// A dense layer y = x · Wᵀ + b with W packed once into 16-column panels, for
// the few-row products of encoding one short text, where a general sgemm
// spends much of its time packing the weights on every call. Register-blocked
// kernels for AVX-512F (one register per panel row) and AVX2/FMA (two),
// portable loops otherwise, chosen at run time (core/cpu_features.hpp); the
// paths differ only in float rounding (summation order).
#include <cstddef>
#include <span>
#include <vector>

#include "core/cpu_features.hpp"

namespace verity::encode {

class PackedLinear {
 public:
  static constexpr size_t kPanel = 16;  // output columns per packed panel

  PackedLinear() = default;
  // weight [out, in] row-major (torch's Linear layout), bias [out].
  PackedLinear(std::span<const float> weight, std::span<const float> bias, size_t out, size_t in);

  size_t in() const { return in_; }
  size_t out() const { return out_; }
  size_t panels() const { return (out_ + kPanel - 1) / kPanel; }
  bool empty() const { return out_ == 0; }

  // y[rows, out] = x[rows, in] · Wᵀ + b, ReLU applied when relu, for the
  // output panels [panel_begin, panel_end) only (callers split panels over
  // threads; panels write disjoint columns). x and y row-major, not aliased.
  // isa: the path to run (tests pass each one the CPU has).
  void apply(const float* x, size_t rows, float* y, size_t panel_begin, size_t panel_end, bool relu = false,
             Isa isa = best_isa()) const;

  // Which kernel apply() uses on this CPU: "avx512", "avx2" or "portable".
  static const char* kernel();

 private:
  size_t in_ = 0, out_ = 0;
  std::vector<float> panels_;  // [panels][in][kPanel], columns past out_ zero
  std::vector<float> bias_;    // [panels * kPanel], zero padded
};

}  // namespace verity::encode
