#pragma once
// Dense (embedding) indexes for stage-1 recall. One interface, FAISS-like:
// vectors go in as n×d row-major float arrays, queries come back as k ids and
// scores per query. The metric is the inner product of L2-normalized vectors
// (cosine): add() and search() normalize their inputs, so callers may pass raw
// encoder output. A zero vector stays zero and scores 0 against everything.
//
// Factory strings (make_dense_index):
//   "flat"                                  exact search, the reference oracle
//   "hnsw[:M=16,efc=200,ef=100,seed=100,threads=0]"  hnswlib graph
// spec() returns the canonical string with every key, so it round-trips.
//
// On-disk format (save/load_dense_index), a SectionFile with magic "VDNS",
// version 1:
//   META  kind string | spec string | u64 dim | u64 count
//   IDS.  i64[count]         external ids (non-negative), in insertion order
//   VECS  f32[count × dim]   normalized vectors           (flat only)
//   HNSW  bytes              hnswlib's own saveIndex dump (hnsw only; its
//                            labels are insertion positions, mapped by IDS.)
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace verity {
class SectionWriter;
}

namespace verity::index {

// Results of a batch search, row-major [n_queries × k]. A query with fewer
// than k reachable vectors gets id -1 and score -infinity in the tail slots.
struct DenseSearchResult {
  size_t n_queries = 0, k = 0;
  std::vector<int64_t> ids;
  std::vector<float> scores;  // cosine similarity, best first
  std::span<const int64_t> ids_of(size_t q) const { return {ids.data() + q * k, k}; }
  std::span<const float> scores_of(size_t q) const { return {scores.data() + q * k, k}; }
};

class DenseIndex {
 public:
  virtual ~DenseIndex() = default;

  // Adds n = vectors.size()/dim() vectors. ids: one per vector (non-negative: -1
  // marks an empty result slot), or empty for consecutive ids starting at size().
  // Throws ConfigError on a size that is not a multiple of dim(), on an ids/vectors
  // count mismatch, on a negative id, and on any non-finite component (naming the
  // vector and component).
  virtual void add(std::span<const float> vectors, std::span<const int64_t> ids = {}) = 0;

  // Searches nq = queries.size()/dim() queries in parallel; k >= 1.
  virtual DenseSearchResult search(std::span<const float> queries, size_t k) const = 0;

  virtual size_t size() const = 0;
  virtual size_t dim() const = 0;
  virtual std::string spec() const = 0;
  // Atomic write in the format described above.
  virtual void save(const std::string& path) const = 0;
};

// Builds an empty index of dimension dim from a factory string. Unknown kinds
// or keys and bad values throw ConfigError listing the valid ones.
std::unique_ptr<DenseIndex> make_dense_index(std::string_view spec, size_t dim);
// Loads a file written by DenseIndex::save, whatever its kind. Damaged,
// truncated or inconsistent files throw FormatError naming the path.
std::unique_ptr<DenseIndex> load_dense_index(const std::string& path);

// Names and one-line help of the registered kinds (for --help / verity list).
struct DenseIndexKind {
  std::string name, help;
};
std::vector<DenseIndexKind> dense_index_kinds();

// Recall@k of approx against exact (the flat oracle) on the given queries:
// the mean over queries of |approx top-k ∩ exact top-k| / |exact top-k|.
double recall_at_k(const DenseIndex& approx, const DenseIndex& exact,
                   std::span<const float> queries, size_t k);

// Shared helpers for the implementations.
namespace dense_detail {
// Copies src into dst L2-normalized; throws ConfigError naming vector `row`
// when a component is not finite.
void normalize_checked(std::span<const float> src, std::span<float> dst, size_t row);
// Number of worker threads to use for n independent items (>= 1).
size_t worker_count(size_t requested, size_t n_items);
// Runs fn(begin, end) over [0, n) split into contiguous chunks on up to
// `threads` threads (0 = all cores); rethrows the first exception after joining.
void parallel_for(size_t n, size_t threads, const std::function<void(size_t, size_t)>& fn);
void check_batch(std::span<const float> values, size_t dim, const char* what);
// add()'s ids: none, or n non-negative ones (errors name `index_name`).
void check_ids(std::span<const int64_t> ids, size_t n, const char* index_name);
// Every dim-sized row of `vectors` L2-normalized; errors name rows from `first`.
std::vector<float> normalized_rows(std::span<const float> vectors, size_t dim, size_t first);
// What search() starts from: k and the batch checked (errors name `index_name`),
// queries.size()/dim rows of k slots holding id -1 and score -inf.
DenseSearchResult empty_result(std::span<const float> queries, size_t dim, size_t k,
                               const char* index_name);
// Writes META and IDS. (shared by every kind); the caller adds its own sections.
void write_common(SectionWriter& out, std::string_view kind, const std::string& spec, size_t dim,
                  std::span<const int64_t> ids);
inline constexpr std::string_view kMagic = "VDNS";
inline constexpr uint32_t kVersion = 1;
}  // namespace dense_detail

}  // namespace verity::index
