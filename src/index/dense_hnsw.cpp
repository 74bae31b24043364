#include "index/dense_hnsw.hpp"

#include <hnswlib/hnswlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/section_file.hpp"
#include "core/split_work.hpp"

namespace verity::index {

struct HnswIndex::Graph {
  // The space owns the dimension hnswlib's distance function reads: it must
  // outlive (so be declared before) the graph.
  hnswlib::InnerProductSpace space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  explicit Graph(size_t dim) : space(dim) {}
};

namespace {

constexpr size_t kInitialCapacity = 1024;

// hnswlib (0.6) only saves to and loads from a named file; this names a
// scratch file and removes it however the scope is left.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& stem) {
    static std::atomic<uint64_t> counter{0};
    path_ = cat(stem, ".hnsw.", ::getpid(), ".", counter++);
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Everything hnswlib's loadIndex and searchKnn trust in its dump, checked before
// the bytes reach it (they size allocations and index memory with these fields):
// the header against META and the spec, every link list's length and neighbour ids
// against the element count, each upper-level neighbour's own level, the entry
// point, labels (they index ids_), and the per-element upper-level blocks up to
// the section's end. expected_count: the element count META gives, or SIZE_MAX when
// any count will do (HnswGraph). dense_labels: labels index ids_ (HnswIndex), so each
// must be below the count; HnswGraph's labels are free int64 ids.
void check_hnsw_dump(ByteReader r, const std::string& where, size_t dim, size_t expected_count, const HnswOptions& o,
                     bool dense_labels) {
  const auto offset_level0 = r.read<size_t>();
  const auto max_elements = r.read<size_t>();
  const auto count = r.read<size_t>();
  const auto size_per_element = r.read<size_t>();
  const auto label_offset = r.read<size_t>();
  const auto offset_data = r.read<size_t>();
  const auto max_level = r.read<int>();
  const auto entry_point = r.read<hnswlib::tableint>();
  const auto max_m = r.read<size_t>();
  const auto max_m0 = r.read<size_t>();
  const auto m = r.read<size_t>();
  r.read<double>();  // mult_
  r.read<size_t>();  // ef_construction_
  VERITY_CHECK(expected_count == SIZE_MAX || count == expected_count, FormatError, where, ": element count ",
               count, ", META count=", expected_count);
  VERITY_CHECK(count <= max_elements, FormatError, where, ": element count ", count, " above the capacity ",
               max_elements);
  VERITY_CHECK(m == o.M && max_m == o.M && max_m0 == 2 * o.M, FormatError, where, ": M=", m,
               " (maxM=", max_m, ", maxM0=", max_m0, ") does not match spec M=", o.M);
  VERITY_CHECK(offset_level0 == 0 &&
                   offset_data == max_m0 * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint) &&
                   label_offset == offset_data + dim * sizeof(float) &&
                   size_per_element == label_offset + sizeof(hnswlib::labeltype),
               FormatError, where, ": element layout (data at ", offset_data, ", label at ",
               label_offset, ", size ", size_per_element, ") does not match dim=", dim);
  VERITY_CHECK(count == 0 || (max_level >= 0 && entry_point < count), FormatError, where, ": entry point ",
               entry_point, " at level ", max_level, " is not one of the ", count, " elements");
  VERITY_CHECK(count <= r.remaining() / size_per_element, FormatError, where, ": ", count,
               " elements of ", size_per_element, " bytes exceed the section");
  const std::byte* level0 = r.take(count * size_per_element);
  auto u16 = [](const std::byte* p) {
    uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  auto u32 = [](const std::byte* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  // A link list: u16 length (the rest of its u32 holds flags), then tableint ids.
  auto check_links = [&](const std::byte* list, size_t max_links, size_t element, int level,
                         const std::vector<int>* levels) {
    const size_t n = u16(list);
    VERITY_CHECK(n <= max_links, FormatError, where, ": element ", element, " has ", n, " links at level ",
                 level, " (at most ", max_links, ")");
    for (size_t j = 0; j < n; ++j) {
      const uint32_t to = u32(list + sizeof(hnswlib::linklistsizeint) + j * sizeof(hnswlib::tableint));
      VERITY_CHECK(to < count && (!levels || (*levels)[to] >= level), FormatError, where, ": element ", element,
                   " links to ", to, " at level ", level, ", which is not an element of that level");
    }
  };
  for (size_t i = 0; i < count; ++i) {
    const std::byte* e = level0 + i * size_per_element;
    check_links(e, max_m0, i, 0, nullptr);
    for (size_t k = 0; k < dim; ++k) {
      float v;
      std::memcpy(&v, e + offset_data + k * sizeof(float), sizeof v);
      VERITY_CHECK(std::isfinite(v), FormatError, where, ": element ", i, " has a non-finite component");
    }
    hnswlib::labeltype label;
    std::memcpy(&label, e + label_offset, sizeof label);
    VERITY_CHECK(!dense_labels || label < count, FormatError, where, ": element ", i, " has label ", label, " of ", count);
  }
  const size_t links_size = max_m * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint);
  std::vector<int> levels(count);
  std::vector<const std::byte*> upper(count);
  for (size_t i = 0; i < count; ++i) {
    const auto bytes = r.read<uint32_t>();
    VERITY_CHECK(bytes % links_size == 0 && bytes / links_size <= size_t(max_level), FormatError, where,
                 ": element ", i, " has ", bytes, " bytes of upper-level links (levels of ", links_size,
                 " bytes, at most ", max_level, ")");
    levels[i] = int(bytes / links_size);
    upper[i] = r.take(bytes);
  }
  VERITY_CHECK(r.remaining() == 0, FormatError, where, ": ", r.remaining(), " bytes after the last element");
  VERITY_CHECK(count == 0 || levels[entry_point] == max_level, FormatError, where, ": entry point ", entry_point,
               " has level ", count ? levels[entry_point] : 0, ", the graph's top is ", max_level);
  for (size_t i = 0; i < count; ++i)
    for (int l = 1; l <= levels[i]; ++l) check_links(upper[i] + size_t(l - 1) * links_size, max_m, i, l, &levels);
}

void check_hnsw_header(const SectionFile& file, size_t dim, size_t count, const HnswOptions& o) {
  check_hnsw_dump(file.reader("HNSW"), file.path() + " section 'HNSW'", dim, count, o, true);
}

// Loads a dump into `space`'s graph via a scratch file (hnswlib 0.6 reads only
// named files). A half-loaded HierarchicalNSW frees uninitialized pointers in
// its destructor, so on failure it is leaked; this happens only on damage.
std::unique_ptr<hnswlib::HierarchicalNSW<float>> load_hnsw_dump(std::span<const std::byte> dump,
                                                                 hnswlib::InnerProductSpace& space, size_t capacity,
                                                                 const std::string& where) {
  ScratchFile scratch((std::filesystem::temp_directory_path() / "verity").string());
  write_file_atomic(scratch.path(), std::string_view(reinterpret_cast<const char*>(dump.data()), dump.size()));
  auto hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(&space);
  try {
    hnsw->loadIndex(scratch.path(), &space, std::max<size_t>(capacity, 1));
  } catch (const std::runtime_error& e) {
    (void)hnsw.release();
    throw FormatError(cat(where, ": hnswlib rejected the graph: ", e.what()));
  }
  return hnsw;
}

}  // namespace

HnswIndex::HnswIndex(size_t dim, const HnswOptions& options)
    : dim_(dim), options_(options), graph_(std::make_unique<Graph>(dim)) {
  VERITY_CHECK(dim > 0, ConfigError, "hnsw index: dim must be positive");
  graph_->hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(
      &graph_->space, kInitialCapacity, options.M, options.ef_construction, options.seed);
  graph_->hnsw->setEf(options.ef_search);
}

HnswIndex::~HnswIndex() = default;

size_t HnswIndex::size() const { return ids_.size(); }

std::string HnswIndex::spec() const {
  return cat("hnsw:M=", options_.M, ",efc=", options_.ef_construction, ",ef=", options_.ef_search,
             ",seed=", options_.seed, ",threads=", options_.threads);
}

void HnswIndex::set_ef_search(size_t ef) {
  VERITY_CHECK(ef > 0, ConfigError, "hnsw index: ef must be positive");
  options_.ef_search = ef;
  graph_->hnsw->setEf(ef);
}

void HnswIndex::add(std::span<const float> vectors, std::span<const int64_t> ids) {
  dense_detail::check_batch(vectors, dim_, "vectors");
  const size_t n = vectors.size() / dim_, first = ids_.size();
  dense_detail::check_ids(ids, n, "hnsw index");
  // Validate everything before touching the graph so a bad batch adds nothing.
  const auto normalized = dense_detail::normalized_rows(vectors, dim_, first);
  auto& hnsw = *graph_->hnsw;
  if (first + n > hnsw.max_elements_)
    hnsw.resizeIndex(std::max(first + n, 2 * hnsw.max_elements_));
  dense_detail::parallel_for(n, options_.threads, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) hnsw.addPoint(normalized.data() + r * dim_, first + r);
  });
  for (size_t r = 0; r < n; ++r) ids_.push_back(ids.empty() ? int64_t(first + r) : ids[r]);
}

