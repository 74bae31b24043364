// bf16 similarity maps (see bf16_maps.hpp). Rows are converted to bf16 with a
// stride padded to 32 (one vdpbf16ps step) and zero-filled, so any dim works.
#include "verify/bf16_maps.hpp"

// GCC 12's AVX-512 headers initialize their "undefined" vectors from themselves.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/split_work.hpp"

namespace verity::verify {
namespace {

constexpr size_t kStep = 32;  // bf16 values per vdpbf16ps

size_t padded(size_t dim) { return (dim + kStep - 1) / kStep * kStep; }

#define VERITY_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,f16c")))

// 16 values of row r from column k (lanes outside m are 0), as fp32.
VERITY_BF16_TARGET inline __m512 load16(const TokenRows& rows, size_t r, size_t dim, size_t k,
                                        __mmask16 m) {
  switch (rows.codes) {
    case RowCodes::f32:
      return _mm512_maskz_loadu_ps(m, static_cast<const float*>(rows.data) + r * dim + k);
    case RowCodes::f16:
      return _mm512_cvtph_ps(
          _mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(rows.data) + r * dim + k));
    case RowCodes::i8:
      return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(
                               m, static_cast<const int8_t*>(rows.data) + r * dim + k))),
                           _mm512_set1_ps(rows.scales[r]));
  }
  return _mm512_setzero_ps();
}

// Byte offset of the codes four rows ahead of row r, column k: stored rows
// are read once, in order, and the hardware prefetcher stops at each 4 KB page.
inline size_t prefetch_offset(const TokenRows& rows, size_t r, size_t dim, size_t k) {
  const size_t bytes = rows.codes == RowCodes::f32 ? 4 : rows.codes == RowCodes::f16 ? 2 : 1;
  return ((r + 4) * dim + k) * bytes;
}

VERITY_BF16_TARGET inline void store_bf16(uint16_t* dst, __m512 x) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), (__m256i)_mm512_cvtneps_pbh(x));
}

// Writes row r times `mul` as bf16 into o[0, stride) (zero beyond dim) and
// returns the sum of squares of the unscaled row, in one pass over the codes.
VERITY_BF16_TARGET float convert_row(const TokenRows& rows, size_t r, size_t dim, size_t stride,
                                     float mul, uint16_t* o) {
  const size_t full = dim / 16 * 16;
  const auto tail = __mmask16((1u << (dim - full)) - 1u);
  const __m512 scale = _mm512_set1_ps(mul);
  __m512 sq = _mm512_setzero_ps();
  size_t k = 0;
  for (; k < full + (tail ? 16 : 0); k += 16) {
    _mm_prefetch(static_cast<const char*>(rows.data) + prefetch_offset(rows, r, dim, k), _MM_HINT_T0);
    const __m512 x = load16(rows, r, dim, k, k < full ? __mmask16(0xffff) : tail);
    sq = _mm512_fmadd_ps(x, x, sq);
    store_bf16(o + k, _mm512_mul_ps(x, scale));
  }
  std::fill(o + k, o + stride, uint16_t(0));
  return _mm512_reduce_add_ps(sq);
}

float inverse_norm(float sum_of_squares) {
  return sum_of_squares > 0 ? 1.0f / std::sqrt(sum_of_squares) : 0.0f;
}

// Converts rows.n rows into bf16 rows of stride `stride` and writes each row's
// inverse fp32 norm (0 for a zero row). normalize: the rows are scaled to unit
// length before rounding (the query: converted a second time, once its norm is
// known); otherwise the caller applies inv_norm to the products (candidates,
// read once).
VERITY_BF16_TARGET void to_bf16_rows(const TokenRows& rows, size_t dim, size_t stride,
                                     uint16_t* out, float* inv_norm, bool normalize) {
  for (size_t r = 0; r < rows.n; ++r) {
    uint16_t* o = out + r * stride;
    inv_norm[r] = inverse_norm(convert_row(rows, r, dim, stride, 1.0f, o));
    if (normalize) convert_row(rows, r, dim, stride, inv_norm[r], o);
  }
}

VERITY_BF16_TARGET inline __m512bh bf16_at(const uint16_t* p) {
  return (__m512bh)_mm512_loadu_si512(p);
}

