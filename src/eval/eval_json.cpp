#include "eval/detail/eval_json.hpp"

#include <map>

#include "core/error.hpp"

namespace verity::eval::detail {

nlohmann::json result_json(const RetrievalEvalResult& r, const RetrievalEvalOptions& o) {
  nlohmann::json j;
  for (const auto& [name, value] : r.evaluation.mean) j[name] = value;
  const auto& c = r.evaluation.counts;
  j["queries"] = c.queries;
  j["queries_skipped_no_relevant"] = c.skipped_no_relevant;
  j["queries_missing_from_run"] = c.missing_from_run;
  j["identical_ids_dropped"] = c.identical_ids_dropped;
  j["docs"] = r.docs;
  j["qps"] = r.qps;
  j["threads"] = o.threads;
  j["index_seconds"] = r.index_seconds;
  j["index_from_cache"] = r.index_from_cache;
  j["search_seconds"] = r.search_seconds;
  if (o.threads == 1) {  // per-query latency is measured only then
    for (auto [prefix, l] : {std::pair{"", &r.latency}, {"encode_", &r.encode_latency},
                             {"stage1_", &r.stage1_latency}, {"stage2_", &r.stage2_latency}}) {
      j[std::string(prefix) + "latency_ms_p50"] = l->p50_ms;
      j[std::string(prefix) + "latency_ms_p95"] = l->p95_ms;
    }
  }
  j["pipeline"] = r.pipeline;
  j["index_dir"] = r.index_dir;
  return j;
}

nlohmann::json report_json(std::span<const RetrievalEvalResult> results, const RetrievalEvalOptions& o,
                           const std::string& split) {
  VERITY_ASSERT(!results.empty());
  nlohmann::json out;
  if (results.size() == 1) {
    out = result_json(results.front(), o);
    out["dataset"] = results.front().dataset;
  } else {
    nlohmann::json per_dataset = nlohmann::json::object();
    std::map<std::string, double> sums;
    for (const auto& r : results) {
      per_dataset[r.dataset] = result_json(r, o);
      for (const auto& m : o.metrics.metrics) sums[m.name()] += r.evaluation.mean.at(m.name());
    }
    nlohmann::json mean;
    for (const auto& [name, sum] : sums) mean[name] = sum / double(results.size());
    out = {{"datasets", per_dataset}, {"mean", mean}};
  }
  out["retriever"] = o.pipeline.stage1;
  out["verifier"] = o.pipeline.verifier;
  out["split"] = split;
  out["k"] = o.k;
  return out;
}

}  // namespace verity::eval::detail
