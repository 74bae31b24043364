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

// A mutable HNSW graph with int64 labels over vectors the caller has
// L2-normalized: insert (re-adding a label updates its vector and revives it),
// mark deleted (hnswlib 0.6 only marks; searches skip marked nodes), search.
// The semantic cache's per-namespace index builds on it. Lives here because
// hnswlib's headers define non-inline globals and may be included by one
// translation unit only. add() and search() must not run at the same time;
// several add() calls on different labels may (hnswlib locks per node).
class HnswGraph {
 public:
  HnswGraph(size_t dim, const HnswOptions& options, size_t capacity);
  ~HnswGraph();
  // labels.size() × dim vectors; capacity grows as needed. Inserts run on
  // up to `threads` threads (labels must be distinct).
  void add(std::span<const int64_t> labels, std::span<const float> vectors, size_t threads);
  bool has_label(int64_t label) const;     // in the graph, marked or not
  bool is_marked(int64_t label) const;     // false for an absent label
  void mark_deleted(int64_t label);        // the label must be present and unmarked
  size_t marked() const;
  std::vector<float> vector_of(int64_t label) const;
  // Up to k unmarked labels by cosine, best first.
  std::vector<std::pair<int64_t, float>> search(std::span<const float> query, size_t k) const;
  std::vector<int64_t> live_labels() const;  // unmarked labels, any order
  // hnswlib's own dump, and back; a dump whose layout does not match dim and
  // options.M is a FormatError naming `where`.
  std::string serialize() const;
  static std::unique_ptr<HnswGraph> deserialize(size_t dim, const HnswOptions& options,
                                                std::span<const std::byte> dump, const std::string& where);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// <a, b> over dim floats with hnswlib's SIMD kernel.
float inner_product(const float* a, const float* b, size_t dim);

}  // namespace verity::index