VERITY_BF16_TARGET float dot1(const uint16_t* a, const uint16_t* b, size_t stride) {
  __m512 acc = _mm512_setzero_ps();
  for (size_t k = 0; k < stride; k += kStep) acc = _mm512_dpbf16_ps(acc, bf16_at(a + k), bf16_at(b + k));
  return _mm512_reduce_add_ps(acc);
}

// out[i * n + j] = <q_i, c_j> · inv_c[j], clamped to [-1, 1]. Four query rows ×
// two candidate rows per step: 8 accumulators, 6 loads per 8 dot instructions.
VERITY_BF16_TARGET void dots_bf16(const uint16_t* q, size_t nq, const uint16_t* c, const float* inv_c,
                                  size_t n, size_t stride, float* out) {
  auto put = [&](size_t i, size_t j, float v) { out[i * n + j] = std::clamp(v * inv_c[j], -1.0f, 1.0f); };
  size_t i = 0;
  for (; i + 4 <= nq; i += 4) {
    const uint16_t* q0 = q + i * stride;
    size_t j = 0;
    for (; j + 2 <= n; j += 2) {
      const uint16_t* c0 = c + j * stride;
      const uint16_t* c1 = c0 + stride;
      __m512 a00 = _mm512_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
             a30 = a00, a31 = a00;
      for (size_t k = 0; k < stride; k += kStep) {
        const __m512bh x0 = bf16_at(c0 + k), x1 = bf16_at(c1 + k);
        __m512bh y = bf16_at(q0 + k);
        a00 = _mm512_dpbf16_ps(a00, y, x0), a01 = _mm512_dpbf16_ps(a01, y, x1);
        y = bf16_at(q0 + stride + k);
        a10 = _mm512_dpbf16_ps(a10, y, x0), a11 = _mm512_dpbf16_ps(a11, y, x1);
        y = bf16_at(q0 + 2 * stride + k);
        a20 = _mm512_dpbf16_ps(a20, y, x0), a21 = _mm512_dpbf16_ps(a21, y, x1);
        y = bf16_at(q0 + 3 * stride + k);
        a30 = _mm512_dpbf16_ps(a30, y, x0), a31 = _mm512_dpbf16_ps(a31, y, x1);
      }
      put(i, j, _mm512_reduce_add_ps(a00)), put(i, j + 1, _mm512_reduce_add_ps(a01));
      put(i + 1, j, _mm512_reduce_add_ps(a10)), put(i + 1, j + 1, _mm512_reduce_add_ps(a11));
      put(i + 2, j, _mm512_reduce_add_ps(a20)), put(i + 2, j + 1, _mm512_reduce_add_ps(a21));
      put(i + 3, j, _mm512_reduce_add_ps(a30)), put(i + 3, j + 1, _mm512_reduce_add_ps(a31));
    }
    for (; j < n; ++j)
      for (size_t r = 0; r < 4; ++r) put(i + r, j, dot1(q0 + r * stride, c + j * stride, stride));
  }
  for (; i < nq; ++i)
    for (size_t j = 0; j < n; ++j) put(i, j, dot1(q + i * stride, c + j * stride, stride));
}

// AMX tiles (Intel Sapphire Rapids and later): one TDPBF16PS multiplies a
// 16 × 32 bf16 tile by a 32 × 16 one into 16 × 16 fp32 sums, 16 times the work
// of a vdpbf16ps. The products are the same bf16 × bf16 ones, exact in fp32;
// only the order of the fp32 sums differs from dots_bf16.
#define VERITY_AMX_TARGET \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16,f16c")))

constexpr size_t kTile = 16;                        // rows of a tile; fp32 columns of a sum tile
constexpr size_t kTileValues = kTile * kStep;       // bf16 values of an operand tile (1 KB)
constexpr size_t kBlockRows = 2 * kTile;            // rows per 2 × 2 block of sum tiles

// Palette 1: every tile 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

