#pragma once
// Stage 2 without an index: one encoder turns a query and candidate texts into
// token vectors, one verifier scores each (query, candidate) pair through
// verify::score_texts, with token identities and pooled vectors for verifiers
// that read them. Pipeline::verify (and so the server's /verify) and the
// Python module's verity.verify share it, so a text scores the same in each.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace verity::encode {
class Encoder;
}
namespace verity::verify {
class Verifier;
}

namespace verity::search {

struct Verification {
  double score = 0;     // the verifier's score; P(same meaning) for calibrated verifiers
  std::string verdict;  // "match" (score >= threshold) | "near-miss" | "" (no threshold)
};

struct TextVerifierOptions {
  std::string verifier = "default";  // make_verifier spec; "none" is a ConfigError
  std::string encoder = "use-lite";  // make_encoder spec; the committed verifiers were trained on use-lite
  // Verdict threshold; nullopt = the verifier's calibrated default_threshold(),
  // and no verdicts when it has none (F0-F2, uncalibrated learned verifiers).
  std::optional<double> threshold;
  int threads = 0;  // encoder threads; 0 = runtime default
};

// ConfigError unless the query holds a letter, number or symbol
// (text::holds_content): whitespace or punctuation alone has nothing to match.
// TextVerifier::verify checks its query; a caller of Pipeline::search with a
// user's query checks it first (an evaluation's queries go through unchecked).
void check_query(const std::string& query);

// The verdict threshold of TextVerifierOptions: `given`, else the verifier's
// calibrated default_threshold(), else none.
std::optional<double> verdict_threshold(std::optional<double> given, const verify::Verifier& verifier);

class TextVerifier {
 public:
  // Builds the encoder and verifier; bad specs are ConfigError, damaged weight
  // files FormatError.
  explicit TextVerifier(const TextVerifierOptions& options);
  // Shares an encoder and verifier already open (a Pipeline's); the threshold
  // is taken as given (nullopt = no verdicts).
  TextVerifier(std::shared_ptr<const encode::Encoder> encoder,
               std::shared_ptr<const verify::Verifier> verifier, std::optional<double> threshold,
               int threads = 0);
  ~TextVerifier();
  TextVerifier(TextVerifier&&) noexcept;

  // One Verification per candidate, in order; no candidates -> empty, nothing
  // encoded. Thread-safe. Interrupted when an interrupt is requested mid-encode.
  std::vector<Verification> verify(const std::string& query,
                                   std::span<const std::string> candidates) const;

  std::optional<double> threshold() const;
  const encode::Encoder& encoder() const;
  const verify::Verifier& verifier() const;
  std::string describe() const;  // "verifier=SPEC,encoder=SPEC[,threshold=T]"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::search
