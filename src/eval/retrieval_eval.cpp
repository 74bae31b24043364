#include "eval/retrieval_eval.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"
#include "index/bm25.hpp"
#include "index/dense_index.hpp"
#include "text/analyzer.hpp"

namespace verity::eval {
namespace fs = std::filesystem;
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Ranked {
  uint32_t doc;
  float score;
};

// A prepared stage-1 retriever over one corpus.
class Retriever {
 public:
  virtual ~Retriever() = default;
  virtual std::vector<Ranked> search(const std::string& query, size_t k) const = 0;
  virtual std::vector<std::vector<Ranked>> search_batch(const std::vector<std::string>& queries,
                                                        size_t k, int threads) const = 0;
  virtual std::string spec() const = 0;
};

class Bm25Retriever final : public Retriever {
 public:
  Bm25Retriever(index::Bm25Index idx, std::string spec) : idx_(std::move(idx)), spec_(std::move(spec)) {}
  std::vector<Ranked> search(const std::string& q, size_t k) const override {
    return convert(idx_.search(q, k));
  }
  std::vector<std::vector<Ranked>> search_batch(const std::vector<std::string>& qs, size_t k,
                                                int threads) const override {
    std::vector<std::vector<Ranked>> out;
    for (auto& hits : idx_.search_batch(qs, k, threads)) out.push_back(convert(hits));
    return out;
  }
  std::string spec() const override { return spec_; }

 private:
  static std::vector<Ranked> convert(const std::vector<index::Hit>& hits) {
    std::vector<Ranked> r;
    r.reserve(hits.size());
    for (const auto& h : hits) r.push_back({h.doc, h.score});
    return r;
  }
  index::Bm25Index idx_;
  std::string spec_;
};

class DenseRetriever final : public Retriever {
 public:
  DenseRetriever(std::unique_ptr<encode::Encoder> enc, std::unique_ptr<index::DenseIndex> idx,
                 encode::EncodeOptions opts)
      : enc_(std::move(enc)), idx_(std::move(idx)), opts_(opts) {}
  std::vector<Ranked> search(const std::string& q, size_t k) const override {
    return search_batch({q}, k, 0).front();
  }
  std::vector<std::vector<Ranked>> search_batch(const std::vector<std::string>& qs, size_t k,
                                                int threads) const override {
    auto opts = opts_;
    if (threads > 0) opts.threads = threads;
    auto enc = enc_->encode(qs, opts);
    auto res = idx_->search(enc.pooled, k);
    std::vector<std::vector<Ranked>> out(qs.size());
    for (size_t q = 0; q < qs.size(); ++q) {
      auto ids = res.ids_of(q);
      auto scores = res.scores_of(q);
      for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] >= 0) out[q].push_back({uint32_t(ids[i]), scores[i]});
    }
    return out;
  }
  std::string spec() const override { return "dense:" + enc_->spec(); }

 private:
  std::unique_ptr<encode::Encoder> enc_;
  std::unique_ptr<index::DenseIndex> idx_;
  encode::EncodeOptions opts_;
};

// Size and mtime of every file of a model directory: a re-converted or
// retrained model gets a new cache key even under the same spec.
uint64_t model_fingerprint(const std::string& spec) {
  uint64_t h = fnv1a64(spec.data(), spec.size());
  auto colon = spec.find(':');
  std::string dir = colon == std::string::npos ? spec : spec.substr(colon + 1);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return h;
  std::vector<std::string> entries;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    auto t = e.last_write_time().time_since_epoch().count();
    entries.push_back(cat(e.path().string(), "|", e.file_size(), "|", t));
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& s : entries) h = fnv1a64(s.data(), s.size(), h);
  return h;
}

std::unique_ptr<Retriever> make_dense(const data::BeirDataset& ds, const RetrievalEvalOptions& opt,
                                      RetrievalEvalResult& result) {
  auto encoder = encode::make_encoder(opt.encoder);
  encode::EncodeOptions eo;
  eo.batch_size = opt.batch_size;
  eo.with_tokens = false;
  eo.threads = opt.threads;

  std::string cache_dir = opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir;
  std::string key_text = cat(encoder->spec(), "|", model_fingerprint(encoder->spec()), "|",
                             data::doc_fields_name(ds.corpus.fields), "|", eo.max_length);
  char name[96];
  std::snprintf(name, sizeof name, "%016llx-%016llx.vdns", (unsigned long long)ds.corpus.content_hash,
                (unsigned long long)fnv1a64(key_text.data(), key_text.size()));
  std::string cache_path = cache_dir + "/" + ds.name + "-" + name;

  auto t0 = Clock::now();
  if (opt.use_cache && fs::exists(cache_path)) {
    try {
      auto idx = index::load_dense_index(cache_path);
      VERITY_CHECK(idx->size() == ds.corpus.size() && idx->dim() == encoder->dim(), FormatError,
                   cache_path, ": holds ", idx->size(), "x", idx->dim(), ", expected ",
                   ds.corpus.size(), "x", encoder->dim());
      log("loaded document embeddings from cache ", cache_path);
      result.index_seconds = seconds_since(t0);
      result.index_from_cache = true;
      return std::make_unique<DenseRetriever>(std::move(encoder), std::move(idx), eo);
    } catch (const FormatError& e) {
      log("cache entry is stale or corrupt, rebuilding: ", e.what());
    }
  }
  auto idx = index::make_dense_index("flat", encoder->dim());
  Progress progress("encoding " + ds.name + " corpus", ds.corpus.size());
  constexpr size_t kChunk = 512;
  for (size_t start = 0; start < ds.corpus.size(); start += kChunk) {
    check_interrupt();
    size_t n = std::min(kChunk, ds.corpus.size() - start);
    std::vector<std::string> texts;
    std::vector<int64_t> ids;
    for (size_t i = start; i < start + n; ++i) {
      texts.push_back(ds.corpus.indexed_text(i));
      ids.push_back(int64_t(i));
    }
    auto enc = encoder->encode(texts, eo);
    idx->add(enc.pooled, ids);
    progress.add(n);
  }
  progress.finish();
  result.index_seconds = seconds_since(t0);
  if (opt.use_cache) {
    make_directories(cache_dir);
    idx->save(cache_path);
    log("cached document embeddings at ", cache_path);
  }
  return std::make_unique<DenseRetriever>(std::move(encoder), std::move(idx), eo);
}

