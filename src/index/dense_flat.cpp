#include "index/dense_flat.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/section_file.hpp"

namespace verity::index {

namespace {

// Eight independent accumulators so the compiler can vectorize without
// reassociating a single sum.
float dot(const float* a, const float* b, size_t d) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= d; i += 8)
    for (size_t l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
  float s = 0;
  for (; i < d; ++i) s += a[i] * b[i];
  return s + ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

struct Hit {
  float score;
  size_t pos;
};
// "a ranks before b": higher score, then earlier insertion (deterministic ties).
bool better(const Hit& a, const Hit& b) {
  return a.score > b.score || (a.score == b.score && a.pos < b.pos);
}

}  // namespace

FlatIndex::FlatIndex(size_t dim) : dim_(dim) {
  VERITY_CHECK(dim > 0, ConfigError, "flat index: dim must be positive");
}

void FlatIndex::add(std::span<const float> vectors, std::span<const int64_t> ids) {
  dense_detail::check_batch(vectors, dim_, "vectors");
  const size_t n = vectors.size() / dim_;
  dense_detail::check_ids(ids, n, "flat index");
  const auto normalized = dense_detail::normalized_rows(vectors, dim_, size());
  vectors_.insert(vectors_.end(), normalized.begin(), normalized.end());
  for (size_t r = 0; r < n; ++r) ids_.push_back(ids.empty() ? int64_t(ids_.size()) : ids[r]);
}

DenseSearchResult FlatIndex::search(std::span<const float> queries, size_t k) const {
  DenseSearchResult out = dense_detail::empty_result(queries, dim_, k, "flat index");
  const auto normalized = dense_detail::normalized_rows(queries, dim_, 0);

  auto run = [&](size_t begin, size_t end) {
    std::vector<Hit> heap;  // the k best so far; heap top = worst of them
    heap.reserve(k + 1);
    for (size_t q = begin; q < end; ++q) {
      heap.clear();
      const float* qv = normalized.data() + q * dim_;
      for (size_t p = 0; p < ids_.size(); ++p) {
        Hit h{dot(qv, vectors_.data() + p * dim_, dim_), p};
        if (heap.size() < k) {
          heap.push_back(h);
          std::push_heap(heap.begin(), heap.end(), better);
        } else if (better(h, heap.front())) {
          std::pop_heap(heap.begin(), heap.end(), better);
          heap.back() = h;
          std::push_heap(heap.begin(), heap.end(), better);
        }
      }
      std::sort(heap.begin(), heap.end(), better);
      for (size_t r = 0; r < heap.size(); ++r) {
        out.ids[q * k + r] = ids_[heap[r].pos];
        out.scores[q * k + r] = heap[r].score;
      }
    }
  };
  dense_detail::parallel_for(out.n_queries, 0, run);
  return out;
}

void FlatIndex::save(const std::string& path) const {
  SectionWriter out(path, dense_detail::kMagic, dense_detail::kVersion);
  dense_detail::write_common(out, "flat", spec(), dim_, ids_);
  out.add_array("VECS", std::span<const float>(vectors_));
  out.commit();
}

std::unique_ptr<FlatIndex> FlatIndex::load(const SectionFile& file, size_t dim, size_t count) {
  auto vecs = file.array<float>("VECS");
  VERITY_CHECK(vecs.size() == count * dim, FormatError, file.path(), ": VECS holds ", vecs.size(),
               " floats, expected count×dim = ", count, "×", dim);
  auto ids = file.array<int64_t>("IDS.");
  auto index = std::make_unique<FlatIndex>(dim);
  for (size_t i = 0; i < vecs.size(); ++i)
    VERITY_CHECK(std::isfinite(vecs[i]), FormatError, file.path(), ": VECS vector ", i / dim,
                 " component ", i % dim, " is not finite");
  index->vectors_.assign(vecs.begin(), vecs.end());
  index->ids_.assign(ids.begin(), ids.end());
  return index;
}

}  // namespace verity::index
