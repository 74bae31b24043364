#include "nearmiss/evaluate.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "nearmiss/metrics.hpp"
#include "verify/learned.hpp"
#include "eval/pair_eval.hpp"

namespace verity::nearmiss {
namespace {

Metrics metrics_of(const std::vector<float>& pos, const std::vector<float>& neg) {
  return {pairwise_accuracy(pos, neg), roc_auc(pos, neg), pos.size()};
}

}  // namespace

PairScores score_triples(const std::vector<data::Triple>& triples, const encode::Encoder& encoder,
                         const verify::Verifier* verifier, size_t batch_size) {
  VERITY_CHECK(batch_size > 0, ConfigError, "nearmiss-eval: batch size must be positive");
  // Pairs 2i and 2i+1 are (query, positive) and (query, negative) of triple i,
  // so a chunk holds whole triples and encodes each query once.
  std::vector<std::string> first, second;
  first.reserve(2 * triples.size());
  second.reserve(2 * triples.size());
  for (const auto& t : triples) {
    first.push_back(t.query), second.push_back(t.positive);
    first.push_back(t.query), second.push_back(t.negative);
  }
  auto scores = eval::score_pairs(first, second, encoder, verifier, 2 * batch_size, "scoring triples");
  PairScores out;
  for (size_t i = 0; i < triples.size(); ++i) {
    out.positive.push_back(scores[2 * i]);
    out.negative.push_back(scores[2 * i + 1]);
  }
  return out;
}

Report summarize(const std::vector<data::Triple>& triples, const PairScores& scores) {
  VERITY_CHECK(scores.positive.size() == triples.size() && scores.negative.size() == triples.size(),
               ConfigError, "nearmiss-eval: ", triples.size(), " triples but ", scores.positive.size(), "/",
               scores.negative.size(), " scores");
  Report r;
  r.overall = metrics_of(scores.positive, scores.negative);
  std::map<std::string, std::pair<std::vector<float>, std::vector<float>>> types, sources;
  for (size_t i = 0; i < triples.size(); ++i) {
    auto& t = types[triples[i].type.empty() ? "unknown" : triples[i].type];
    t.first.push_back(scores.positive[i]);
    t.second.push_back(scores.negative[i]);
    auto& s = sources[triples[i].source.empty() ? "unknown" : triples[i].source];
    s.first.push_back(scores.positive[i]);
    s.second.push_back(scores.negative[i]);
  }
  for (auto& [k, v] : types) r.by_type[k] = metrics_of(v.first, v.second);
  for (auto& [k, v] : sources) r.by_source[k] = metrics_of(v.first, v.second);
  return r;
}

std::unique_ptr<verify::Verifier> make_eval_verifier(const std::string& spec) {
  if (spec == "none") return nullptr;
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const auto kinds = verify::verifier_kinds();
  const bool known_kind =
      std::any_of(kinds.begin(), kinds.end(), [&](const verify::VerifierKind& k) { return k.name == kind; });
  if (!known_kind && file_exists(spec) && !is_directory(spec)) return verify::load_verifier_file(spec);
  return verify::make_verifier(spec);
}

}  // namespace verity::nearmiss
