#include "index/bm25.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <exception>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/log.hpp"
#include "core/section_file.hpp"

namespace verity::index {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the BM25 file format is little-endian and is used in place from the mmap");
static_assert(sizeof(Bm25Index::Posting) == 8);

constexpr std::string_view kMagic = "VBM2";
constexpr uint32_t kVersion = 1;
constexpr size_t kBuildBlock = 4096;  // documents analyzed per parallel round

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

void check_params(const Bm25Params& p, std::string_view where) {
  VERITY_CHECK(std::isfinite(p.k1) && p.k1 >= 0, ConfigError, where, ": BM25 k1 must be >= 0, got ",
               p.k1);
  VERITY_CHECK(std::isfinite(p.b) && p.b >= 0 && p.b <= 1, ConfigError, where,
               ": BM25 b must be in [0, 1], got ", p.b);
}

double idf_of(uint64_t num_docs, uint64_t df) {
  return std::log(1.0 + (double(num_docs) - double(df) + 0.5) / (double(df) + 0.5));
}

// Runs fn(i) for i in [0, n) on up to `threads` threads; rethrows the
// exception of the lowest failing i, so errors do not depend on scheduling.
template <typename Fn>
void parallel_for(size_t n, int threads, Fn&& fn) {
  size_t workers = std::min(size_t(resolve_threads(threads)), n);
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t failed_at = n;
  std::exception_ptr failure;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(mu);
        if (i < failed_at) failed_at = i, failure = std::current_exception();
        next = n;  // stop handing out work
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// Per-thread dense accumulator, all zeros between searches; `touched` lists
// the documents that got a score so resetting is O(matches), not O(N).
struct Scratch {
  std::vector<float> acc;
  std::vector<uint32_t> touched;
};

}  // namespace

struct Bm25Index::Impl {
  std::string origin = "<in-memory BM25 index>";  // path for messages
  Bm25Params params;
  text::Analyzer analyzer;
  uint64_t total_length = 0;
  double avgdl = 0;

  std::span<const uint64_t> doc_id_offsets;
  std::string_view doc_id_bytes;
  std::span<const uint32_t> doc_lengths;
  std::span<const uint64_t> term_offsets;
  std::string_view term_bytes;
  std::span<const uint64_t> posting_offsets;
  std::span<const Posting> postings;

  // Backing storage: either owned vectors (build) or the mapped file (load).
  std::vector<uint64_t> own_doc_id_offsets, own_term_offsets, own_posting_offsets;
  std::string own_doc_id_bytes, own_term_bytes;
  std::vector<uint32_t> own_doc_lengths;
  std::vector<Posting> own_postings;
  std::unique_ptr<SectionFile> file;

  size_t num_docs() const { return doc_lengths.size(); }
  size_t num_terms() const { return posting_offsets.empty() ? 0 : posting_offsets.size() - 1; }
  std::string_view term(size_t t) const {
    return term_bytes.substr(term_offsets[t], term_offsets[t + 1] - term_offsets[t]);
  }
  std::optional<uint32_t> find(std::string_view t) const {
    size_t lo = 0, hi = num_terms();
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (term(mid) < t) lo = mid + 1;
      else hi = mid;
    }
    if (lo < num_terms() && term(lo) == t) return uint32_t(lo);
    return std::nullopt;
  }
  void point_at_owned() {
    doc_id_offsets = own_doc_id_offsets;
    doc_id_bytes = own_doc_id_bytes;
    doc_lengths = own_doc_lengths;
    term_offsets = own_term_offsets;
    term_bytes = own_term_bytes;
    posting_offsets = own_posting_offsets;
    postings = own_postings;
  }
  std::vector<Hit> search(std::span<const std::string> terms, size_t k, const Bm25Params& p) const;
};