DenseSearchResult HnswIndex::search(std::span<const float> queries, size_t k) const {
  DenseSearchResult out = dense_detail::empty_result(queries, dim_, k, "hnsw index");
  const auto normalized = dense_detail::normalized_rows(queries, dim_, 0);
  const auto& hnsw = *graph_->hnsw;
  dense_detail::parallel_for(out.n_queries, 0, [&](size_t b, size_t e) {
    for (size_t q = b; q < e; ++q) {
      auto heap = hnsw.searchKnn(normalized.data() + q * dim_, k);  // farthest on top
      for (size_t r = heap.size(); r-- > 0; heap.pop()) {
        // hnswlib's inner-product distance is 1 - <a, b>.
        out.scores[q * k + r] = 1.0f - heap.top().first;
        out.ids[q * k + r] = ids_[heap.top().second];
      }
    }
  });
  return out;
}

void HnswIndex::save(const std::string& path) const {
  ScratchFile scratch(path);
  graph_->hnsw->saveIndex(scratch.path());
  const std::string dump = read_file(scratch.path());
  SectionWriter out(path, dense_detail::kMagic, dense_detail::kVersion);
  dense_detail::write_common(out, "hnsw", spec(), dim_, ids_);
  out.add("HNSW", dump.data(), dump.size());
  out.commit();
}

