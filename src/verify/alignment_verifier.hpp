#pragma once
// F5, the alignment reader: a small learned verifier that reads, for every
// token of each text, what it aligns to in the other (verify/
// alignment_features.hpp), through a per-token network and a 1-D convolution
// along the text, pools both directions symmetrically and adds pair scalars
// (pooled cosine, MaxSim, exact-match shares, order agreement, ...). Its
// score is a calibrated probability that the two texts mean the same thing.
// Torch-free header; the module is in verify/detail/alignment_modules.hpp.
//
// Weights file: a SectionFile with magic "VALN", version 3, 4 when its
// calibration has a linear pooled term or a gate, 5 when its lexicon has
// number words or negators, 6 when it has negating clitics, 7 when it has a
// pooled head (config "pooled_head", "pooled_dim"), 8 when its lexicon has
// spellings, 9 when its gate has a band, 10 when its calibration caps minimal
// flips, 12 when it has a surface floor, 13 when it caps name swaps, 14 when
// it caps transpositions, 15 when it caps changed numbers, 16 when its
// config reads whole words (11: FOLD; version 2, read too, has no pooled
// terms in its calibration):
//   CONF  JSON: {"kind": "f5", "config": {...}, "trained": bool, "provenance": str,
//               "encoder": str, "calibration": {"scale", "bias", "threshold",
//               "pooled_weight", "pooled_center", "pooled_form" (v4: "hinge" | "linear"),
//               "gate" (v4: {"scale", "bias", "threshold", "band" (v9, > 0)} | null),
//               "flip_cap" (v10, < 1), "surface_floor" (v12, > 0), "name_cap" (v13, < 1),
//               "transposition_cap" (v14, < 1), "number_cap" (v15, < 1)} | null}
//   IDFT  u64 documents | u64 count | count × (u32 token identity, u32 document frequency)
//   LEXA  the lexicon's antonym word pairs, "a\tb\n" per pair (UTF-8)
//   LEXW  (v5) its number words and negators, "number\tword\n" or
//         "negator\tword\n" per word, and (v6) "negating_clitic\tpiece\n"
//         (UTF-8); absent: none
//   LEXS  (v8) how the encoder's tokenizer splits antonym forms and number words,
//         "form\tpiece piece ...\n" per form of two or more pieces (UTF-8);
//         absent: none (a split form is then not seen)
//   PNAM  parameter names and shapes, PDAT their f32 values (as in VVRF files)
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "verify/alignment_features.hpp"
#include "verify/verifier.hpp"

