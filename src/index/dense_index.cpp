#include "index/dense_index.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>
#include <unordered_set>

#include "core/error.hpp"
#include "core/section_file.hpp"
#include "index/dense_flat.hpp"
#include "index/dense_hnsw.hpp"

namespace verity::index {

namespace dense_detail {

void normalize_checked(std::span<const float> src, std::span<float> dst, size_t row) {
  double norm2 = 0;
  for (size_t c = 0; c < src.size(); ++c) {
    VERITY_CHECK(std::isfinite(src[c]), ConfigError, "dense index: vector ", row, " component ",
                 c, " is not finite (", src[c], ")");
    norm2 += double(src[c]) * src[c];
  }
  const float inv = norm2 > 0 ? float(1.0 / std::sqrt(norm2)) : 0.0f;
  for (size_t c = 0; c < src.size(); ++c) dst[c] = src[c] * inv;
}

size_t worker_count(size_t requested, size_t n_items) {
  size_t hw = requested ? requested : std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min(hw, n_items));
}

void parallel_for(size_t n, size_t threads, const std::function<void(size_t, size_t)>& fn) {
  const size_t workers = worker_count(threads, n);
  if (workers <= 1) {
    if (n) fn(0, n);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(workers);
  const size_t per = (n + workers - 1) / workers;
  for (size_t w = 0; w < workers; ++w) {
    const size_t b = w * per, e = std::min(n, b + per);
    if (b >= e) break;
    pool.emplace_back([&, w, b, e] {
      try {
        fn(b, e);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  }
  for (auto& t : pool) t.join();
  for (auto& err : errors)
    if (err) std::rethrow_exception(err);
}

void check_batch(std::span<const float> values, size_t dim, const char* what) {
  VERITY_CHECK(values.size() % dim == 0, ConfigError, "dense index: ", what, " hold ",
               values.size(), " floats, not a multiple of dim=", dim);
}

void check_ids(std::span<const int64_t> ids, size_t n, const char* index_name) {
  VERITY_CHECK(ids.empty() || ids.size() == n, ConfigError, index_name, ": ", ids.size(), " ids for ", n,
               " vectors");
  for (size_t r = 0; r < ids.size(); ++r)
    VERITY_CHECK(ids[r] >= 0, ConfigError, index_name, ": id ", ids[r], " of vector ", r,
                 " is negative (-1 marks an empty result slot)");
}

std::vector<float> normalized_rows(std::span<const float> vectors, size_t dim, size_t first) {
  check_batch(vectors, dim, "vectors");
  std::vector<float> out(vectors.size());
  for (size_t r = 0; r * dim < vectors.size(); ++r)
    normalize_checked(vectors.subspan(r * dim, dim), std::span(out).subspan(r * dim, dim), first + r);
  return out;
}

DenseSearchResult empty_result(std::span<const float> queries, size_t dim, size_t k,
                               const char* index_name) {
  VERITY_CHECK(k > 0, ConfigError, index_name, ": k must be positive");
  check_batch(queries, dim, "queries");
  DenseSearchResult out;
  out.n_queries = queries.size() / dim;
  out.k = k;
  out.ids.assign(out.n_queries * k, -1);
  out.scores.assign(out.n_queries * k, -std::numeric_limits<float>::infinity());
  return out;
}

}  // namespace dense_detail

namespace {


struct KeyValue {
  std::string key, value;
};

// Splits "kind:k=v,k=v" into kind and pairs.
std::pair<std::string, std::vector<KeyValue>> split_spec(std::string_view spec) {
  auto colon = spec.find(':');
  std::string kind(spec.substr(0, colon));
  std::vector<KeyValue> pairs;
  if (colon == std::string_view::npos) return {kind, pairs};
  std::string_view rest = spec.substr(colon + 1);
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    auto eq = item.find('=');
    VERITY_CHECK(eq != std::string_view::npos && eq > 0, ConfigError, "dense index spec '", spec,
                 "': expected key=value, got '", item, "'");
    pairs.push_back({std::string(item.substr(0, eq)), std::string(item.substr(eq + 1))});
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return {kind, pairs};
}

uint64_t parse_count(std::string_view spec, const KeyValue& kv, uint64_t min, uint64_t max) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(kv.value.data(), kv.value.data() + kv.value.size(), v);
  VERITY_CHECK(ec == std::errc() && end == kv.value.data() + kv.value.size(), ConfigError,
               "dense index spec '", spec, "': ", kv.key, "='", kv.value,
               "' is not a non-negative integer");
  VERITY_CHECK(v >= min && v <= max, ConfigError, "dense index spec '", spec, "': ", kv.key, "=",
               v, " is outside [", min, ", ", max, "]");
  return v;
}

HnswOptions parse_hnsw_options(std::string_view spec, const std::vector<KeyValue>& pairs) {
  HnswOptions o;
  std::unordered_set<std::string> seen;
  for (const auto& kv : pairs) {
    VERITY_CHECK(seen.insert(kv.key).second, ConfigError, "dense index spec '", spec,
                 "': key '", kv.key, "' given twice");
    if (kv.key == "M") o.M = parse_count(spec, kv, 2, 1024);
    else if (kv.key == "efc") o.ef_construction = parse_count(spec, kv, 1, 1 << 20);
    else if (kv.key == "ef") o.ef_search = parse_count(spec, kv, 1, 1 << 20);
    else if (kv.key == "seed") o.seed = parse_count(spec, kv, 0, UINT64_MAX);
    else if (kv.key == "threads") o.threads = parse_count(spec, kv, 0, 4096);
    else
      throw ConfigError(cat("dense index spec '", spec, "': unknown key '", kv.key,
                            "' for hnsw (valid: M, efc, ef, seed, threads)"));
  }
  return o;
}

std::string valid_kinds() {
  std::string out;
  for (const auto& k : dense_index_kinds()) out += (out.empty() ? "" : ", ") + k.name;
  return out;
}

}  // namespace

std::vector<DenseIndexKind> dense_index_kinds() {
  return {{"flat", "exact inner-product search over normalized vectors (the oracle)"},
          {"hnsw", "hnswlib graph; keys M=16, efc=200, ef=100, seed=100, threads=0 (all cores)"}};
}

std::unique_ptr<DenseIndex> make_dense_index(std::string_view spec, size_t dim) {
  VERITY_CHECK(dim > 0, ConfigError, "dense index spec '", spec, "': dim must be positive");
  auto [kind, pairs] = split_spec(spec);
  if (kind == "flat") {
    VERITY_CHECK(pairs.empty(), ConfigError, "dense index spec '", spec,
                 "': flat takes no keys");
    return std::make_unique<FlatIndex>(dim);
  }
  if (kind == "hnsw") return std::make_unique<HnswIndex>(dim, parse_hnsw_options(spec, pairs));
  throw ConfigError(cat("dense index spec '", spec, "': unknown kind '", kind, "' (valid: ",
                        valid_kinds(), ")"));
}

std::unique_ptr<DenseIndex> load_dense_index(const std::string& path) {
  SectionFile file(path, dense_detail::kMagic, dense_detail::kVersion);
  auto meta = file.reader("META");
  std::string kind = meta.read_string();
  std::string spec = meta.read_string();
  auto dim = meta.read<uint64_t>();
  auto count = meta.read<uint64_t>();
  VERITY_CHECK(dim > 0 && dim <= (1u << 20), FormatError, path, ": META dim=", dim,
               " is out of range");
  auto ids = file.array<int64_t>("IDS.");
  VERITY_CHECK(ids.size() == count, FormatError, path, ": IDS. holds ", ids.size(),
               " ids, META count=", count);
  // Negative ids would read as the -1 of an empty result slot.
  for (size_t i = 0; i < ids.size(); ++i)
    VERITY_CHECK(ids[i] >= 0, FormatError, path, ": IDS.[", i, "] is ", ids[i], " (ids are non-negative)");
  auto [spec_kind, pairs] = split_spec(spec);
  VERITY_CHECK(spec_kind == kind, FormatError, path, ": META kind '", kind,
               "' does not match spec '", spec, "'");
  if (kind == "flat") return FlatIndex::load(file, dim, count);
  if (kind == "hnsw") {
    HnswOptions options;
    try {
      options = parse_hnsw_options(spec, pairs);
    } catch (const ConfigError& e) {
      throw FormatError(cat(path, ": stored spec is invalid: ", e.what()));
    }
    return HnswIndex::load(file, dim, count, options);
  }
  throw FormatError(cat(path, ": unknown dense index kind '", kind, "' (this build reads: ",
                        valid_kinds(), ")"));
}

void dense_detail::write_common(SectionWriter& out, std::string_view kind, const std::string& spec,
                        size_t dim, std::span<const int64_t> ids) {
  ByteWriter meta;
  meta.write_string(kind);
  meta.write_string(spec);
  meta.write<uint64_t>(dim);
  meta.write<uint64_t>(ids.size());
  out.add("META", meta);
  out.add_array("IDS.", ids);
}

double recall_at_k(const DenseIndex& approx, const DenseIndex& exact,
                   std::span<const float> queries, size_t k) {
  VERITY_CHECK(approx.dim() == exact.dim(), ConfigError, "recall_at_k: dims differ (",
               approx.dim(), " vs ", exact.dim(), ")");
  auto a = approx.search(queries, k);
  auto e = exact.search(queries, k);
  if (e.n_queries == 0) return 0.0;
  double total = 0;
  for (size_t q = 0; q < e.n_queries; ++q) {
    std::unordered_set<int64_t> truth;
    for (auto id : e.ids_of(q))
      if (id >= 0) truth.insert(id);
    if (truth.empty()) {
      total += 1.0;
      continue;
    }
    size_t hit = 0;
    for (auto id : a.ids_of(q)) hit += truth.count(id);
    total += double(hit) / double(truth.size());
  }
  return total / double(e.n_queries);
}

}  // namespace verity::index