std::unique_ptr<HnswIndex> HnswIndex::load(const SectionFile& file, size_t dim, size_t count,
                                           const HnswOptions& options) {
  check_hnsw_header(file, dim, count, options);
  auto index = std::make_unique<HnswIndex>(dim, options);
  auto& graph = *index->graph_;
  graph.hnsw = load_hnsw_dump(file.section("HNSW"), graph.space, count, file.path() + " section 'HNSW'");
  graph.hnsw->setEf(options.ef_search);
  auto ids = file.array<int64_t>("IDS.");
  index->ids_.assign(ids.begin(), ids.end());
  return index;
}

struct HnswGraph::Impl {
  hnswlib::InnerProductSpace space;  // before the graph, which reads its dimension
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  size_t dim;
  Impl(size_t d) : space(d), dim(d) {}
  std::optional<hnswlib::tableint> internal(int64_t label) const {
    auto it = hnsw->label_lookup_.find(hnswlib::labeltype(label));
    if (it == hnsw->label_lookup_.end()) return std::nullopt;
    return it->second;
  }
};

HnswGraph::HnswGraph(size_t dim, const HnswOptions& o, size_t capacity) : impl_(std::make_unique<Impl>(dim)) {
  VERITY_CHECK(dim > 0, ConfigError, "hnsw graph: dim must be positive");
  impl_->hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(&impl_->space, std::max<size_t>(capacity, 16),
                                                                   o.M, o.ef_construction, o.seed);
  impl_->hnsw->setEf(o.ef_search);
}

