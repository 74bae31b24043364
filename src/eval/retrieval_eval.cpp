#include "eval/retrieval_eval.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/log.hpp"
#include "index/bm25.hpp"
#include "text/analyzer.hpp"

namespace verity::eval {
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double pos = p / 100.0 * double(values.size() - 1);
  size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  return values[lo] + (values[hi] - values[lo]) * (pos - double(lo));
}

RetrievalEvalResult evaluate_retrieval(const data::BeirDataset& ds,
                                       const RetrievalEvalOptions& opt) {
  VERITY_CHECK(opt.retriever == "bm25", ConfigError, "unknown retriever '", opt.retriever,
               "' (valid: bm25)");
  VERITY_CHECK(opt.k > 0, ConfigError, "--k must be positive");
  VERITY_CHECK(opt.threads >= 1, ConfigError, "--threads must be at least 1");
  RetrievalEvalResult result;
  result.dataset = ds.name;
  result.docs = ds.corpus.size();

  std::vector<std::string> ids, texts;
  ids.reserve(ds.corpus.size());
  texts.reserve(ds.corpus.size());
  for (size_t i = 0; i < ds.corpus.size(); ++i) {
    ids.push_back(ds.corpus.docs[i].id);
    texts.push_back(ds.corpus.indexed_text(i));
  }
  auto analyzer = text::Analyzer::from_spec(opt.analyzer);
  auto t0 = Clock::now();
  auto bm25 = index::Bm25Index::build(ids, texts, analyzer, index::Bm25Params{double(opt.k1), double(opt.b)},
                                      opt.threads);
  result.index_seconds = seconds_since(t0);

  std::vector<std::string> query_texts;
  for (const auto& q : ds.queries) query_texts.push_back(q.text);
  std::vector<std::vector<index::Hit>> hits;
  std::vector<double> latencies;
  auto t1 = Clock::now();
  if (opt.threads == 1) {
    Progress progress("searching " + ds.name, query_texts.size());
    hits.reserve(query_texts.size());
    for (const auto& q : query_texts) {
      check_interrupt();
      auto tq = Clock::now();
      hits.push_back(bm25.search(q, opt.k));
      latencies.push_back(seconds_since(tq) * 1000.0);
      progress.add();
    }
  } else {
    hits = bm25.search_batch(query_texts, opt.k, opt.threads);
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
    for (const auto& h : hits[qi]) ranked.push_back({std::string(bm25.doc_id(h.doc)), h.score});
  }
  result.evaluation = evaluate(result.run, ds.qrels, opt.metrics);
  return result;
}

}  // namespace verity::eval
