#include "verify/pair_scoring.hpp"

#include <cmath>
#include <functional>

#include "core/error.hpp"
#include "verify/bf16_maps.hpp"

namespace verity::verify {

float cosine(std::span<const float> a, std::span<const float> b) {
  VERITY_CHECK(a.size() == b.size(), ConfigError, "cosine: sizes ", a.size(), " and ", b.size());
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) dot += double(a[i]) * b[i], na += double(a[i]) * a[i], nb += double(b[i]) * b[i];
  return na > 0 && nb > 0 ? float(dot / std::sqrt(na * nb)) : 0.0f;
}

PairContext pair_context(const TextTokens& query, const TextTokens& candidate) {
  PairContext ctx;
  ctx.query_ids = query.ids;
  ctx.candidate_ids = candidate.ids;
  if (!query.pooled.empty() && !candidate.pooled.empty()) {
    ctx.pooled_cosine = cosine(query.pooled, candidate.pooled);
    ctx.query_pooled = query.pooled, ctx.candidate_pooled = candidate.pooled;
  }
  return ctx;
}

namespace {
void check_text(const TextTokens& t, size_t dim, const char* what, size_t index) {
  VERITY_CHECK(dim > 0 && t.tokens.size() % dim == 0, ConfigError, "score_texts: ", what, " ", index,
               " has ", t.tokens.size(), " floats, not a multiple of dim=", dim);
  VERITY_CHECK(t.ids.empty() || t.ids.size() == t.tokens.size() / dim, ConfigError, "score_texts: ",
               what, " ", index, " has ", t.ids.size(), " token ids for ", t.tokens.size() / dim, " tokens");
}
}  // namespace

namespace {
// Maps of one query against candidates with the stage-2 kernel.
std::vector<SimilarityMap> stage2_maps(const TextTokens& query, std::span<const TextTokens> candidates,
                                       size_t dim) {
  if (use_bf16_maps())
    return similarity_maps_bf16(query.tokens, candidates.size(), dim, [&](size_t c) {
      return TokenRows{RowCodes::f32, candidates[c].tokens.data(), nullptr, candidates[c].tokens.size() / dim};
    });
  return SimilarityMap::compute_streamed(query.tokens, candidates.size(), dim,
                                         [&](size_t c, std::vector<float>& rows) {
                                           rows.assign(candidates[c].tokens.begin(), candidates[c].tokens.end());
                                           return rows.size() / dim;
                                         });
}

// Scores map i of the pair (queries[i], candidates[i]); empty maps score 0.
std::vector<float> score_maps(const Verifier& verifier, std::vector<SimilarityMap>& maps,
                              const std::function<const TextTokens&(size_t)>& query_of,
                              std::span<const TextTokens> candidates) {
  std::vector<float> out(maps.size(), 0.0f);
  std::vector<SimilarityMap> scorable;
  std::vector<PairContext> context;
  std::vector<size_t> where;
  const bool with_context = verifier.uses_context();
  for (size_t c = 0; c < maps.size(); ++c) {
    if (maps[c].empty()) continue;
    where.push_back(c);
    scorable.push_back(std::move(maps[c]));
    context.push_back(with_context ? pair_context(query_of(c), candidates[c]) : PairContext{});
  }
  auto s = verifier.score_pairs(scorable, context);
  for (size_t i = 0; i < where.size(); ++i) out[where[i]] = s[i];
  return out;
}
}  // namespace

std::vector<float> score_texts(const Verifier& verifier, const TextTokens& query,
                               std::span<const TextTokens> candidates, size_t dim) {
  check_text(query, dim, "query", 0);
  for (size_t c = 0; c < candidates.size(); ++c) check_text(candidates[c], dim, "candidate", c);
  auto maps = stage2_maps(query, candidates, dim);
  return score_maps(verifier, maps, [&](size_t) -> const TextTokens& { return query; }, candidates);
}

SimilarityMap stage2_map(const TextTokens& query, const TextTokens& candidate, size_t dim) {
  check_text(query, dim, "query", 0);
  check_text(candidate, dim, "candidate", 0);
  return std::move(stage2_maps(query, std::span<const TextTokens>(&candidate, 1), dim)[0]);
}

std::vector<float> score_text_pairs(const Verifier& verifier, std::span<const TextTokens> a,
                                    std::span<const TextTokens> b, size_t dim) {
  VERITY_CHECK(a.size() == b.size(), ConfigError, "score_text_pairs: ", a.size(), " first texts but ", b.size(),
               " second texts");
  std::vector<SimilarityMap> maps;
  maps.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    check_text(a[i], dim, "first text", i);
    check_text(b[i], dim, "second text", i);
    maps.push_back(std::move(stage2_maps(a[i], b.subspan(i, 1), dim)[0]));
  }
  return score_maps(verifier, maps, [&](size_t i) -> const TextTokens& { return a[i]; }, b);
}

}  // namespace verity::verify