std::unique_ptr<Retriever> make_retriever(const data::BeirDataset& ds,
                                          const RetrievalEvalOptions& opt,
                                          RetrievalEvalResult& result) {
  if (opt.retriever == "bm25") {
    std::vector<std::string> ids, texts;
    ids.reserve(ds.corpus.size());
    texts.reserve(ds.corpus.size());
    for (size_t i = 0; i < ds.corpus.size(); ++i) {
      ids.push_back(ds.corpus.docs[i].id);
      texts.push_back(ds.corpus.indexed_text(i));
    }
    auto analyzer = text::Analyzer::from_spec(opt.analyzer);
    auto t0 = Clock::now();
    auto bm25 = index::Bm25Index::build(ids, texts, analyzer,
                                        index::Bm25Params{double(opt.k1), double(opt.b)}, opt.threads);
    result.index_seconds = seconds_since(t0);
    return std::make_unique<Bm25Retriever>(
        std::move(bm25), cat("bm25:k1=", opt.k1, ",b=", opt.b, ",analyzer=", analyzer.spec()));
  }
  if (opt.retriever == "dense") return make_dense(ds, opt, result);
  throw ConfigError(cat("unknown retriever '", opt.retriever, "' (valid: bm25, dense)"));
}
}  // namespace

std::string default_cache_dir() {
  if (const char* v = std::getenv("VERITY_CACHE_DIR"); v && *v) return v;
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return std::string(v) + "/verity";
  if (const char* v = std::getenv("HOME"); v && *v) return std::string(v) + "/.cache/verity";
  return ".verity-cache";
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double pos = p / 100.0 * double(values.size() - 1);
  size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  return values[lo] + (values[hi] - values[lo]) * (pos - double(lo));
}

RetrievalEvalResult evaluate_retrieval(const data::BeirDataset& ds,
                                       const RetrievalEvalOptions& opt) {
  VERITY_CHECK(opt.k > 0, ConfigError, "--k must be positive");
  VERITY_CHECK(opt.threads >= 1, ConfigError, "--threads must be at least 1");
  RetrievalEvalResult result;
  result.dataset = ds.name;
  result.docs = ds.corpus.size();
  auto retriever = make_retriever(ds, opt, result);
  result.retriever_spec = retriever->spec();

  std::vector<std::string> query_texts;
  for (const auto& q : ds.queries) query_texts.push_back(q.text);
  std::vector<std::vector<Ranked>> hits;
  std::vector<double> latencies;
  auto t1 = Clock::now();
  if (opt.threads == 1) {
    Progress progress("searching " + ds.name, query_texts.size());
    hits.reserve(query_texts.size());
    for (const auto& q : query_texts) {
      check_interrupt();
      auto tq = Clock::now();
      hits.push_back(retriever->search(q, opt.k));
      latencies.push_back(seconds_since(tq) * 1000.0);
      progress.add();
    }
    progress.finish();
  } else {
    hits = retriever->search_batch(query_texts, opt.k, opt.threads);
  }
  result.search_seconds = seconds_since(t1);
  result.qps = query_texts.empty() ? 0 : double(query_texts.size()) / result.search_seconds;
  if (!latencies.empty()) {
    result.latency.p50_ms = percentile(latencies, 50);
    result.latency.p95_ms = percentile(latencies, 95);
    double sum = 0;
    for (double l : latencies) sum += l;
    result.latency.mean_ms = sum / double(latencies.size());
  }

  for (size_t qi = 0; qi < ds.queries.size(); ++qi) {
    auto& ranked = result.run[ds.queries[qi].id];
    ranked.reserve(hits[qi].size());
    for (const auto& h : hits[qi]) ranked.push_back({ds.corpus.docs[h.doc].id, h.score});
  }
  result.evaluation = evaluate(result.run, ds.qrels, opt.metrics);
  return result;
}

}  // namespace verity::eval