Bm25Index::Bm25Index(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Bm25Index::Bm25Index(Bm25Index&&) noexcept = default;
Bm25Index& Bm25Index::operator=(Bm25Index&&) noexcept = default;
Bm25Index::~Bm25Index() = default;

// ---------------------------------------------------------------- build

Bm25Index Bm25Index::build(std::span<const std::string> doc_ids,
                           std::span<const std::string> texts, const text::Analyzer& analyzer,
                           Bm25Params params, int threads) {
  VERITY_CHECK(doc_ids.size() == texts.size(), ConfigError, "BM25 build: ", doc_ids.size(),
               " document ids but ", texts.size(), " texts");
  VERITY_CHECK(doc_ids.size() < UINT32_MAX, ConfigError, "BM25 build: ", doc_ids.size(),
               " documents exceed the 32-bit document index");
  check_params(params, "BM25 build");
  const size_t n = doc_ids.size();
  auto impl = std::make_unique<Impl>();
  impl->params = params;
  impl->analyzer = analyzer;

  {
    std::unordered_set<std::string_view> seen;
    seen.reserve(n);
    impl->own_doc_id_offsets.reserve(n + 1);
    impl->own_doc_id_offsets.push_back(0);
    for (size_t i = 0; i < n; ++i) {
      VERITY_CHECK(!doc_ids[i].empty(), ConfigError, "BM25 build: document #", i, " has an empty id");
      VERITY_CHECK(seen.insert(doc_ids[i]).second, ConfigError, "BM25 build: duplicate document id '",
                   doc_ids[i], "' (document #", i, ")");
      impl->own_doc_id_bytes += doc_ids[i];
      impl->own_doc_id_offsets.push_back(impl->own_doc_id_bytes.size());
    }
  }

  // Documents are analyzed in parallel blocks and merged in document order,
  // so every posting list comes out sorted by document and the index does
  // not depend on the thread count.
  struct DocTerms {
    std::vector<std::pair<std::string, uint32_t>> terms;  // sorted, with tf
    uint32_t length = 0;
  };
  std::unordered_map<std::string, uint32_t> term_ids;
  std::vector<std::vector<Posting>> lists;
  impl->own_doc_lengths.resize(n);
  Progress progress("bm25 index", n);
  std::vector<DocTerms> block;
  for (size_t begin = 0; begin < n; begin += kBuildBlock) {
    size_t end = std::min(n, begin + kBuildBlock);
    block.assign(end - begin, {});
    parallel_for(end - begin, threads, [&](size_t j) {
      check_interrupt();
      size_t doc = begin + j;
      std::vector<std::string> tokens;
      try {
        analyzer.analyze(texts[doc], tokens);
      } catch (const FormatError& e) {
        throw FormatError(cat("BM25 build: document '", doc_ids[doc], "' (#", doc, "): ", e.what()));
      }
      VERITY_CHECK(tokens.size() < UINT32_MAX, ConfigError, "BM25 build: document '", doc_ids[doc],
                   "' has ", tokens.size(), " tokens, over the 32-bit limit");
      std::sort(tokens.begin(), tokens.end());
      auto& out = block[j];
      out.length = uint32_t(tokens.size());
      for (size_t a = 0; a < tokens.size();) {
        size_t b = a + 1;
        while (b < tokens.size() && tokens[b] == tokens[a]) ++b;
        out.terms.emplace_back(std::move(tokens[a]), uint32_t(b - a));
        a = b;
      }
      progress.add();
    });
    for (size_t j = 0; j < block.size(); ++j) {
      uint32_t doc = uint32_t(begin + j);
      impl->own_doc_lengths[doc] = block[j].length;
      impl->total_length += block[j].length;
      for (auto& [term, tf] : block[j].terms) {
        auto [it, inserted] = term_ids.try_emplace(std::move(term), uint32_t(lists.size()));
        if (inserted) lists.emplace_back();
        lists[it->second].push_back({doc, tf});
      }
    }
  }
  progress.finish();

  // Lay the dictionary out in byte order so load() can binary-search it in place.
  std::vector<const std::string*> by_name(lists.size());
  for (const auto& [term, id] : term_ids) by_name[id] = &term;
  std::vector<uint32_t> order(lists.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return *by_name[a] < *by_name[b]; });
  uint64_t num_postings = 0;
  for (const auto& l : lists) num_postings += l.size();
  impl->own_term_offsets.reserve(order.size() + 1);
  impl->own_posting_offsets.reserve(order.size() + 1);
  impl->own_postings.reserve(num_postings);
  impl->own_term_offsets.push_back(0);
  impl->own_posting_offsets.push_back(0);
  for (uint32_t id : order) {
    impl->own_term_bytes += *by_name[id];
    impl->own_term_offsets.push_back(impl->own_term_bytes.size());
    impl->own_postings.insert(impl->own_postings.end(), lists[id].begin(), lists[id].end());
    impl->own_posting_offsets.push_back(impl->own_postings.size());
    std::vector<Posting>().swap(lists[id]);
  }
  impl->avgdl = n ? double(impl->total_length) / double(n) : 0.0;
  impl->point_at_owned();
  return Bm25Index(std::move(impl));
}