namespace verity::verify {

struct AlignmentConfig {
  size_t hidden = 32;           // per-token width
  size_t token_embedding = 8;   // learned vector per token-identity bucket (0 = none)
  size_t buckets = 4096;        // token identities hashed into this many buckets
  size_t mlp = 64;              // width of the final layer
  bool conv = true;             // a 1-D convolution (width 3) along each text
  // Which inputs the network sees: any of "map" (similarity and positions),
  // "identity" (exact matches, idf, token embeddings), "pooled" (pooled
  // cosine), "lexicon" (antonym pairs, negators, unmatched numbers). Features of a
  // group left out are zeroed.
  std::vector<std::string> inputs = {"map", "identity", "pooled", "lexicon"};
  // The pooled head (part of the "pooled" input): this many learned linear
  // readings of pooled_comparison(pooled vectors), beside the pair scalars
  // (0 = none). The cosine weighs every dimension alike; a reading weighs
  // each one. pooled_dim is the encoder's dimension, fixed at training.
  size_t pooled_head = 0;
  size_t pooled_dim = 0;
  // Token identities read ignoring case: every identity is folded through the
  // case folds of the encoder's vocabulary (AlignmentVerifier::case_folds,
  // kept in the file) before the features, so "Machine" matches "machine"
  // exactly and takes its idf. Training folds the same way.
  bool fold_case = false;
  // The lexicon read in whole words only (alignment_features' whole_words,
  // through the encoder's registered spellings): "\u2581under" of
  // "undermining" or "\u2581not" of "notable" is no word of it.
  bool whole_words = false;
};

// The network's own calibration, kept beside a pooled term that may raise P.
// With a gate the verdicts are the network's alone: a pair whose
// sigmoid(scale · logit + bias) is under `threshold` gets at most that
// probability, and any other pair at least `threshold`; the pooled term only
// orders pairs within each side. The verdict threshold is the gate's.
// With a band > 0 the gate lets go of a pair the network is unsure of, whose
// own probability lies within band of the threshold, unless an identity rule
// fires on it (verify::identity_signal): there the pooled term may turn the
// verdict. Near-misses keep the gate: a swapped role, an opposite, a negator
// or a changed number is an identity signal.
struct CalibrationGate {
  float scale = 1, bias = 0, threshold = 0.5f;
  float band = 0;
};

// What the calibration's rules read of a pair. identity_signal:
// verify::identity_signal (true where unknown, so a gate band never applies);
// minimal_flip: verify::minimal_flip; surface_match: the texts are the same
// on the surface, numbers written another way aside; name_swap: they differ by a swapped name; transposition:
// two of their words trade places; number_change: they differ by numbers
// alone; kind_swap: they differ by one thing swapped for another of its kind
// (each false where unknown).
struct RuleSignals {
  bool identity_signal = true, minimal_flip = false, surface_match = false, name_swap = false,
       transposition = false, number_change = false, kind_swap = false;
};

// P(same) = sigmoid(scale · logit + pooled + bias), where pooled is
//   hinge:  pooled_weight · min(cosine - pooled_center, 0)  (it only lowers P)
//   linear: pooled_weight · (cosine - pooled_center)
// and cosine is the pair's pooled cosine (the term is 0 when that is unknown).
// The network sees the pooled cosine too, but trained on six sources at once
// it underuses it; the pooled term is fitted after training, on dev. A high
// cosine is no evidence against a structural near-miss (they have the highest
// cosines), so a linear term comes with a gate, which keeps the network's
// verdicts.
struct Calibration {
  enum class PooledForm { hinge, linear };
  float scale = 1, bias = 0;
  float threshold = 0.5f;  // verdict "match" when P(same) >= threshold
  float pooled_weight = 0, pooled_center = 0;
  PooledForm pooled_form = PooledForm::hinge;
  std::optional<CalibrationGate> gate;
  // P of a pair that differs only by a polarity flip (verify::minimal_flip) is
  // at most this, the share of same-meaning pairs among the dev pairs that
  // were such flips (1: no cap). The network, trained on sentence pairs, may
  // accept a flip in a text of two or three words ("increase volume" /
  // "decrease volume"); in a minimal pair an opposite is the difference.
  float flip_cap = 1;
  // P of a pair whose texts are the same but for case, spacing, apostrophes
  // and sentence punctuation (text::SurfaceSpellings::same_surface), or for
  // a number written another way ("ten" / "10", text::respelled_numbers), is
  // at least this, the share of same-meaning pairs among such dev pairs (0: no
  // floor). The network reads "\u2581Machine" and "\u2581machine" as
  // different tokens whose vectors USE-lite sets apart, so it refuses "What is
  // Machine Learning?" for "What is machine learning?".
  float surface_floor = 0;
  // P of a pair whose texts are the same but for a word inside written as a
  // name, swapped for another (text::swapped_name: "install Python on Windows" /
  // "install Java on Windows", "weather in Canada" / "weather in Germany") is
  // at most this, the share of same-meaning pairs among such dev pairs (1: no
  // cap). Every other word matches, so the network and the pooled cosine
  // both read such a pair as a paraphrase; a named entity is what it asks
  // about. An uncased tokenizer spells no capital, so it never applies there.
  // The same cap holds a word in small letters swapped for another thing of
  // its kind (text::swapped_kind: "Is coffee bad for your heart?" / "Is tea
  // ...", "side effects of aspirin" / "... of ibuprofen"): a common noun or
  // verb that names what is asked about, the same case as a name.
  float name_cap = 1;
  // P of a pair whose texts are the same but for two words that trade places
  // (text::transposed_words: "flights from Boston to Denver" / "flights from
  // Denver to Boston") is at most this, the share of same-meaning pairs among
  // such dev pairs (1: no cap). The network refuses most swapped roles, but a
  // swapped direction ("from X to Y", "convert X to Y") keeps every word and
  // most of the map, and it serves it.
  float transposition_cap = 1;
  // P of a pair whose texts are the same but for numbers changed in value
  // (text::changed_numbers: "lasted thirteen minutes" / "lasted thirty
  // minutes", "port 6379" / "port 6380", "16gb" / "8gb") is at most this, the share of
  // same-meaning pairs among such dev pairs (1: no cap). The network learned
  // the number feature on digits and weighs a number word much less, so it
  // served most changed number words.
  float number_cap = 1;

  // cosine NaN = unknown.
  double probability(float logit, double cosine, const RuleSignals& signals = {}) const;
};
// "hinge" | "linear".
const char* pooled_form_name(Calibration::PooledForm form);
Calibration::PooledForm parse_pooled_form(const std::string& text);
// The file's and the CLI reports' form: {"scale", "bias", "threshold", "pooled_weight",
// "pooled_center", "pooled_form", "gate": {"scale", "bias", "threshold", "band"?} | null,
// "flip_cap"?, "surface_floor"?, "name_cap"?, "transposition_cap"?, "number_cap"?}
// ("band" only when > 0, the caps only when < 1, "surface_floor" only when > 0).
nlohmann::json calibration_json(const Calibration& c);

// How the calibration reached one pair's score (verity explain): the
// network's logit and its own probability, what the rules read of the pair,
// and which rule moved the score.
struct ScoreTrace {
  float logit = 0;
  double network_probability = 0;  // sigmoid of the network's own calibration (the gate's, where gated)
  double probability = 0;          // the verifier's score, as score_pairs gives it
  bool identity_signal = false, minimal_flip = false, surface_match = false, name_swap = false,
       transposition = false, number_change = false, kind_swap = false;
  bool capped = false;                // the flip cap lowered the probability
  bool floored = false;               // the surface floor raised it
  bool name_capped = false;           // the name cap lowered it (a swapped name or kind)
  bool transposition_capped = false;  // the transposition cap lowered it
  bool number_capped = false;         // the number cap lowered it
};

class AlignmentVerifier final : public Verifier {
 public:
  struct Impl;  // verify/detail/alignment_modules.hpp

