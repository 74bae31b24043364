#include "cache/namespace_index.hpp"

#include <algorithm>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "index/dense_hnsw.hpp"

namespace verity::cache {
namespace {
constexpr size_t kInitialGraphCapacity = 2048;
// Marked nodes below this count are never worth a rebuild.
constexpr size_t kMinMarkedForRebuild = 256;
}  // namespace

struct NamespaceIndex::Impl {
  size_t dim;
  AnnOptions opt;
  // Exact mode: rows back to back, row r holds row_ids[r].
  std::vector<float> rows;
  std::vector<int64_t> row_ids;
  std::unordered_map<int64_t, size_t> slot;
  // Graph mode (graph != nullptr): labels are the entry ids.
  std::unique_ptr<index::HnswGraph> graph;
  std::unordered_set<int64_t> live;

  Impl(size_t d, AnnOptions o) : dim(d), opt(o) {}

  index::HnswOptions graph_options() const {
    index::HnswOptions h;
    h.M = opt.M;
    h.ef_construction = opt.ef_construction;
    h.ef_search = opt.ef_search;
    h.seed = opt.seed;
    return h;
  }

  void graph_from(std::span<const int64_t> ids, std::span<const float> vectors) {
    graph = std::make_unique<index::HnswGraph>(dim, graph_options(), std::max(2 * ids.size(), kInitialGraphCapacity));
    live.clear();
    graph_insert(ids, vectors, std::thread::hardware_concurrency());
  }

  void graph_insert(std::span<const int64_t> ids, std::span<const float> vectors, size_t threads) {
    graph->add(ids, vectors, threads);
    live.insert(ids.begin(), ids.end());
  }

  // Exact rows -> graph once the namespace outgrows the scan.
  void promote() {
    graph_from(row_ids, rows);
    rows = {};
    row_ids = {};
    slot = {};
  }

  // Drops marked nodes by rebuilding from the live vectors (exact again if few).
  void rebuild() {
    std::vector<int64_t> ids(live.begin(), live.end());
    std::sort(ids.begin(), ids.end());
    std::vector<float> vecs;
    vecs.reserve(ids.size() * dim);
    for (int64_t id : ids) {
      auto v = graph->vector_of(id);
      vecs.insert(vecs.end(), v.begin(), v.end());
    }
    graph.reset();
    live.clear();
    if (ids.size() > opt.exact_limit) return graph_from(ids, vecs);
    rows = std::move(vecs);
    row_ids = ids;
    for (size_t r = 0; r < ids.size(); ++r) slot[ids[r]] = r;
  }