// ---------------------------------------------------------------- save / load

void Bm25Index::save(const std::string& path) const {
  const Impl& m = *impl_;
  SectionWriter w(path, kMagic, kVersion);
  ByteWriter parm;
  parm.write<double>(m.params.k1);
  parm.write<double>(m.params.b);
  parm.write<uint64_t>(m.num_docs());
  parm.write<uint64_t>(m.num_terms());
  parm.write<uint64_t>(m.postings.size());
  parm.write<uint64_t>(m.total_length);
  w.add("PARM", parm);
  ByteWriter anlz;
  anlz.write_string(m.analyzer.spec());
  w.add("ANLZ", anlz);
  w.add_array<uint64_t>("DIDO", m.doc_id_offsets);
  w.add("DIDS", m.doc_id_bytes.data(), m.doc_id_bytes.size());
  w.add_array<uint32_t>("DLEN", m.doc_lengths);
  w.add_array<uint64_t>("TRMO", m.term_offsets);
  w.add("TRMS", m.term_bytes.data(), m.term_bytes.size());
  w.add_array<uint64_t>("POFF", m.posting_offsets);
  w.add_array<Posting>("POST", m.postings);
  w.commit();
}

namespace {
// Offsets must start at 0, never decrease (strictly increase if entries must
// be non-empty) and end exactly at the size of what they index.
void check_offsets(const std::string& path, std::string_view tag, std::span<const uint64_t> off,
                   uint64_t expected_count, uint64_t end, bool non_empty_entries) {
  VERITY_CHECK(off.size() == expected_count + 1, FormatError, path, ": section '", tag, "' has ",
               off.size(), " offsets, expected ", expected_count + 1);
  VERITY_CHECK(off[0] == 0, FormatError, path, ": section '", tag, "' starts at ", off[0],
               ", expected 0");
  for (size_t i = 1; i < off.size(); ++i) {
    bool ok = non_empty_entries ? off[i] > off[i - 1] : off[i] >= off[i - 1];
    VERITY_CHECK(ok, FormatError, path, ": section '", tag, "' offset ", i, " (", off[i],
                 ") does not follow offset ", i - 1, " (", off[i - 1], ")");
  }
  VERITY_CHECK(off.back() == end, FormatError, path, ": section '", tag, "' ends at ", off.back(),
               " but its data has ", end, " entries/bytes");
}
}  // namespace

