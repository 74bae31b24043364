#include "eval/pair_eval.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/error.hpp"
#include "core/log.hpp"
#include "verify/pair_scoring.hpp"

namespace verity::eval {

std::vector<float> score_pairs(std::span<const std::string> a, std::span<const std::string> b,
                               const encode::Encoder& encoder, const verify::Verifier* verifier, size_t chunk,
                               const std::string& label) {
  VERITY_CHECK(a.size() == b.size(), ConfigError, "score_pairs: ", a.size(), " first texts but ", b.size(),
               " second texts");
  VERITY_CHECK(chunk > 0, ConfigError, "score_pairs: chunk size must be positive");
  std::vector<float> out;
  out.reserve(a.size());
  encode::EncodeOptions eo;
  eo.batch_size = chunk;
  eo.with_tokens = verifier != nullptr;
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
    if (!verifier) {
      for (auto [x, y] : ends) out.push_back(verify::cosine(enc.pooled_row(x), enc.pooled_row(y)));
    } else {
      std::vector<std::vector<float>> blocks(texts.size());
      std::vector<std::vector<uint32_t>> ids(texts.size());
      for (size_t t = 0; t < texts.size(); ++t) {
        blocks[t] = enc.token_block(t);
        ids[t] = verify::token_identities(enc.token_strings[t]);
      }
      auto view = [&](size_t t) { return verify::TextTokens{blocks[t], ids[t], enc.pooled_row(t)}; };
      std::vector<verify::TextTokens> first, second;
      for (auto [x, y] : ends) first.push_back(view(x)), second.push_back(view(y));
      auto s = verify::score_text_pairs(*verifier, first, second, enc.dim);
      VERITY_CHECK(s.size() == ends.size(), Error, "verifier ", verifier->spec(), " returned ", s.size(),
                   " scores for ", ends.size(), " pairs");
      out.insert(out.end(), s.begin(), s.end());
    }
    progress.add(end - begin);
  }
  progress.finish();
  return out;
}

std::vector<float> score_labelled_pairs(std::span<const data::LabelledPair> pairs, const encode::Encoder& encoder,
                                        const verify::Verifier* verifier, size_t chunk) {
  std::vector<std::string> a, b;
  a.reserve(pairs.size());
  b.reserve(pairs.size());
  for (const auto& p : pairs) a.push_back(p.a), b.push_back(p.b);
  return score_pairs(a, b, encoder, verifier, chunk);
}

}  // namespace verity::eval