  void exact_insert(int64_t id, const float* v) {
    auto [it, fresh] = slot.try_emplace(id, row_ids.size());
    if (fresh) {
      row_ids.push_back(id);
      rows.insert(rows.end(), v, v + dim);
    } else {
      std::copy(v, v + dim, rows.begin() + it->second * dim);
    }
  }
};

NamespaceIndex::NamespaceIndex(size_t dim, AnnOptions options) : impl_(std::make_unique<Impl>(dim, options)) {
  VERITY_CHECK(dim > 0, ConfigError, "cache index: dim must be positive");
  VERITY_CHECK(options.M >= 2 && options.ef_construction > 0 && options.ef_search > 0, ConfigError,
               "cache index: M must be >= 2 and ef values positive");
}
NamespaceIndex::~NamespaceIndex() = default;
NamespaceIndex::NamespaceIndex(NamespaceIndex&&) noexcept = default;
NamespaceIndex& NamespaceIndex::operator=(NamespaceIndex&&) noexcept = default;

void NamespaceIndex::add(int64_t id, std::span<const float> vector) {
  add_batch(std::span<const int64_t>(&id, 1), vector, 1);
}

void NamespaceIndex::add_batch(std::span<const int64_t> ids, std::span<const float> vectors, size_t threads) {
  auto& m = *impl_;
  VERITY_CHECK(vectors.size() == ids.size() * m.dim, ConfigError, "cache index: ", vectors.size(),
               " floats for ", ids.size(), " vectors of dim ", m.dim);
  if (m.graph) return m.graph_insert(ids, vectors, threads);
  for (size_t r = 0; r < ids.size(); ++r) m.exact_insert(ids[r], vectors.data() + r * m.dim);
  if (m.row_ids.size() > m.opt.exact_limit) m.promote();
}

bool NamespaceIndex::remove(int64_t id) {
  auto& m = *impl_;
  if (m.graph) {
    if (!m.live.erase(id)) return false;
    m.graph->mark_deleted(id);
    if (m.graph->marked() >= kMinMarkedForRebuild && m.graph->marked() > m.live.size()) m.rebuild();
    return true;
  }
  auto it = m.slot.find(id);
  if (it == m.slot.end()) return false;
  const size_t r = it->second, last = m.row_ids.size() - 1;
  if (r != last) {  // move the last row into the hole
    std::copy(m.rows.begin() + last * m.dim, m.rows.begin() + (last + 1) * m.dim, m.rows.begin() + r * m.dim);
    m.row_ids[r] = m.row_ids[last];
    m.slot[m.row_ids[r]] = r;
  }
  m.rows.resize(last * m.dim);
  m.row_ids.pop_back();
  m.slot.erase(it);
  return true;
}

bool NamespaceIndex::contains(int64_t id) const {
  return impl_->graph ? impl_->live.count(id) > 0 : impl_->slot.count(id) > 0;
}

std::vector<Neighbor> NamespaceIndex::search(std::span<const float> query, size_t k) const {
  const auto& m = *impl_;
  VERITY_CHECK(query.size() == m.dim, ConfigError, "cache index: query has ", query.size(), " floats, dim is ",
               m.dim);
  std::vector<Neighbor> out;
  if (k == 0) return out;
  if (m.graph) {
    for (const auto& [id, cosine] : m.graph->search(query, k)) out.push_back({id, cosine});
    return out;
  }
  out.reserve(m.row_ids.size());
  for (size_t r = 0; r < m.row_ids.size(); ++r)
    out.push_back({m.row_ids[r], index::inner_product(query.data(), m.rows.data() + r * m.dim, m.dim)});
  auto better = [](const Neighbor& a, const Neighbor& b) {
    return a.cosine != b.cosine ? a.cosine > b.cosine : a.id < b.id;
  };
  if (out.size() > k) {
    std::partial_sort(out.begin(), out.begin() + k, out.end(), better);
    out.resize(k);
  } else {
    std::sort(out.begin(), out.end(), better);
  }
  return out;
}

size_t NamespaceIndex::size() const { return impl_->graph ? impl_->live.size() : impl_->row_ids.size(); }
bool NamespaceIndex::uses_graph() const { return impl_->graph != nullptr; }

std::vector<int64_t> NamespaceIndex::ids() const {
  if (impl_->graph) return {impl_->live.begin(), impl_->live.end()};
  return impl_->row_ids;
}

std::string NamespaceIndex::serialize_graph() const { return impl_->graph ? impl_->graph->serialize() : ""; }

bool NamespaceIndex::load_graph(std::span<const std::byte> dump, std::span<const int64_t> ids,
                                std::span<const float> vectors, const std::string& where) {
  auto& m = *impl_;
  VERITY_CHECK(size() == 0, ConfigError, "cache index: load_graph needs an empty index");
  VERITY_CHECK(vectors.size() == ids.size() * m.dim, ConfigError, "cache index: ", vectors.size(), " floats for ",
               ids.size(), " ids");
  auto graph = index::HnswGraph::deserialize(m.dim, m.graph_options(), dump, where);
  auto live = graph->live_labels();
  std::vector<int64_t> expected(ids.begin(), ids.end());
  std::sort(live.begin(), live.end());
  std::sort(expected.begin(), expected.end());
  if (live != expected) return false;
  for (size_t r = 0; r < ids.size(); ++r) {
    auto v = graph->vector_of(ids[r]);
    if (!std::equal(v.begin(), v.end(), vectors.begin() + r * m.dim)) return false;
  }
  m.graph = std::move(graph);
  m.live = std::unordered_set<int64_t>(live.begin(), live.end());
  return true;
}

}  // namespace verity::cache