  // Fresh weights, a function of (config, seed) only.
  static std::unique_ptr<AlignmentVerifier> untrained(const AlignmentConfig& config, IdfTable idf, uint64_t seed,
                                                      Lexicon lexicon = {});
  static std::unique_ptr<AlignmentVerifier> load(const std::string& path);
  ~AlignmentVerifier() override;

  // Without a context no token identities are known (no exact matches).
  float score(const SimilarityMap& map) const override;
  std::vector<float> score_batch(std::span<const SimilarityMap> maps) const override;
  std::vector<float> score_pairs(std::span<const SimilarityMap> maps,
                                 std::span<const PairContext> context) const override;
  // Uncalibrated network outputs (what calibration rescales); 0 for empty maps.
  // With `signals`, also each pair's kIdentitySignalBit (verify::identity_signal;
  // set for an empty map) and kMinimalFlipBit (verify::minimal_flip, from the
  // same features, or their readings' reversal: "mount" / "unmount"),
  // kSurfaceMatchBit (text::SurfaceSpellings::same_surface of the context's
  // identities, through the registered spellings, or their readings'
  // number_respelling),
  // kNameSwapBit (text::SurfaceSpellings::swapped_name of them),
  // kTranspositionBit (text::SurfaceSpellings::transposed of them),
  // kNumberChangeBit (text::SurfaceSpellings::changed_numbers of them) and
  // kKindSwapBit (their readings' kind_swap).
  static constexpr uint8_t kIdentitySignalBit = 1, kMinimalFlipBit = 2, kSurfaceMatchBit = 4, kNameSwapBit = 8,
                           kTranspositionBit = 16, kNumberChangeBit = 32, kKindSwapBit = 64;
  std::vector<float> logits(std::span<const SimilarityMap> maps, std::span<const PairContext> context,
                            std::vector<uint8_t>* signals = nullptr) const;
  // score_pairs' scores with how each was reached (ScoreTrace; all zero for
  // an empty map). Without a calibration the probability is sigmoid(logit).
  std::vector<ScoreTrace> trace_pairs(std::span<const SimilarityMap> maps, std::span<const PairContext> context) const;
  bool uses_context() const override { return true; }
  std::optional<float> default_threshold() const override;
  std::string encoder() const override;
  std::string spec() const override;  // "f5:PATH"
  void save(const std::string& path) const override;
  bool is_trained() const override;

  void mark_trained(std::string provenance);
  void set_calibration(const Calibration& calibration);
  const std::optional<Calibration>& calibration() const;
  void set_encoder(std::string identity);
  // Adds antonym pairs to the lexicon (a pair it holds either way round is
  // skipped); returns how many were added. The network is unchanged: its
  // polarity features now fire on the new pairs too, so refit the calibration
  // after (verity calibrate --add-antonyms). Needs the lexicon input.
  size_t add_antonyms(const std::vector<std::pair<std::string, std::string>>& pairs);
  // Replaces the lexicon's spellings (train::spell_lexicon makes them from
  // the encoder's tokenizer); as with add_antonyms, refit the calibration.
  void set_spellings(LexiconSpellings spellings);
  // The folds a fold_case verifier reads identities through (empty
  // otherwise): those of its encoder's vocabulary, set at training.
  void set_case_folds(text::CaseFolds folds);
  // Turns AlignmentConfig::whole_words on or off; as with add_antonyms, the
  // network is unchanged, so refit the calibration after (verity calibrate
  // --whole-words). Needs the lexicon input.
  void set_whole_words(bool whole_words);
  const text::CaseFolds& case_folds() const;
  const std::string& provenance() const;
  const AlignmentConfig& config() const;
  const IdfTable& idf() const;
  const Lexicon& lexicon() const;
  size_t parameter_count() const;

  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  explicit AlignmentVerifier(std::unique_ptr<Impl> impl);
  // score_pairs' scores as traces; network_probability only with `trace`,
  // which also reads every signal (score_pairs reads those the calibration uses).
  std::vector<ScoreTrace> traced(std::span<const SimilarityMap> maps, std::span<const PairContext> context,
                                 bool trace) const;
  std::unique_ptr<Impl> impl_;
};

// True when the file starts with the F5 magic.
bool is_alignment_verifier_file(const std::string& path);

}  // namespace verity::verify
