#pragma once
// Stage-2 similarity maps with bfloat16 products, for CPUs with AVX512-BF16.
//
// Stage 2 multiplies ~100 stored documents (~128 token vectors each) by the
// query's token vectors on every query. With fp32 FMAs that product costs more
// than the 5 ms budget of an F1 rerank; `vdpbf16ps` does 32 multiply-adds per
// instruction instead of 16 and reads half the bytes. Both sides are rounded to
// bf16 (8 significant bits) after the query rows are L2-normalized; the
// candidate norms are taken in fp32 from the stored values. Each cell is
// within 2·2^-8 of SimilarityMap::compute's (docs/VERIFIERS.md, "Map
// precision").
//
// Stored rows are read in their own encoding (fp32, fp16 or int8 with a
// per-vector scale), so nothing is decoded to fp32 in memory first.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "verify/similarity_map.hpp"

namespace verity::verify {

enum class RowCodes : uint8_t { f32, f16, i8 };

// n rows of dim codes, row-major; `scales` (one per row) only for i8, where
// value = code · scale.
struct TokenRows {
  RowCodes codes = RowCodes::f32;
  const void* data = nullptr;
  const float* scales = nullptr;
  size_t n = 0;
};

// The CPU has AVX512-BF16 (and AVX512-BW/VL, which the kernel also uses).
bool bf16_maps_supported();

// Which instructions multiply: AVX512-BF16 dot products, or AMX tiles (Intel
// Sapphire Rapids and later), 16 × 16 sums per instruction. Both round the
// same inputs to bf16 and sum exact products in fp32; only the order of the
// sums differs (cells agree within about 1e-5).
enum class Bf16Products { avx512, amx };
// The CPU has AMX-BF16 and the OS lets this process use the tile registers
// (Linux asks for them once, arch_prctl; elsewhere false).
bool amx_supported();
// AMX where supported, unless $VERITY_KERNEL_ISA pins a path ("avx512" runs the
// AVX-512 instructions alone). Read once per process.
Bf16Products best_bf16_products();
std::string_view bf16_products_name(Bf16Products products);
// What stage 2 uses: bf16 maps when supported, unless $VERITY_MAP_PRECISION is
// "exact" (fp32 products everywhere). Any other value than "exact"/"fast" is a
// ConfigError naming the variable. Read once per process.
bool use_bf16_maps();

// Maps of one query [n_query × dim] against `count` candidates; view(c) must
// stay valid until the call returns and be thread-safe (candidates are split
// between the calling thread and the stage-2 helper, core/split_work.hpp).
// Throws ConfigError when the CPU lacks AVX512-BF16 (or AMX, when asked for)
// or the query has a non-finite value.
using RowsView = std::function<TokenRows(size_t candidate)>;
std::vector<SimilarityMap> similarity_maps_bf16(std::span<const float> query, size_t count,
                                                size_t dim, const RowsView& view,
                                                Bf16Products products = best_bf16_products());

}  // namespace verity::verify