// The query's rows as AMX's second operand ("VNNI" layout): for each block of
// 16 query rows and each step of 32 dimensions, a tile whose row r holds, for
// each query row i of the block, its values 2r and 2r + 1 of that step. Rows
// past nq are zero; the blocks are padded to an even count (2 × 2 sum tiles).
std::vector<uint16_t> pack_query_for_tiles(const uint16_t* q, size_t nq, size_t stride) {
  const size_t steps = stride / kStep, blocks = (nq + kBlockRows - 1) / kBlockRows * 2;
  std::vector<uint16_t> packed(blocks * steps * kTileValues, 0);
  for (size_t i = 0; i < nq; ++i) {
    const size_t block = i / kTile, column = i % kTile;
    for (size_t s = 0; s < steps; ++s) {
      uint16_t* tile = packed.data() + (block * steps + s) * kTileValues;
      const uint16_t* values = q + i * stride + s * kStep;
      for (size_t r = 0; r < kTile; ++r) {
        tile[r * kStep + 2 * column] = values[2 * r];
        tile[r * kStep + 2 * column + 1] = values[2 * r + 1];
      }
    }
  }
  return packed;
}

VERITY_AMX_TARGET void load_tile_config() {
  TileConfig config;
  for (size_t t = 0; t < 8; ++t) config.rows[t] = kTile, config.bytes_per_row[t] = kStep * sizeof(uint16_t);
  // GCC 12's _tile_loadconfig tells the compiler it reads 8 bytes, so without
  // this barrier the stores past them are dropped as dead.
  __asm__ __volatile__("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

// As dots_bf16, with the query packed by pack_query_for_tiles and the
// candidate's rows padded with zero rows to a multiple of 32. The caller
// loads the tile configuration on this thread first.
VERITY_AMX_TARGET void dots_amx(const uint16_t* packed_query, size_t nq, const uint16_t* c,
                                const float* inv_c, size_t n, size_t stride, float* out) {
  const size_t steps = stride / kStep, row_bytes = stride * sizeof(uint16_t);
  alignas(64) float sums[4][kTile * kTile];
  for (size_t i0 = 0; i0 < nq; i0 += kBlockRows) {
    const uint16_t* b0 = packed_query + (i0 / kTile) * steps * kTileValues;
    const uint16_t* b1 = b0 + steps * kTileValues;
    for (size_t j0 = 0; j0 < n; j0 += kBlockRows) {
      const uint16_t* a0 = c + j0 * stride;
      const uint16_t* a1 = a0 + kTile * stride;
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (size_t s = 0; s < steps; ++s) {
        _tile_loadd(4, a0 + s * kStep, row_bytes);
        _tile_loadd(5, a1 + s * kStep, row_bytes);
        _tile_loadd(6, b0 + s * kTileValues, kStep * sizeof(uint16_t));
        _tile_loadd(7, b1 + s * kTileValues, kStep * sizeof(uint16_t));
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      _tile_stored(0, sums[0], kTile * sizeof(float));
      _tile_stored(1, sums[1], kTile * sizeof(float));
      _tile_stored(2, sums[2], kTile * sizeof(float));
      _tile_stored(3, sums[3], kTile * sizeof(float));
      // Sum tile 2 · a + b holds candidate rows j0 + 16a.. by query rows i0 + 16b..
      for (size_t t = 0; t < 4; ++t) {
        const size_t ib = i0 + (t % 2) * kTile, jb = j0 + (t / 2) * kTile;
        for (size_t i = ib; i < std::min(ib + kTile, nq); ++i)
          for (size_t j = jb; j < std::min(jb + kTile, n); ++j)
            out[i * n + j] = std::clamp(sums[t][(j - jb) * kTile + (i - ib)] * inv_c[j], -1.0f, 1.0f);
      }
    }
  }
}

VERITY_AMX_TARGET void release_tiles() { _tile_release(); }

}  // namespace

bool amx_supported() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;
    if ((edx & kAmxBf16) == 0 || (edx & kAmxTile) == 0 || !bf16_maps_supported()) return false;
#if defined(__linux__) && defined(SYS_arch_prctl)
    // Linux hands out the tile registers' state only on request (5.16 and
    // later); an older kernel or a sandbox refuses, and the AVX-512 path runs.
    constexpr long kRequestPermission = 0x1023, kTileData = 18;  // ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
#else
    return false;
#endif
  }();
  return usable;
}

std::string_view bf16_products_name(Bf16Products products) {
  return products == Bf16Products::amx ? "amx" : "avx512";
}

Bf16Products best_bf16_products() {
  // A pinned VERITY_KERNEL_ISA=avx512 runs the AVX-512 instructions alone.
  static const Bf16Products best = !isa_pinned() && amx_supported() ? Bf16Products::amx : Bf16Products::avx512;
  return best;
}

