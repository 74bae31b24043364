#include "nearmiss/evaluate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "nearmiss/metrics.hpp"
#include "verify/learned.hpp"
#include "verify/similarity_map.hpp"

namespace verity::nearmiss {
namespace {

float cosine(std::span<const float> a, std::span<const float> b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0.0f;
  return static_cast<float>(dot / std::sqrt(na * nb));
}

Metrics metrics_of(const std::vector<float>& pos, const std::vector<float>& neg) {
  return {pairwise_accuracy(pos, neg), roc_auc(pos, neg), pos.size()};
}

}  // namespace

PairScores score_triples(const std::vector<data::Triple>& triples, const encode::Encoder& encoder,
                         const verify::Verifier* verifier, size_t batch_size) {
  VERITY_CHECK(batch_size > 0, ConfigError, "nearmiss-eval: batch size must be positive");
  PairScores out;
  out.positive.reserve(triples.size());
  out.negative.reserve(triples.size());
  encode::EncodeOptions eo;
  eo.batch_size = batch_size;
  eo.with_tokens = verifier != nullptr;
  Progress progress("scoring triples", triples.size());
  for (size_t begin = 0; begin < triples.size(); begin += batch_size) {
    check_interrupt();
    const size_t end = std::min(triples.size(), begin + batch_size);
    std::vector<std::string> texts;
    std::unordered_map<std::string, size_t> index;
    auto slot = [&](const std::string& s) {
      auto [it, fresh] = index.try_emplace(s, texts.size());
      if (fresh) texts.push_back(s);
      return it->second;
    };
    std::vector<std::array<size_t, 3>> ids;
    for (size_t i = begin; i < end; ++i)
      ids.push_back({slot(triples[i].query), slot(triples[i].positive), slot(triples[i].negative)});
    auto enc = encoder.encode(texts, eo);
    if (!verifier) {
      for (auto& [q, p, n] : ids) {
        out.positive.push_back(cosine(enc.pooled_row(q), enc.pooled_row(p)));
        out.negative.push_back(cosine(enc.pooled_row(q), enc.pooled_row(n)));
      }
    } else {
      std::vector<std::vector<float>> blocks(texts.size());
      for (size_t b = 0; b < texts.size(); ++b) blocks[b] = enc.token_block(b);
      std::vector<verify::SimilarityMap> maps;
      maps.reserve(ids.size() * 2);
      for (auto& [q, p, n] : ids) {
        maps.push_back(verify::SimilarityMap::compute(blocks[q], blocks[p], enc.dim));
        maps.push_back(verify::SimilarityMap::compute(blocks[q], blocks[n], enc.dim));
      }
      auto scores = verifier->score_batch(maps);
      VERITY_CHECK(scores.size() == maps.size(), Error, "verifier ", verifier->spec(), " returned ",
                   scores.size(), " scores for ", maps.size(), " maps");
      for (size_t k = 0; k < ids.size(); ++k) {
        out.positive.push_back(scores[2 * k]);
        out.negative.push_back(scores[2 * k + 1]);
      }
    }
    progress.add(end - begin);
  }
  progress.finish();
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
