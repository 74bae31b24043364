#include "eval/pair_eval.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/error.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"
#include "verify/pair_scoring.hpp"

namespace verity::eval {

std::vector<float> score_pairs(std::span<const std::string> a, std::span<const std::string> b,
                               const encode::Encoder& encoder, const verify::Verifier* verifier, size_t chunk,
                               const std::string& label) {
  const verify::Verifier* one[] = {verifier};
  return std::move(score_pairs_many(a, b, encoder, one, chunk, label)[0]);
}

std::vector<std::vector<float>> score_pairs_many(std::span<const std::string> a, std::span<const std::string> b,
                                                 const encode::Encoder& encoder,
                                                 std::span<const verify::Verifier* const> verifiers, size_t chunk,
                                                 const std::string& label) {
  VERITY_CHECK(a.size() == b.size(), ConfigError, "score_pairs: ", a.size(), " first texts but ", b.size(),
               " second texts");
  VERITY_CHECK(chunk > 0, ConfigError, "score_pairs: chunk size must be positive");
  // A verifier reads only the maps of the encoder it was trained on.
  std::string identity;
  for (const auto* v : verifiers) {
    if (!v || v->encoder().empty()) continue;
    if (identity.empty()) identity = encode::encoder_identity(encoder);
    verify::check_trained_encoder(*v, identity, encoder.spec());
  }
  std::vector<std::vector<float>> out(verifiers.size());
  for (auto& o : out) o.reserve(a.size());
  encode::EncodeOptions eo;
  eo.batch_size = chunk;
  eo.with_tokens = std::any_of(verifiers.begin(), verifiers.end(), [](const auto* v) { return v != nullptr; });
  Progress progress(label, a.size());
  for (size_t begin = 0; begin < a.size(); begin += chunk) {
    check_interrupt();
    const size_t end = std::min(a.size(), begin + chunk);
    std::vector<std::string> texts;
    std::unordered_map<std::string, size_t> slot_of;
    auto slot = [&](const std::string& s) {
      auto [it, fresh] = slot_of.try_emplace(s, texts.size());
      if (fresh) texts.push_back(s);
      return it->second;
    };
    std::vector<std::pair<size_t, size_t>> ends;
    for (size_t i = begin; i < end; ++i) ends.push_back({slot(a[i]), slot(b[i])});
    auto enc = encoder.encode(texts, eo);
    std::vector<std::vector<float>> blocks;
    std::vector<std::vector<uint32_t>> ids;
    std::vector<verify::TextTokens> first, second;
    if (eo.with_tokens) {
      blocks.resize(texts.size());
      ids.resize(texts.size());
      for (size_t t = 0; t < texts.size(); ++t) {
        blocks[t] = enc.token_block(t);
        ids[t] = verify::token_identities(enc.token_strings[t]);
      }
      auto view = [&](size_t t) { return verify::TextTokens{blocks[t], ids[t], enc.pooled_row(t)}; };
      for (auto [x, y] : ends) first.push_back(view(x)), second.push_back(view(y));
    }
    for (size_t v = 0; v < verifiers.size(); ++v) {
      if (!verifiers[v]) {
        for (auto [x, y] : ends) out[v].push_back(verify::cosine(enc.pooled_row(x), enc.pooled_row(y)));
        continue;
      }
      auto s = verify::score_text_pairs(*verifiers[v], first, second, enc.dim);
      VERITY_CHECK(s.size() == ends.size(), Error, "verifier ", verifiers[v]->spec(), " returned ", s.size(),
                   " scores for ", ends.size(), " pairs");
      out[v].insert(out[v].end(), s.begin(), s.end());
    }
    progress.add(end - begin);
  }
  progress.finish();
  return out;
}

std::vector<std::vector<float>> score_labelled_pairs(std::span<const data::LabelledPair> pairs,
                                                     const encode::Encoder& encoder,
                                                     std::span<const verify::Verifier* const> verifiers,
                                                     size_t chunk) {
  std::vector<std::string> a, b;
  a.reserve(pairs.size());
  b.reserve(pairs.size());
  for (const auto& p : pairs) a.push_back(p.a), b.push_back(p.b);
  return score_pairs_many(a, b, encoder, verifiers, chunk);
}

}  // namespace verity::eval
