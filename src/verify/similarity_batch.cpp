// Batched similarity maps through torch::mm (the only torch use in maps).
#include <torch/torch.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "verify/similarity_map.hpp"

namespace verity::verify {
namespace {
// L2-normalizes rows in place; zero rows stay zero (as in compute()).
torch::Tensor normalize_rows(torch::Tensor m) {
  auto norms = m.norm(2, 1, /*keepdim=*/true);
  return m / norms.clamp_min(1e-30);
}
}  // namespace

std::vector<SimilarityMap> SimilarityMap::compute_many(std::span<const float> query,
                                                       std::span<const float> candidates,
                                                       std::span<const size_t> counts, size_t dim) {
  VERITY_CHECK(dim > 0, ConfigError, "similarity map: dim must be positive");
  size_t total = std::accumulate(counts.begin(), counts.end(), size_t(0));
  VERITY_CHECK(query.size() % dim == 0, ConfigError, "similarity map: query (", query.size(),
               " floats) is not a multiple of dim=", dim);
  VERITY_CHECK(candidates.size() == total * dim, ConfigError, "similarity map: candidates hold ",
               candidates.size(), " floats, counts say ", total, " rows of ", dim);
  for (float v : query)
    VERITY_CHECK(std::isfinite(v), ConfigError, "similarity map: query has a non-finite value");
  for (float v : candidates)
    VERITY_CHECK(std::isfinite(v), ConfigError, "similarity map: a candidate has a non-finite value");
  const size_t nq = query.size() / dim;
  std::vector<SimilarityMap> maps(counts.size());
  if (nq == 0 || total == 0) {
    for (size_t c = 0; c < counts.size(); ++c) maps[c] = SimilarityMap(nq, counts[c], std::vector<float>(nq * counts[c], 0.0f));
    return maps;
  }
  torch::NoGradGuard no_grad;
  auto opts = torch::TensorOptions().dtype(torch::kFloat32);
  auto q = normalize_rows(torch::from_blob(const_cast<float*>(query.data()), {int64_t(nq), int64_t(dim)}, opts));
  auto c = normalize_rows(torch::from_blob(const_cast<float*>(candidates.data()),
                                           {int64_t(total), int64_t(dim)}, opts));
  auto all = torch::mm(q, c.t()).clamp_(-1.0f, 1.0f).contiguous();  // [nq × total]
  const float* p = all.data_ptr<float>();
  size_t col = 0;
  for (size_t ci = 0; ci < counts.size(); ++ci) {
    size_t n = counts[ci];
    std::vector<float> values(nq * n);
    for (size_t i = 0; i < nq; ++i)
      std::copy(p + i * total + col, p + i * total + col + n, values.begin() + i * n);
    maps[ci] = SimilarityMap(nq, n, std::move(values));
    col += n;
  }
  return maps;
}

}  // namespace verity::verify