bool bf16_maps_supported() {
  static const bool cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16") &&
                          cpu_has_f16c();
  return cpu;
}

bool use_bf16_maps() {
  static const bool use = [] {
    const char* v = std::getenv("VERITY_MAP_PRECISION");
    const std::string mode = v && *v ? v : "fast";
    VERITY_CHECK(mode == "fast" || mode == "exact", ConfigError, "VERITY_MAP_PRECISION='", mode,
                 "': expected 'fast' (bf16 products where the CPU has AVX512-BF16) or 'exact'");
    // bf16 maps are an AVX-512 path: a pinned slower kernel path turns them off too.
    return mode == "fast" && bf16_maps_supported() && best_isa() == Isa::avx512;
  }();
  return use;
}

std::vector<SimilarityMap> similarity_maps_bf16(std::span<const float> query, size_t count,
                                                size_t dim, const RowsView& view, Bf16Products products) {
  VERITY_CHECK(bf16_maps_supported(), ConfigError,
               "bf16 similarity maps need a CPU with AVX512-BF16 (set VERITY_MAP_PRECISION=exact)");
  VERITY_CHECK(products != Bf16Products::amx || amx_supported(), ConfigError,
               "bf16 similarity maps on AMX tiles need a CPU with AMX-BF16 that the OS lets use them");
  VERITY_CHECK(dim > 0, ConfigError, "similarity map: dim must be positive");
  VERITY_CHECK(query.size() % dim == 0, ConfigError, "similarity map: query (", query.size(),
               " floats) is not a multiple of dim=", dim);
  for (float v : query)
    VERITY_CHECK(std::isfinite(v), ConfigError, "similarity map: query has a non-finite value");
  const size_t nq = query.size() / dim, stride = padded(dim);
  std::vector<uint16_t> q(nq * stride);
  std::vector<float> q_inv(nq);
  to_bf16_rows({RowCodes::f32, query.data(), nullptr, nq}, dim, stride, q.data(), q_inv.data(), true);

  const bool tiles = products == Bf16Products::amx;
  const std::vector<uint16_t> packed_query = tiles ? pack_query_for_tiles(q.data(), nq, stride) : std::vector<uint16_t>{};

  std::vector<SimilarityMap> maps(count);
  split_work(count, 8, [&](int64_t begin, int64_t end) {
    std::vector<uint16_t> rows;
    std::vector<float> inv;
    // Tile state is per thread: configured here, released however this ends.
    struct Tiles {
      bool on;
      explicit Tiles(bool use) : on(use) { if (on) load_tile_config(); }
      ~Tiles() { if (on) release_tiles(); }
    } tile_state(tiles);
    for (int64_t ci = begin; ci < end; ++ci) {
      const TokenRows c = view(size_t(ci));
      VERITY_CHECK(c.n == 0 || c.data != nullptr, ConfigError, "similarity map: candidate ", ci,
                   " has ", c.n, " rows but no data");
      VERITY_CHECK(c.codes != RowCodes::i8 || c.n == 0 || c.scales != nullptr, ConfigError,
                   "similarity map: int8 candidate ", ci, " has no scales");
      std::vector<float> values(nq * c.n, 0.0f);
      if (nq > 0 && c.n > 0) {
        inv.resize(c.n);
        if (tiles) {
          // Whole 32-row blocks of operand tiles: the rows past c.n are zero.
          const size_t padded_rows = (c.n + kBlockRows - 1) / kBlockRows * kBlockRows;
          rows.resize(padded_rows * stride);
          std::fill(rows.begin() + ptrdiff_t(c.n * stride), rows.end(), uint16_t(0));
          to_bf16_rows(c, dim, stride, rows.data(), inv.data(), false);
          dots_amx(packed_query.data(), nq, rows.data(), inv.data(), c.n, stride, values.data());
        } else {
          rows.resize(c.n * stride);
          to_bf16_rows(c, dim, stride, rows.data(), inv.data(), false);
          dots_bf16(q.data(), nq, rows.data(), inv.data(), c.n, stride, values.data());
        }
      }
      maps[size_t(ci)] = SimilarityMap(nq, c.n, std::move(values));
    }
  });
  return maps;
}

}  // namespace verity::verify
