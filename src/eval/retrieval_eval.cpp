#include "eval/retrieval_eval.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"
#include "index/index_dir.hpp"
#include "search/index_builder.hpp"

namespace verity::eval {
namespace fs = std::filesystem;
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

search::IndexBuildOptions build_options(const RetrievalEvalOptions& opt) {
  const auto& p = opt.pipeline;
  search::IndexBuildOptions b;
  b.bm25 = p.stage1 != "dense";
  b.dense = p.stage1 != "bm25";
  b.tokens = p.verifier != "none";
  b.analyzer = opt.analyzer;
  b.k1 = opt.k1;
  b.b = opt.b;
  b.encoder = opt.encoder;
  b.dense_index = opt.dense_index;
  b.token_precision = opt.token_precision;
  b.batch_size = opt.batch_size;
  return b;
}


// Whether a cached index has every part the run needs and matches the corpus.
bool cache_usable(const std::string& dir, const data::BeirDataset& ds,
                  const search::IndexBuildOptions& b) {
  if (!verity::file_exists(dir + "/manifest.json")) return false;
  try {
    auto m = index::read_index_manifest(dir);
    if (m.corpus_hash != ds.corpus.content_hash || m.docs != ds.corpus.size()) return false;
    for (auto [need, part] : {std::pair{b.bm25, "bm25"}, {b.dense, "dense"}, {b.tokens, "tokens"}})
      if (need && !m.parts.count(part)) return false;
    return true;
  } catch (const Error& e) {
    log("cache entry ", dir, " is unreadable, rebuilding: ", e.what());
    return false;
  }
}

// Keeps the parts a cached entry already has, so adding token vectors later
// does not drop the dense part (both come from one encoding pass anyway).
void widen_to_existing(const std::string& dir, search::IndexBuildOptions& b) {
  try {
    auto m = index::read_index_manifest(dir);
    b.bm25 = b.bm25 || m.parts.count("bm25");
    b.dense = b.dense || m.parts.count("dense");
    b.tokens = b.tokens || m.parts.count("tokens");
  } catch (const Error&) {
  }
}
}  // namespace

std::string index_cache_key(const data::BeirDataset& ds, const search::IndexBuildOptions& b) {
  std::string key = cat(data::doc_fields_name(ds.corpus.fields), "|", b.analyzer, "|", b.k1, "|", b.b);
  if (b.dense || b.tokens) {
    auto spec = encode::make_encoder(b.encoder)->spec();
    // "tids+pool": token stores carry identities and pooled vectors (older cached ones do not).
    key += cat("|", spec, "|", search::encoder_fingerprint(spec), "|", b.dense_index, "|",
               b.token_precision, "|tids+pool");
  }
  char buf[80];
  std::snprintf(buf, sizeof buf, "-%016llx-%016llx", (unsigned long long)ds.corpus.content_hash,
                (unsigned long long)fnv1a64(key.data(), key.size()));
  return ds.name + buf;
}

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

LatencyStats latency_stats(const std::vector<double>& ms) {
  LatencyStats s;
  if (ms.empty()) return s;
  s.p50_ms = percentile(ms, 50);
  s.p95_ms = percentile(ms, 95);
  double sum = 0;
  for (double v : ms) sum += v;
  s.mean_ms = sum / double(ms.size());
  return s;
}

RetrievalEvalResult evaluate_retrieval(const data::BeirDataset& ds, const RetrievalEvalOptions& opt) {
  VERITY_CHECK(opt.k > 0, ConfigError, "--k must be positive");
  VERITY_CHECK(opt.threads >= 1, ConfigError, "--threads must be at least 1");
  search::validate(opt.pipeline);
  // The index is built for the pipeline, so there are no parts to choose "auto" from.
  VERITY_CHECK(opt.pipeline.stage1 != "auto" && opt.pipeline.verifier != "auto", ConfigError,
               "eval builds the index its pipeline needs: name the retriever and the verifier (not auto)");
  RetrievalEvalResult result;
  result.dataset = ds.name;
  result.docs = ds.corpus.size();

  auto build = build_options(opt);
  std::string root = opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir;
  std::string dir;
  std::unique_ptr<void, void (*)(void*)> temp_cleanup(nullptr, [](void*) {});
  if (opt.use_cache) {
    make_directories(root);
    dir = root + "/" + index_cache_key(ds, build);
  } else {
    dir = (fs::temp_directory_path() / cat("verity-eval-", ::getpid(), "-", ds.name)).string();
  }
  if (opt.use_cache && cache_usable(dir, ds, build)) {
    result.index_from_cache = true;
    log(ds.name, ": using cached index ", dir);
  } else {
    if (opt.use_cache) widen_to_existing(dir, build);
    build.created_by = "verity eval (cache)";
    log(ds.name, ": building index ", dir);
    auto t0 = Clock::now();
    search::build_index(ds.corpus, dir, build);
    result.index_seconds = seconds_since(t0);
  }
  result.index_dir = dir;

  auto popt = opt.pipeline;
  popt.candidates = std::max(popt.candidates, opt.k);
  std::unique_ptr<search::Pipeline> pipeline;
  try {
    pipeline = std::make_unique<search::Pipeline>(dir, popt);
  } catch (const FormatError& e) {
    VERITY_CHECK(result.index_from_cache, FormatError, e.what());
    log(ds.name, ": cached index is corrupt (", e.what(), "), rebuilding");
    widen_to_existing(dir, build);
    auto t0 = Clock::now();
    search::build_index(ds.corpus, dir, build);
    result.index_seconds = seconds_since(t0);
    result.index_from_cache = false;
    pipeline = std::make_unique<search::Pipeline>(dir, popt);
  }
  result.pipeline = pipeline->describe();

  size_t nq = ds.queries.size();
  std::vector<std::vector<search::SearchHit>> hits(nq);
  std::vector<search::StageTimings> timings(nq);
  auto t1 = Clock::now();
  {
    Progress progress("searching " + ds.name, nq);
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next++) < nq;) {
        if (interrupt_requested()) return;
        hits[i] = pipeline->search(ds.queries[i].text, opt.k, &timings[i]);
        progress.add();
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < opt.threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
    progress.finish();
  }
  check_interrupt();
  result.search_seconds = seconds_since(t1);
  result.qps = nq == 0 ? 0 : double(nq) / result.search_seconds;
  if (opt.threads == 1) {
    std::vector<double> total, enc, s1, s2;
    for (const auto& t : timings) {
      total.push_back(t.total_ms);
      enc.push_back(t.encode_ms);
      s1.push_back(t.stage1_ms);
      s2.push_back(t.stage2_ms);
    }
    result.latency = latency_stats(total);
    result.encode_latency = latency_stats(enc);
    result.stage1_latency = latency_stats(s1);
    result.stage2_latency = latency_stats(s2);
  }
  for (size_t qi = 0; qi < nq; ++qi) {
    auto& ranked = result.run[ds.queries[qi].id];
    for (const auto& h : hits[qi]) ranked.push_back({h.id, h.score});
  }
  result.evaluation = evaluate(result.run, ds.qrels, opt.metrics);
  if (!opt.use_cache) fs::remove_all(dir);
  return result;
}

}  // namespace verity::eval
