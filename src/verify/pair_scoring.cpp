#include "verify/pair_scoring.hpp"

#include <cmath>

#include "core/error.hpp"
#include "verify/bf16_maps.hpp"

namespace verity::verify {

float cosine(std::span<const float> a, std::span<const float> b) {
  VERITY_CHECK(a.size() == b.size(), ConfigError, "cosine: sizes ", a.size(), " and ", b.size());
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) dot += double(a[i]) * b[i], na += double(a[i]) * a[i], nb += double(b[i]) * b[i];
  return na > 0 && nb > 0 ? float(dot / std::sqrt(na * nb)) : 0.0f;
}

namespace {
void check_text(const TextTokens& t, size_t dim, const char* what, size_t index) {
  VERITY_CHECK(dim > 0 && t.tokens.size() % dim == 0, ConfigError, "score_texts: ", what, " ", index,
               " has ", t.tokens.size(), " floats, not a multiple of dim=", dim);
  VERITY_CHECK(t.ids.empty() || t.ids.size() == t.tokens.size() / dim, ConfigError, "score_texts: ",
               what, " ", index, " has ", t.ids.size(), " token ids for ", t.tokens.size() / dim, " tokens");
}
}  // namespace

std::vector<float> score_texts(const Verifier& verifier, const TextTokens& query,
                               std::span<const TextTokens> candidates, size_t dim) {
  check_text(query, dim, "query", 0);
  for (size_t c = 0; c < candidates.size(); ++c) check_text(candidates[c], dim, "candidate", c);
  std::vector<SimilarityMap> maps;
  if (use_bf16_maps())
    maps = similarity_maps_bf16(query.tokens, candidates.size(), dim, [&](size_t c) {
      return TokenRows{RowCodes::f32, candidates[c].tokens.data(), nullptr, candidates[c].tokens.size() / dim};
    });
  else
    maps = SimilarityMap::compute_streamed(query.tokens, candidates.size(), dim,
                                           [&](size_t c, std::vector<float>& rows) {
                                             rows.assign(candidates[c].tokens.begin(), candidates[c].tokens.end());
                                             return rows.size() / dim;
                                           });
  std::vector<float> out(candidates.size(), 0.0f);
  std::vector<SimilarityMap> scorable;
  std::vector<PairContext> context;
  std::vector<size_t> where;
  const bool with_context = verifier.uses_context();
  for (size_t c = 0; c < maps.size(); ++c) {
    if (maps[c].empty()) continue;
    where.push_back(c);
    scorable.push_back(std::move(maps[c]));
    PairContext ctx;
    if (with_context) {
      ctx.query_ids = query.ids;
      ctx.candidate_ids = candidates[c].ids;
      if (!query.pooled.empty() && !candidates[c].pooled.empty())
        ctx.pooled_cosine = cosine(query.pooled, candidates[c].pooled);
    }
    context.push_back(ctx);
  }
  auto s = verifier.score_pairs(scorable, context);
  for (size_t i = 0; i < where.size(); ++i) out[where[i]] = s[i];
  return out;
}

}  // namespace verity::verify
