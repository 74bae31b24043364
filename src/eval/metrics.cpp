#include "eval/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <set>
#include <unordered_set>

#include "core/error.hpp"

namespace verity::eval {
namespace {

constexpr std::string_view kValidMetrics = "ndcg@K, acc@K, recall@K, mrr@K, map@K (K >= 1)";

struct MetricName {
  std::string_view prefix;
  Metric metric;
};
constexpr MetricName kMetricNames[] = {{"ndcg", Metric::kNdcg},
                                       {"acc", Metric::kAcc},
                                       {"recall", Metric::kRecall},
                                       {"mrr", Metric::kMrr},
                                       {"map", Metric::kMap}};

// The judged grades of one query and the quantities every metric needs.
struct Judgments {
  const std::map<std::string, int>* grades;
  size_t num_relevant = 0;
  std::vector<int> ideal_gains;  // grades >= 1, descending

  explicit Judgments(const std::map<std::string, int>& g) : grades(&g) {
    for (const auto& [doc, grade] : g)
      if (grade >= 1) ideal_gains.push_back(grade);
    std::sort(ideal_gains.begin(), ideal_gains.end(), std::greater<>());
    num_relevant = ideal_gains.size();
  }
  int grade(const std::string& doc) const {
    auto it = grades->find(doc);
    return it == grades->end() ? 0 : it->second;
  }
};

double discount(size_t rank) { return 1.0 / std::log2(double(rank) + 1.0); }  // rank is 1-based

double compute(const MetricSpec& spec, const std::vector<int>& ranked_grades,
               const Judgments& j) {
  const size_t k = std::min(size_t(spec.k), ranked_grades.size());
  switch (spec.metric) {
    case Metric::kNdcg: {
      double dcg = 0, ideal = 0;
      for (size_t i = 0; i < k; ++i)
        if (ranked_grades[i] > 0) dcg += ranked_grades[i] * discount(i + 1);
      for (size_t i = 0; i < std::min(size_t(spec.k), j.ideal_gains.size()); ++i)
        ideal += j.ideal_gains[i] * discount(i + 1);
      return ideal > 0 ? dcg / ideal : 0.0;
    }
    case Metric::kAcc:
      for (size_t i = 0; i < k; ++i)
        if (ranked_grades[i] >= 1) return 1.0;
      return 0.0;
    case Metric::kRecall: {
      size_t hits = 0;
      for (size_t i = 0; i < k; ++i) hits += ranked_grades[i] >= 1;
      return double(hits) / double(j.num_relevant);
    }
    case Metric::kMrr:
      for (size_t i = 0; i < k; ++i)
        if (ranked_grades[i] >= 1) return 1.0 / double(i + 1);
      return 0.0;
    case Metric::kMap: {
      size_t hits = 0;
      double sum = 0;
      for (size_t i = 0; i < k; ++i) {
        if (ranked_grades[i] >= 1) {
          ++hits;
          sum += double(hits) / double(i + 1);
        }
      }
      return sum / double(j.num_relevant);
    }
  }
  VERITY_ASSERT(false);
  return 0;
}

}  // namespace

void rank_in_place(std::vector<ScoredDoc>& docs, std::string_view query_id) {
  for (const auto& d : docs)
    VERITY_CHECK(std::isfinite(d.score), FormatError, "run: query \"", query_id, "\" document \"",
                 d.doc_id, "\" has non-finite score ", d.score);
  std::sort(docs.begin(), docs.end(), [](const ScoredDoc& a, const ScoredDoc& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.doc_id > b.doc_id;
  });
  if (docs.size() > 1) {
    std::unordered_set<std::string_view> seen;
    seen.reserve(docs.size());
    for (const auto& d : docs)
      VERITY_CHECK(seen.insert(d.doc_id).second, FormatError, "run: query \"", query_id,
                   "\" lists document \"", d.doc_id, "\" twice");
  }
}

std::string MetricSpec::name() const {
  for (const auto& m : kMetricNames)
    if (m.metric == metric) return cat(m.prefix, "@", k);
  VERITY_ASSERT(false);
  return {};
}

MetricSpec parse_metric(std::string_view name) {
  size_t at = name.find('@');
  VERITY_CHECK(at != std::string_view::npos, ConfigError, "metric \"", name,
               "\" has no @K; valid: ", kValidMetrics);
  std::string_view prefix = name.substr(0, at), digits = name.substr(at + 1);
  int k = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  VERITY_CHECK(ec == std::errc() && end == digits.data() + digits.size() && k >= 1, ConfigError,
               "metric \"", name, "\": K must be an integer >= 1; valid: ", kValidMetrics);
  for (const auto& m : kMetricNames)
    if (m.prefix == prefix) return {m.metric, k};
  throw ConfigError(cat("unknown metric \"", name, "\"; valid: ", kValidMetrics));
}

std::vector<MetricSpec> parse_metrics(std::string_view list) {
  std::vector<MetricSpec> specs;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string_view item = list.substr(start, comma == list.npos ? list.npos : comma - start);
    specs.push_back(parse_metric(item));
    if (comma == list.npos) break;
    start = comma + 1;
  }
  return specs;
}

Evaluation evaluate(const Run& run, const Qrels& qrels, const EvalOptions& options) {
  VERITY_CHECK(!options.metrics.empty(), ConfigError, "evaluate: no metrics requested");
  Evaluation ev;
  std::set<std::string> names;
  for (const auto& spec : options.metrics) {
    VERITY_CHECK(spec.k >= 1, ConfigError, "metric ", spec.name(), ": K must be >= 1");
    std::string name = spec.name();
    VERITY_CHECK(names.insert(name).second, ConfigError, "metric ", name, " requested twice");
    ev.metric_names.push_back(name);
    ev.mean[name] = 0;
  }

  std::vector<ScoredDoc> ranked;
  std::vector<int> grades;
  for (const auto& [qid, judged] : qrels) {
    Judgments j(judged);
    if (j.num_relevant == 0) {
      ev.counts.skipped_no_relevant++;
      continue;
    }
    ev.counts.queries++;
    grades.clear();
    auto it = run.find(qid);
    if (it == run.end()) {
      ev.counts.missing_from_run++;
    } else {
      ranked = it->second;
      if (options.ignore_identical_ids) {
        size_t before = ranked.size();
        std::erase_if(ranked, [&query = qid](const ScoredDoc& d) { return d.doc_id == query; });
        ev.counts.identical_ids_dropped += before - ranked.size();
      }
      rank_in_place(ranked, qid);
      for (const auto& d : ranked) grades.push_back(j.grade(d.doc_id));
    }
    auto& per_query = ev.per_query[qid];
    for (size_t m = 0; m < options.metrics.size(); ++m) {
      double v = compute(options.metrics[m], grades, j);
      per_query[ev.metric_names[m]] = v;
      ev.mean[ev.metric_names[m]] += v;
    }
  }
  for (const auto& [qid, docs] : run)
    if (!qrels.count(qid)) ev.counts.ignored_not_in_qrels++;
  if (ev.counts.queries > 0)
    for (auto& [name, sum] : ev.mean) sum /= double(ev.counts.queries);
  return ev;
}

}  // namespace verity::eval
