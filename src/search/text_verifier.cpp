#include "search/text_verifier.hpp"

#include "search/pipeline.hpp"

#include "core/error.hpp"
#include "encode/registry.hpp"
#include "text/utf8.hpp"
#include "text/word_kinds.hpp"
#include "verify/pair_scoring.hpp"
#include "verify/verifier.hpp"

namespace verity::search {

struct TextVerifier::Impl {
  std::shared_ptr<const encode::Encoder> encoder;
  std::shared_ptr<const verify::Verifier> verifier;
  std::optional<double> threshold;
  int threads = 0;
};

void check_query(const std::string& query) {
  VERITY_CHECK(!query.empty(), ConfigError, "query must not be empty");
  VERITY_CHECK(text::holds_content(query), ConfigError,
               "query holds no letter, number or symbol (only whitespace or punctuation)");
}

std::optional<double> verdict_threshold(std::optional<double> given, const verify::Verifier& verifier) {
  if (given) return given;
  if (auto t = verifier.default_threshold()) return double(*t);
  return std::nullopt;
}

TextVerifier::TextVerifier(std::shared_ptr<const encode::Encoder> encoder,
                           std::shared_ptr<const verify::Verifier> verifier,
                           std::optional<double> threshold, int threads)
    : impl_(std::make_unique<Impl>()) {
  VERITY_ASSERT(encoder && verifier);
  if (verifier->uses_context()) text::WordKinds::english();  // read now, not on the first pair that swaps a word
  impl_->encoder = std::move(encoder);
  impl_->verifier = std::move(verifier);
  impl_->threshold = threshold;
  impl_->threads = threads;
}

TextVerifier::TextVerifier(const TextVerifierOptions& options) : impl_(std::make_unique<Impl>()) {
  VERITY_CHECK(options.verifier != "none", ConfigError, "verification needs a verifier (got 'none')");
  impl_->verifier = verify::make_verifier(options.verifier);
  if (impl_->verifier->uses_context()) text::WordKinds::english();  // read now, not on the first pair that swaps a word
  impl_->encoder = encode::make_encoder(options.encoder);
  check_verifier_encoder(*impl_->verifier, *impl_->encoder);
  impl_->threads = options.threads;
  impl_->threshold = verdict_threshold(options.threshold, *impl_->verifier);
}

TextVerifier::~TextVerifier() = default;
TextVerifier::TextVerifier(TextVerifier&&) noexcept = default;

std::optional<double> TextVerifier::threshold() const { return impl_->threshold; }
const encode::Encoder& TextVerifier::encoder() const { return *impl_->encoder; }
const verify::Verifier& TextVerifier::verifier() const { return *impl_->verifier; }

std::string TextVerifier::describe() const {
  std::string s = cat("verifier=", impl_->verifier->spec(), ",encoder=", impl_->encoder->spec());
  if (impl_->threshold) s += cat(",threshold=", *impl_->threshold);
  return s;
}

std::vector<Verification> TextVerifier::verify(const std::string& query,
                                               std::span<const std::string> candidates) const {
  check_query(query);
  if (candidates.empty()) return {};
  std::vector<std::string> texts{query};
  texts.insert(texts.end(), candidates.begin(), candidates.end());
  encode::EncodeOptions eo;
  eo.with_tokens = true;
  eo.threads = impl_->threads;
  const auto enc = impl_->encoder->encode(texts, eo);

  // Right padding (encode/encoder.hpp): each text's real rows are one block.
  std::vector<std::vector<uint32_t>> ids(texts.size());
  std::vector<verify::TextTokens> blocks(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    ids[i] = verify::token_identities(enc.token_strings[i]);
    blocks[i].tokens = {enc.tokens.data() + i * enc.max_tokens * enc.dim, enc.length(i) * enc.dim};
    blocks[i].ids = ids[i];
    blocks[i].pooled = enc.pooled_row(i);
  }
  const auto scores = verify::score_texts(*impl_->verifier, blocks.front(),
                                          std::span(blocks).subspan(1), enc.dim);
  std::vector<Verification> out;
  out.reserve(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    // A candidate of whitespace or punctuation alone matches nothing; its map
    // (a lone "\u2581" piece) would otherwise get whatever the network makes of it.
    const float s = text::holds_content(candidates[i]) ? scores[i] : 0.0f;
    Verification v{double(s), ""};
    if (impl_->threshold) v.verdict = s >= *impl_->threshold ? "match" : "near-miss";
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace verity::search
