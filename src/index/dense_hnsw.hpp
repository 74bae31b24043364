#pragma once
// Approximate dense search with hnswlib's HNSW graph (inner-product space over
// normalized vectors). hnswlib stays out of this header behind a pimpl.
#include "index/dense_index.hpp"

namespace verity {
class SectionFile;
}

namespace verity::index {

struct HnswOptions {
  size_t M = 16;                 // graph degree (level 0 gets 2M)
  size_t ef_construction = 200;  // candidate list size while building
  size_t ef_search = 100;        // candidate list size while searching (max with k)
  uint64_t seed = 100;           // level generator seed
  // Insertion threads; 0 = all cores. Parallel insertion is not bit-
  // reproducible; threads=1 gives the same graph for the same input.
  size_t threads = 0;
};

class HnswIndex final : public DenseIndex {
 public:
  HnswIndex(size_t dim, const HnswOptions& options);
  ~HnswIndex() override;
  void add(std::span<const float> vectors, std::span<const int64_t> ids = {}) override;
  DenseSearchResult search(std::span<const float> queries, size_t k) const override;
  size_t size() const override;
  size_t dim() const override { return dim_; }
  std::string spec() const override;
  void save(const std::string& path) const override;
  const HnswOptions& options() const { return options_; }
  // Changes efSearch for later searches (not thread-safe against running searches).
  void set_ef_search(size_t ef);
  static std::unique_ptr<HnswIndex> load(const SectionFile& file, size_t dim, size_t count,
                                         const HnswOptions& options);

 private:
  struct Graph;
  size_t dim_;
  HnswOptions options_;
  std::unique_ptr<Graph> graph_;
  std::vector<int64_t> ids_;  // hnswlib label = position in ids_
};

}  // namespace verity::index