Bm25Index Bm25Index::load(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->origin = path;
  impl->file = std::make_unique<SectionFile>(path, kMagic, kVersion);
  const SectionFile& f = *impl->file;

  auto parm = f.reader("PARM");
  impl->params.k1 = parm.read<double>();
  impl->params.b = parm.read<double>();
  uint64_t num_docs = parm.read<uint64_t>();
  uint64_t num_terms = parm.read<uint64_t>();
  uint64_t num_postings = parm.read<uint64_t>();
  impl->total_length = parm.read<uint64_t>();
  VERITY_CHECK(parm.remaining() == 0, FormatError, path, ": section 'PARM' has ",
               parm.remaining(), " unexpected trailing bytes");
  try {
    check_params(impl->params, path);
  } catch (const ConfigError& e) {
    throw FormatError(e.what());
  }
  VERITY_CHECK(num_docs < UINT32_MAX, FormatError, path, ": num_docs ", num_docs,
               " exceeds the 32-bit document index");

  auto anlz = f.reader("ANLZ");
  std::string spec = anlz.read_string();
  try {
    impl->analyzer = text::Analyzer::from_spec(spec);
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": stored analyzer spec is not usable by this build: ", e.what()));
  }

  impl->doc_id_offsets = f.array<uint64_t>("DIDO");
  auto dids = f.section("DIDS");
  impl->doc_id_bytes = {reinterpret_cast<const char*>(dids.data()), dids.size()};
  check_offsets(path, "DIDO", impl->doc_id_offsets, num_docs, dids.size(), true);

  impl->doc_lengths = f.array<uint32_t>("DLEN");
  VERITY_CHECK(impl->doc_lengths.size() == num_docs, FormatError, path, ": section 'DLEN' has ",
               impl->doc_lengths.size(), " lengths, header says ", num_docs, " documents");
  uint64_t length_sum = 0;
  for (uint32_t l : impl->doc_lengths) length_sum += l;
  VERITY_CHECK(length_sum == impl->total_length, FormatError, path,
               ": document lengths sum to ", length_sum, ", header says ", impl->total_length);

  impl->term_offsets = f.array<uint64_t>("TRMO");
  auto trms = f.section("TRMS");
  impl->term_bytes = {reinterpret_cast<const char*>(trms.data()), trms.size()};
  check_offsets(path, "TRMO", impl->term_offsets, num_terms, trms.size(), true);
  for (size_t t = 1; t < num_terms; ++t)
    VERITY_CHECK(impl->term(t - 1) < impl->term(t), FormatError, path, ": term dictionary not sorted at term ",
                 t, " ('", impl->term(t - 1), "' before '", impl->term(t), "')");

  impl->posting_offsets = f.array<uint64_t>("POFF");
  impl->postings = f.array<Posting>("POST");
  VERITY_CHECK(impl->postings.size() == num_postings, FormatError, path, ": section 'POST' has ",
               impl->postings.size(), " postings, header says ", num_postings);
  check_offsets(path, "POFF", impl->posting_offsets, num_terms, num_postings, true);
  // Every token of every document is in exactly one posting, so the tfs
  // must add up to the total length.
  uint64_t tf_sum = 0;
  for (size_t t = 0; t < num_terms; ++t) {
    uint64_t prev_doc = 0;
    for (uint64_t i = impl->posting_offsets[t]; i < impl->posting_offsets[t + 1]; ++i) {
      const Posting& p = impl->postings[i];
      bool ordered = i == impl->posting_offsets[t] || p.doc > prev_doc;
      VERITY_CHECK(p.doc < num_docs && p.tf >= 1 && ordered, FormatError, path, ": posting ", i,
                   " of term '", impl->term(t), "' is invalid (doc ", p.doc, ", tf ", p.tf, ", ",
                   num_docs, " documents)");
      prev_doc = p.doc;
      tf_sum += p.tf;
    }
  }
  VERITY_CHECK(tf_sum == impl->total_length, FormatError, path, ": term frequencies sum to ",
               tf_sum, ", header says ", impl->total_length, " tokens");
  impl->avgdl = num_docs ? double(impl->total_length) / double(num_docs) : 0.0;
  return Bm25Index(std::move(impl));
}

// ---------------------------------------------------------------- search

std::vector<Hit> Bm25Index::Impl::search(std::span<const std::string> terms, size_t k,
                                         const Bm25Params& p) const {
  if (k == 0 || terms.empty() || num_docs() == 0) return {};
  // Distinct known terms with their query frequency, in term-id order so the
  // float summation order (and thus every score) is fixed.
  std::vector<std::pair<uint32_t, uint32_t>> query;
  for (const auto& t : terms)
    if (auto id = find(t)) query.emplace_back(*id, 1);
  if (query.empty()) return {};
  std::sort(query.begin(), query.end());
  size_t unique = 0;
  for (size_t i = 0; i < query.size(); ++i) {
    if (unique > 0 && query[unique - 1].first == query[i].first) ++query[unique - 1].second;
    else query[unique++] = query[i];
  }
  query.resize(unique);

  thread_local Scratch scratch;
  if (scratch.acc.size() < num_docs()) scratch.acc.resize(num_docs(), 0.0f);
  float* acc = scratch.acc.data();
  auto& touched = scratch.touched;
  touched.clear();

  const float c0 = float(p.k1 * (1.0 - p.b));
  const float c1 = avgdl > 0 ? float(p.k1 * p.b / avgdl) : 0.0f;
  const uint32_t* dl = doc_lengths.data();
  for (auto [id, qtf] : query) {
    const float w = float(idf_of(num_docs(), posting_offsets[id + 1] - posting_offsets[id]) *
                          (p.k1 + 1.0) * qtf);
    const Posting* it = postings.data() + posting_offsets[id];
    const Posting* end = postings.data() + posting_offsets[id + 1];
    for (; it != end; ++it) {
      const float tf = float(it->tf);
      float& a = acc[it->doc];
      if (a == 0.0f) touched.push_back(it->doc);  // every contribution is > 0
      a += w * tf / (tf + c0 + c1 * float(dl[it->doc]));
    }
  }

  std::vector<Hit> hits;
  hits.reserve(touched.size());
  for (uint32_t d : touched) {
    hits.push_back({d, acc[d]});
    acc[d] = 0.0f;
  }
  auto better = [](const Hit& a, const Hit& b) {
    return a.score > b.score || (a.score == b.score && a.doc < b.doc);
  };
  if (hits.size() > k) {
    std::nth_element(hits.begin(), hits.begin() + ptrdiff_t(k), hits.end(), better);
    hits.resize(k);
  }
  std::sort(hits.begin(), hits.end(), better);
  return hits;
}

