#pragma once
// Exact dense search: every query is scored against every stored vector. The
// reference oracle for the approximate indexes (see dense_index.hpp).
#include "index/dense_index.hpp"

namespace verity {
class SectionFile;
}

namespace verity::index {

class FlatIndex final : public DenseIndex {
 public:
  explicit FlatIndex(size_t dim);
  void add(std::span<const float> vectors, std::span<const int64_t> ids = {}) override;
  DenseSearchResult search(std::span<const float> queries, size_t k) const override;
  size_t size() const override { return ids_.size(); }
  size_t dim() const override { return dim_; }
  std::string spec() const override { return "flat"; }
  void save(const std::string& path) const override;
  // The stored (normalized) vectors and their ids, in insertion order: to
  // build an approximate index from the same vectors, as the benchmark does.
  std::span<const float> vectors() const { return vectors_; }
  std::span<const int64_t> ids() const { return ids_; }
  // Restores the index from an opened "VDNS" file (called by load_dense_index).
  static std::unique_ptr<FlatIndex> load(const SectionFile& file, size_t dim, size_t count);

 private:
  size_t dim_;
  std::vector<float> vectors_;  // normalized, [size × dim]
  std::vector<int64_t> ids_;
};

}  // namespace verity::index