HnswGraph::~HnswGraph() = default;

void HnswGraph::add(std::span<const int64_t> labels, std::span<const float> vectors, size_t threads) {
  auto& g = *impl_->hnsw;
  const size_t dim = impl_->dim;
  VERITY_CHECK(vectors.size() == labels.size() * dim, ConfigError, "hnsw graph: ", vectors.size(), " floats for ",
               labels.size(), " vectors of dim ", dim);
  size_t need = g.cur_element_count + labels.size();
  if (need > g.max_elements_) g.resizeIndex(std::max(need, 2 * g.max_elements_));
  threads = std::max<size_t>(1, std::min(threads, labels.size() / 64 + 1));
  for_each_on_threads(labels.size(), threads,
                      [&](size_t r) { g.addPoint(vectors.data() + r * dim, hnswlib::labeltype(labels[r])); });
}

bool HnswGraph::has_label(int64_t label) const { return impl_->internal(label).has_value(); }

bool HnswGraph::is_marked(int64_t label) const {
  auto i = impl_->internal(label);
  return i && impl_->hnsw->isMarkedDeleted(*i);
}

void HnswGraph::mark_deleted(int64_t label) { impl_->hnsw->markDelete(hnswlib::labeltype(label)); }

size_t HnswGraph::marked() const { return impl_->hnsw->num_deleted_; }

std::vector<float> HnswGraph::vector_of(int64_t label) const {
  return impl_->hnsw->getDataByLabel<float>(hnswlib::labeltype(label));
}

std::vector<std::pair<int64_t, float>> HnswGraph::search(std::span<const float> query, size_t k) const {
  VERITY_CHECK(query.size() == impl_->dim, ConfigError, "hnsw graph: query has ", query.size(), " floats, dim is ",
               impl_->dim);
  std::vector<std::pair<int64_t, float>> out;
  if (k == 0 || impl_->hnsw->cur_element_count == impl_->hnsw->num_deleted_) return out;
  auto heap = impl_->hnsw->searchKnn(query.data(), k);  // farthest on top
  out.resize(heap.size());
  for (size_t r = heap.size(); r-- > 0; heap.pop()) out[r] = {int64_t(heap.top().second), 1.0f - heap.top().first};
  return out;
}

std::string HnswGraph::serialize() const {
  ScratchFile scratch((std::filesystem::temp_directory_path() / "verity").string());
  impl_->hnsw->saveIndex(scratch.path());
  return read_file(scratch.path());
}

std::unique_ptr<HnswGraph> HnswGraph::deserialize(size_t dim, const HnswOptions& o, std::span<const std::byte> dump,
                                                  const std::string& where) {
  check_hnsw_dump(ByteReader(dump, where), where, dim, SIZE_MAX, o, false);
  auto g = std::make_unique<HnswGraph>(dim, o, 16);
  ByteReader r(dump, where);
  r.read<size_t>();
  const auto capacity = r.read<size_t>();
  g->impl_->hnsw = load_hnsw_dump(dump, g->impl_->space, capacity, where);
  g->impl_->hnsw->setEf(o.ef_search);
  return g;
}

std::vector<int64_t> HnswGraph::live_labels() const {
  std::vector<int64_t> out;
  for (const auto& [label, internal] : impl_->hnsw->label_lookup_)
    if (!impl_->hnsw->isMarkedDeleted(internal)) out.push_back(int64_t(label));
  return out;
}

float inner_product(const float* a, const float* b, size_t dim) {
  // One space per dimension and thread: the distance function reads its dimension from it.
  thread_local std::unique_ptr<hnswlib::InnerProductSpace> space;
  thread_local size_t space_dim = 0;
  if (space_dim != dim) {
    space = std::make_unique<hnswlib::InnerProductSpace>(dim);
    space_dim = dim;
  }
  return 1.0f - space->get_dist_func()(a, b, space->get_dist_func_param());
}

}  // namespace verity::index