std::vector<Hit> Bm25Index::search(std::string_view query, size_t k) const {
  return search(query, k, impl_->params);
}

std::vector<Hit> Bm25Index::search(std::string_view query, size_t k, const Bm25Params& params) const {
  check_params(params, "BM25 search");
  auto terms = impl_->analyzer.analyze(query);
  return impl_->search(terms, k, params);
}

std::vector<Hit> Bm25Index::search_terms(std::span<const std::string> terms, size_t k,
                                         const Bm25Params& params) const {
  check_params(params, "BM25 search");
  return impl_->search(terms, k, params);
}

std::vector<std::vector<Hit>> Bm25Index::search_batch(std::span<const std::string> queries,
                                                      size_t k, int threads) const {
  return search_batch(queries, k, threads, impl_->params);
}

std::vector<std::vector<Hit>> Bm25Index::search_batch(std::span<const std::string> queries,
                                                      size_t k, int threads,
                                                      const Bm25Params& params) const {
  check_params(params, "BM25 search");
  std::vector<std::vector<Hit>> results(queries.size());
  parallel_for(queries.size(), threads, [&](size_t i) {
    auto terms = impl_->analyzer.analyze(queries[i]);
    results[i] = impl_->search(terms, k, params);
  });
  return results;
}

// ---------------------------------------------------------------- statistics

size_t Bm25Index::num_docs() const { return impl_->num_docs(); }
size_t Bm25Index::num_terms() const { return impl_->num_terms(); }
uint64_t Bm25Index::num_postings() const { return impl_->postings.size(); }
uint64_t Bm25Index::total_length() const { return impl_->total_length; }
double Bm25Index::avgdl() const { return impl_->avgdl; }
const Bm25Params& Bm25Index::params() const { return impl_->params; }
const text::Analyzer& Bm25Index::analyzer() const { return impl_->analyzer; }

std::vector<std::string> Bm25Index::query_terms(std::string_view text) const {
  return impl_->analyzer.analyze(text);
}

uint32_t Bm25Index::df(std::string_view term) const {
  auto id = impl_->find(term);
  return id ? uint32_t(impl_->posting_offsets[*id + 1] - impl_->posting_offsets[*id]) : 0;
}

double Bm25Index::idf(std::string_view term) const { return idf_of(num_docs(), df(term)); }

uint32_t Bm25Index::doc_length(uint32_t doc) const {
  if (doc >= num_docs())
    throw std::out_of_range(cat(impl_->origin, ": document index ", doc, " >= ", num_docs()));
  return impl_->doc_lengths[doc];
}

std::string_view Bm25Index::doc_id(uint32_t doc) const {
  if (doc >= num_docs())
    throw std::out_of_range(cat(impl_->origin, ": document index ", doc, " >= ", num_docs()));
  const auto& off = impl_->doc_id_offsets;
  return impl_->doc_id_bytes.substr(off[doc], off[doc + 1] - off[doc]);
}

std::optional<uint32_t> Bm25Index::term_id(std::string_view term) const { return impl_->find(term); }

std::string_view Bm25Index::term(uint32_t id) const {
  if (id >= num_terms())
    throw std::out_of_range(cat(impl_->origin, ": term id ", id, " >= ", num_terms()));
  return impl_->term(id);
}

std::span<const Bm25Index::Posting> Bm25Index::postings(uint32_t id) const {
  if (id >= num_terms())
    throw std::out_of_range(cat(impl_->origin, ": term id ", id, " >= ", num_terms()));
  const auto& off = impl_->posting_offsets;
  return impl_->postings.subspan(off[id], off[id + 1] - off[id]);
}

}  // namespace verity::index
