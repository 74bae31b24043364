#include "verify/similarity_map.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace verity::verify {

namespace {

// Normalized copy of an n×dim matrix (zero rows stay zero).
std::vector<float> normalized_rows(std::span<const float> m, size_t dim, const char* which) {
  std::vector<float> out(m.size());
  const size_t n = m.size() / dim;
  for (size_t r = 0; r < n; ++r) {
    double norm2 = 0;
    for (size_t c = 0; c < dim; ++c) {
      const float v = m[r * dim + c];
      VERITY_CHECK(std::isfinite(v), ConfigError, "similarity map: ", which, " token ", r,
                   " component ", c, " is not finite (", v, ")");
      norm2 += double(v) * v;
    }
    const float inv = norm2 > 0 ? float(1.0 / std::sqrt(norm2)) : 0.0f;
    for (size_t c = 0; c < dim; ++c) out[r * dim + c] = m[r * dim + c] * inv;
  }
  return out;
}

}  // namespace

SimilarityMap::SimilarityMap(size_t rows, size_t cols, std::vector<float> values)
    : rows_(rows), cols_(cols), values_(std::move(values)) {
  VERITY_CHECK(values_.size() == rows * cols, ConfigError, "similarity map: ", values_.size(),
               " values for ", rows, "×", cols);
  for (size_t i = 0; i < values_.size(); ++i)
    VERITY_CHECK(std::isfinite(values_[i]), ConfigError, "similarity map: cell (", i / cols, ",",
                 i % cols, ") is not finite");
}

SimilarityMap SimilarityMap::compute(std::span<const float> query,
                                     std::span<const float> candidate, size_t dim) {
  VERITY_CHECK(dim > 0, ConfigError, "similarity map: dim must be positive");
  VERITY_CHECK(query.size() % dim == 0 && candidate.size() % dim == 0, ConfigError,
               "similarity map: query (", query.size(), " floats) and candidate (",
               candidate.size(), " floats) must be multiples of dim=", dim);
  const size_t nq = query.size() / dim, nc = candidate.size() / dim;
  const auto q = normalized_rows(query, dim, "query");
  const auto c = normalized_rows(candidate, dim, "candidate");
  // Candidate transposed to [dim × nc] so the inner loop runs over contiguous
  // columns: an element-wise multiply-add the compiler vectorizes.
  std::vector<float> ct(dim * nc);
  for (size_t j = 0; j < nc; ++j)
    for (size_t k = 0; k < dim; ++k) ct[k * nc + j] = c[j * dim + k];
  SimilarityMap map;
  map.rows_ = nq;
  map.cols_ = nc;
  map.values_.assign(nq * nc, 0.0f);
  for (size_t i = 0; i < nq; ++i) {
    float* out = map.values_.data() + i * nc;
    for (size_t k = 0; k < dim; ++k) {
      const float a = q[i * dim + k];
      const float* col = ct.data() + k * nc;
      for (size_t j = 0; j < nc; ++j) out[j] += a * col[j];
    }
    // Rounding can push |cos| a hair past 1.
    for (size_t j = 0; j < nc; ++j) out[j] = std::clamp(out[j], -1.0f, 1.0f);
  }
  return map;
}

PaddedMap pad_or_crop(const SimilarityMap& map, size_t size, float pad_value) {
  VERITY_CHECK(size > 0, ConfigError, "pad_or_crop: size must be positive");
  VERITY_CHECK(std::isfinite(pad_value), ConfigError, "pad_or_crop: pad value must be finite");
  PaddedMap out;
  out.size = size;
  out.rows = std::min(map.rows(), size);
  out.cols = std::min(map.cols(), size);
  out.cropped = map.rows() > size || map.cols() > size;
  out.values.assign(size * size, pad_value);
  out.mask.assign(size * size, 0);
  for (size_t i = 0; i < out.rows; ++i)
    for (size_t j = 0; j < out.cols; ++j) {
      out.values[i * size + j] = map.at(i, j);
      out.mask[i * size + j] = 1;
    }
  return out;
}

}  // namespace verity::verify
