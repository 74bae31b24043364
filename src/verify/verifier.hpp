#pragma once
// Stage-2 verifiers: each turns a query-candidate SimilarityMap into one
// relevance score (higher = more relevant). Exact formulas: docs/VERIFIERS.md.
//
// Factory strings (make_verifier):
//   "f0"                     mean of the map
//   "f1"                     MaxSim (ColBERT late interaction)
//   "f2[:lambda=0.1,tau=0.1]" soft alignment with a positional bias
//   "f3:PATH"                small CNN, weights file required
//   "f4:PATH"                small ViT, weights file required
//   "ensemble:PATH"          logit mean of F3/F4 files listed in an ensemble file
//   "default"                the committed default (a weights or an ensemble file)
// An untrained F3/F4 is never built by the factory; see verify/learned.hpp.
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "verify/similarity_map.hpp"

namespace verity::verify {

// What a verifier may know about a pair beyond its map: which token each row
// and column is (a map alone cannot tell an exact repeat from a close
// synonym), and the pooled cosine. Spans are borrowed for the call.
struct PairContext {
  std::span<const uint32_t> query_ids;      // one per map row; empty = unknown
  std::span<const uint32_t> candidate_ids;  // one per map column; empty = unknown
  float pooled_cosine = std::numeric_limits<float>::quiet_NaN();  // NaN = unknown
  // The two pooled vectors (any norm, equal sizes), for verifiers that compare
  // them dimension by dimension; empty = unknown.
  std::span<const float> query_pooled = {}, candidate_pooled = {};
};

// The identity of one token piece as PairContext carries it: FNV-1a 32 of the
// piece's UTF-8 bytes (encoders differ in vocabularies; pieces are what
// Encoded::token_strings holds and what index token stores record).
uint32_t token_identity(std::string_view piece);
std::vector<uint32_t> token_identities(const std::vector<std::string>& pieces);

class Verifier {
 public:
  virtual ~Verifier() = default;
  // Score of one map. An empty map (no query or no candidate tokens) scores 0
  // for every verifier.
  virtual float score(const SimilarityMap& map) const = 0;
  // Scores of many maps, same order; learned verifiers batch them.
  virtual std::vector<float> score_batch(std::span<const SimilarityMap> maps) const;
  // Scores with token identities and pooled cosines for verifiers that read
  // them (context.size() == maps.size(), else ConfigError); the default
  // ignores the context and calls score_batch.
  virtual std::vector<float> score_pairs(std::span<const SimilarityMap> maps,
                                         std::span<const PairContext> context) const;
  // Whether score_pairs reads the context (callers may skip building it).
  virtual bool uses_context() const { return false; }
  // Calibrated verifiers: the score is P(same meaning), and this is the
  // threshold chosen on held-out pairs (score >= threshold -> "match").
  // nullopt for scores that are not probabilities.
  virtual std::optional<float> default_threshold() const { return std::nullopt; }
  // Identity of the encoder the verifier was trained on (encode's
  // encoder_identity); "" when it works on maps of any encoder.
  virtual std::string encoder() const { return ""; }
  // Factory string recreating this verifier.
  virtual std::string spec() const = 0;
  // Writes learned weights atomically; parameter-free verifiers throw Unsupported.
  virtual void save(const std::string& path) const;
  // False only for learned verifiers whose weights were never trained; the
  // parameter-free F0-F2 have nothing to train and report true.
  virtual bool is_trained() const = 0;
};

// A ConfigError naming both encoders when `verifier` was trained on maps of
// another encoder than the one whose identity (encode's encoder_identity) and
// spec are given; a verifier that works on any encoder's maps always passes.
void check_trained_encoder(const Verifier& verifier, const std::string& encoder_identity,
                           const std::string& encoder_spec);

// Builds a verifier from a factory string; unknown kinds/keys and bad values
// throw ConfigError listing the valid ones, damaged weight files FormatError.
std::unique_ptr<Verifier> make_verifier(std::string_view spec);

// A trained verifier from a file: an ensemble file (verify/ensemble.hpp) or
// an F3/F4 weights file, told apart by content.
std::unique_ptr<Verifier> load_verifier_file(const std::string& path);

struct VerifierKind {
  std::string name, help;
};
// Registered kinds with one-line help (for --help / verity list).
std::vector<VerifierKind> verifier_kinds();

}  // namespace verity::verify
