#pragma once
// The verifiers' inner loops, vectorized with runtime dispatch: AVX-512F,
// AVX2+FMA, or portable C++ on any other CPU. Every kernel takes the ISA to
// run so tests can check each path the CPU has against the portable one;
// callers pass best_isa(). Plain C++ (no torch); uses core/cpu_features.hpp
// for the dispatch.
#include <cstddef>
#include <string_view>

#include "core/cpu_features.hpp"

namespace verity::verify::kernels {

using verity::Isa;
using verity::best_isa;
using verity::isa_name;
using verity::isa_supported;

// max_j values_j (m >= 1).
float max_value(const float* values, size_t m, Isa isa);

// Σ_j e_j · values_j / Σ_j e_j with e_j = exp(scale · (logits_j - max_k logits_k)):
// the softmax-weighted mean of `values` (m >= 1, scale > 0). The vector paths
// use a polynomial exp accurate to about 2 float ulps.
float softmax_mean(const float* logits, const float* values, size_t m, float scale, Isa isa);

// The same per column of n × m row-major matrices: for j < m,
// out[j] = softmax_mean over i of (logits[i·m + j], values[i·m + j]). Reads
// rows in order, so short columns cost no per-column call.
void column_softmax_mean(const float* logits, const float* values, size_t n, size_t m, float scale, float* out,
                         Isa isa);

// For t < rows: y[t·h + o] = act(bias[o] + Σ_{c<k} x[t·ldx + c] · w[c·h + o]),
// act = relu or identity. w is k × h, row-major (a torch Linear's weight
// transposed). Rows of x may overlap (ldx < k): a width-3 convolution over
// tokens is one call on the padded token rows.
void affine_rows(const float* x, size_t rows, size_t ldx, size_t k, const float* w, const float* bias, size_t h,
                 bool relu, float* y, Isa isa);

}  // namespace verity::verify::kernels
