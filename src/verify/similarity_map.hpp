#pragma once
// Token-token similarity maps, the input of every stage-2 verifier.
// M[i][j] = cos(q_i, c_j) for the real query tokens i (rows) and the real
// candidate tokens j (columns). Rows of the inputs are L2-normalized inside;
// a zero vector has no direction and gives 0 in its whole row/column.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace verity::verify {

class SimilarityMap {
 public:
  SimilarityMap() = default;
  // Takes ownership of rows×cols values (row-major); throws ConfigError on a
  // size mismatch or a non-finite value.
  SimilarityMap(size_t rows, size_t cols, std::vector<float> values);
  // query: [n_query × dim], candidate: [n_candidate × dim], row-major. Throws
  // ConfigError when a size is not a multiple of dim or a value is not finite.
  static SimilarityMap compute(std::span<const float> query, std::span<const float> candidate,
                               size_t dim);
  // Maps of one query against many candidates whose token rows are stored back
  // to back in `candidates` (counts[c] rows each). One matrix product (BLAS)
  // instead of one loop nest per candidate: stage 2 verifies ~100 candidates
  // per query. Same values as compute() up to float rounding.
  static std::vector<SimilarityMap> compute_many(std::span<const float> query,
                                                 std::span<const float> candidates,
                                                 std::span<const size_t> counts, size_t dim);

  // Maps of one query against `count` candidates that `fetch(c, rows)` writes
  // one at a time into `rows` (resized to n × dim; returns n). Stage 2 reads
  // ~100 stored documents per query: decoding them all before the products
  // costs more than the products, while one candidate at a time stays in
  // cache. Candidate values are trusted to be finite (stored token vectors are
  // checked when the store is built); the query is checked here. Candidates
  // are split with the stage-2 helper (core/split_work.hpp), so `fetch` must be
  // thread-safe.
  using CandidateFetch = std::function<size_t(size_t candidate, std::vector<float>& rows)>;
  static std::vector<SimilarityMap> compute_streamed(std::span<const float> query, size_t count,
                                                     size_t dim, const CandidateFetch& fetch);

  size_t rows() const { return rows_; }
  size_t cols() const { return cols_; }
  bool empty() const { return rows_ == 0 || cols_ == 0; }
  float at(size_t i, size_t j) const { return values_[i * cols_ + j]; }
  std::span<const float> row(size_t i) const { return {values_.data() + i * cols_, cols_}; }
  std::span<const float> values() const { return values_; }

 private:
  size_t rows_ = 0, cols_ = 0;
  std::vector<float> values_;
};

// Fixed-size view for the learned verifiers (F3/F4), which need a constant
// input shape. Policy (docs/VERIFIERS.md):
//   * crop: only the first `size` query tokens and the first `size` candidate
//     tokens are kept (leading tokens, like an encoder's max_length cut);
//   * pad: cells beyond the real map hold `pad_value` (default 0, the cosine
//     of unrelated vectors) and mask 0; real cells have mask 1.
// The default size 128 is the paper's F3 setup.
inline constexpr size_t kDefaultMapSize = 128;

struct PaddedMap {
  size_t size = 0;                 // the canvas is size × size
  size_t rows = 0, cols = 0;       // real extent after cropping (<= size)
  bool cropped = false;            // whether any real token was dropped
  std::vector<float> values;       // [size × size]
  std::vector<uint8_t> mask;       // [size × size], 1 = real cell
};
PaddedMap pad_or_crop(const SimilarityMap& map, size_t size = kDefaultMapSize,
                      float pad_value = 0.0f);

}  // namespace verity::verify
