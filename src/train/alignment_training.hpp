#pragma once
// Training F5 (verify/alignment_verifier.hpp) on real labelled pairs beside
// near-miss triples, then calibrating it. Torch-free header.
//
//   loss = mean over sources of BCE(P(same), label) on the pairs (optionally
//          weighted per source)
//        + triple_weight · [softplus(z_neg - z_pos) + BCE(z_pos, 1) + BCE(z_neg, 0)] / 3
// With teachers (distillation) every label above is mixed with the teachers'
// probability of the same pair (AlignmentTrainOptions::teachers).
// Each step draws the same number of pairs from every source (sources with
// fewer are cycled) and triples balanced per near-miss type. Each epoch ends
// with the dev pass; the kept epoch maximizes the macro dev AUC over all pair
// sources and the near-miss dev triples (AUC of positives over negatives).
// Calibration: Platt scaling P = sigmoid(a·z + b) fitted on dev with every
// source weighted equally; the threshold maximizes the mean per-source dev
// accuracy of the verdicts, smoothed over a window (ThresholdRule). recalibrate() refits the calibration of a trained
// file on other labelled pairs. Formulas: docs/TRAINING.md ("F5").
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/labelled_pairs.hpp"
#include "data/triples.hpp"
#include "encode/encoder.hpp"
#include "verify/alignment_verifier.hpp"

namespace verity::train {

// How the pooled cosine enters the calibration (verify::Calibration's pooled
// term: the hinge min(cosine - dev mean, 0), or, gated, cosine - dev mean).
enum class PooledTerm {
  none,     // Platt scaling of the network's logit alone
  penalty,  // the network's own Platt scaling and threshold, then the term's weight
            // by maximum likelihood with them fixed (none unless that raises the dev
            // macro AUC): P can only fall, so no pair the network alone rejects
            // becomes a match
  refit,    // the term's share by dev macro AUC (a grid of tenths), then Platt
            // scaling and the threshold refitted on the sum, which may lift pairs
  gated,    // a linear term, cosine - dev mean, so a high cosine raises P too,
            // behind the network's own calibration as the gate
            // (verify::CalibrationGate): the verdicts stay the network's, the
            // term orders pairs within each verdict. Its share by the dev macro
            // AUC of the gated probability (tenths, Platt refitted for each)
};
// "none" | "penalty" | "refit" | "gated" ("false" and "true" read as none and refit).
PooledTerm parse_pooled_term(const std::string& text);
const char* pooled_term_name(PooledTerm term);

// How the verdict threshold is read off the mean per-group dev accuracy,
// evaluated at 0.02, 0.03, ..., 0.98.
enum class ThresholdRule {
  best,     // its argmax: where the curve is flat, this moves with the seed
  plateau,  // the argmax of its average over the window t ± 0.05: the middle
            // of the flat stretch, which moves less with the seed
};
// "best" | "plateau".
ThresholdRule parse_threshold_rule(const std::string& text);
const char* threshold_rule_name(ThresholdRule rule);
// The steps at which a threshold is read: 0.02, 0.03, ..., 0.98.
inline constexpr int kFirstThresholdStep = 2, kLastThresholdStep = 98;
// The threshold `rule` reads off `curve`, the mean accuracy at each step
// (kLastThresholdStep - kFirstThresholdStep + 1 values). The plateau rule's
// candidates are the steps with a full window (0.07 ... 0.93); the first of
// equal steps wins.
double threshold_from_accuracy_curve(const std::vector<double>& curve, ThresholdRule rule);

struct PairSourceData {
  std::string name;
  std::vector<data::LabelledPair> train, dev;
};

struct AlignmentTrainOptions {
  size_t epochs = 12;
  size_t steps_per_epoch = 200;
  size_t pairs_per_source = 16;  // per step
  size_t triples_per_step = 32;
  double triple_weight = 1.0;
  // Weight of each named pair source in the pair loss (absent: 1); the loss
  // is then the weighted mean over the step's pairs. Unknown names are errors.
  std::map<std::string, double> source_weights;
  double lr = 2e-3, weight_decay = 1e-4;
  // false: lr throughout; true: cosine decay from lr to 0 over all
  // epochs × steps (late epochs take small steps, so the kept epoch moves
  // less between neighbours).
  bool cosine_lr = false;
  double pooled_dropout = 0.1;  // share of training pairs shown without the pooled cosine
  size_t patience = 4;          // epochs without a dev gain before stopping (0 = never)
  // A pooled-cosine term beside the network's logit in the dev calibration;
  // none (the default's recipe) rescales the logit alone.
  PooledTerm pooled_term = PooledTerm::none;
  ThresholdRule threshold_rule = ThresholdRule::plateau;
  uint64_t seed = 1;
  size_t encode_batch = 64;
  std::string sample_cache;     // maps + token identities of every pair, reused across runs ("" = none)
  // Antonym word pairs for the "lexicon" input (perturb::wn_antonym_pairs);
  // stored in the verifier file.
  std::vector<std::pair<std::string, std::string>> antonyms;
  // Number words and negators for the same input; stored in the verifier file.
  verify::LexiconWords lexicon_words;
  // Distillation: trained F5 verifiers of the same encoder (the caller owns
  // them). Each training pair's and triple pair's target becomes
  // (1 - distill_weight) · label + distill_weight · sigmoid(mean over the
  // teachers of their calibrated logit); a seed ensemble ranks better than
  // any of its members, and this hands that to one network of the same cost.
  std::vector<const verify::AlignmentVerifier*> teachers;
  double distill_weight = 0.5;  // in (0, 1]; used only with teachers
};

// The learning rate of optimizer step `step` (0-based) of a run with
// options `o` (AlignmentTrainOptions::cosine_lr).
double scheduled_lr(const AlignmentTrainOptions& o, size_t step);

struct SourceMetrics {
  double auc = 0.5, accuracy = 0, best_accuracy = 0;
  size_t count = 0;
};

struct AlignmentEpoch {
  size_t epoch = 0;
  double train_loss = 0, dev_macro_auc = 0, seconds = 0;  // dev_macro_auc: of the calibrated score
  std::map<std::string, double> dev_auc;  // of the network's logit, per source ("nearmiss" for the triples)
  double dev_network_macro_auc = 0;       // of the network's logit alone
};

// One dev group (a pair source, or the near-miss triples as pairs): the
// network's logits, the pooled cosines (NaN = unknown) and the labels.
struct CalibrationGroup {
  std::string name;
  std::vector<float> logits;
  std::vector<double> cosines;
  std::vector<int> labels;
  // Per pair, AlignmentVerifier::logits' signal bits: kIdentitySignalBit
  // (verify::identity_signal), kMinimalFlipBit (verify::minimal_flip) and
  // kSurfaceMatchBit (the texts are the same on the surface), kNameSwapBit
  // (they differ by a swapped name), kTranspositionBit (two words trade
  // places), kNumberChangeBit (they differ by numbers alone) and kKindSwapBit
  // (one thing swapped for another of its kind). Empty: every pair has an
  // identity signal (a gate band never applies), none is a minimal flip, a
  // surface match, a name or kind swap, a transposition or a number change.
  std::vector<uint8_t> signals;
  bool identity_signal(size_t i) const {
    return signals.empty() || (signals[i] & verify::AlignmentVerifier::kIdentitySignalBit) != 0;
  }
  bool minimal_flip(size_t i) const {
    return !signals.empty() && (signals[i] & verify::AlignmentVerifier::kMinimalFlipBit) != 0;
  }
  bool surface_match(size_t i) const {
    return !signals.empty() && (signals[i] & verify::AlignmentVerifier::kSurfaceMatchBit) != 0;
  }
  bool name_swap(size_t i) const {
    return !signals.empty() && (signals[i] & verify::AlignmentVerifier::kNameSwapBit) != 0;
  }
  bool transposition(size_t i) const {
    return !signals.empty() && (signals[i] & verify::AlignmentVerifier::kTranspositionBit) != 0;
  }
  bool number_change(size_t i) const {
    return !signals.empty() && (signals[i] & verify::AlignmentVerifier::kNumberChangeBit) != 0;
  }
  bool kind_swap(size_t i) const {
    return !signals.empty() && (signals[i] & verify::AlignmentVerifier::kKindSwapBit) != 0;
  }
  double probability(const verify::Calibration& c, size_t i) const {
    return c.probability(logits[i], cosines[i],
                         {identity_signal(i), minimal_flip(i), surface_match(i), name_swap(i), transposition(i),
                          number_change(i), kind_swap(i)});
  }
};

struct CalibrationFit {
  verify::Calibration calibration;
  PooledTerm term = PooledTerm::none;
  ThresholdRule threshold_rule = ThresholdRule::plateau;
  double pooled_share = 0;       // of the pooled cosine in the standardized sum (0 = the network alone)
  double macro_auc = 0;          // over the groups, of the calibrated score
  double network_macro_auc = 0;  // of the network's logit alone
  double mean_accuracy = 0;      // of the verdicts at the threshold, mean over the groups
};

// Calibration on dev, every group weighing the same: Platt scaling, then the
// threshold by the mean verdict accuracy as `rule` says, with the pooled term
// as `term` says (PooledTerm). With `fixed_gate` (term gated only) the gate
// and its threshold are that calibration's, not refitted here, so the
// verdicts are exactly those of the calibration it came from.
// `gate_band` (term gated only, in [0, 0.5)) is the gate's band
// (verify::CalibrationGate): the pooled term may turn the verdict of a pair
// without an identity signal whose network probability lies that close to the
// threshold; the share is then chosen with the band in place.
CalibrationFit fit_calibration(const std::vector<CalibrationGroup>& groups, PooledTerm term,
                               ThresholdRule rule = ThresholdRule::plateau,
                               const std::optional<verify::CalibrationGate>& fixed_gate = std::nullopt,
                               double gate_band = 0);

struct AlignmentTrainReport {
  std::vector<AlignmentEpoch> epochs;
  size_t best_epoch = 0, steps = 0;
  double best_dev_macro_auc = 0;
  CalibrationFit fit;  // the calibration stored in the file, with its dev figures
  std::map<std::string, SourceMetrics> dev;      // calibrated, at the chosen threshold
  std::map<std::string, double> dev_nearmiss_by_type;  // pairwise accuracy
  size_t train_pairs = 0, dev_pairs = 0, train_triples = 0, dev_triples = 0;
  double encode_seconds = 0, train_seconds = 0;
};

// Trains a fresh F5 of `config` (IDF table from the training texts) and
// calibrates it on dev. The returned verifier records the encoder identity
// and is marked trained with `provenance`. SIGINT stops between steps
// (Interrupted); nothing is written by this function.
std::unique_ptr<verify::AlignmentVerifier> train_alignment_verifier(
    const verify::AlignmentConfig& config, const encode::Encoder& encoder, const std::vector<PairSourceData>& sources,
    const std::vector<data::Triple>& train_triples, const std::vector<data::Triple>& dev_triples,
    const AlignmentTrainOptions& options, const std::string& provenance, AlignmentTrainReport& report);

// Labelled pairs of one dev group (a pair source, or near-miss triples as
// (query, positive) = 1 and (query, negative) = 0 pairs).
struct LabelledGroup {
  std::string name;
  std::vector<data::LabelledPair> pairs;
};

// A cap on P of the dev pairs a rule picks: (same + 1) / (pairs + 2) of them.
// The flip cap (verify::Calibration::flip_cap: the pairs differ only by a
// polarity flip), the name cap (name_cap: the texts differ by a swapped name,
// text::SurfaceSpellings::swapped_name), the transposition cap
// (transposition_cap: two words trade places, text::SurfaceSpellings::transposed)
// and the number cap (number_cap: the texts differ by numbers alone,
// text::SurfaceSpellings::changed_numbers).
struct PairRuleCapFit {
  size_t pairs = 0, same = 0;
  std::map<std::string, std::pair<size_t, size_t>> by_group;  // group -> (pairs, same)
  double cap = 1;
};
using FlipCapFit = PairRuleCapFit;
using NameCapFit = PairRuleCapFit;
using TranspositionCapFit = PairRuleCapFit;
using NumberCapFit = PairRuleCapFit;

// The floor under P of surface matches (verify::Calibration::surface_floor):
// among the dev pairs whose texts are the same on the surface
// (text::SurfaceSpellings::same_surface of their pieces, or a number written
// another way: the readings' number_respelling), (same + 1) / (pairs + 2).
struct SurfaceFloorFit {
  size_t pairs = 0, same = 0;
  std::map<std::string, std::pair<size_t, size_t>> by_group;  // group -> (pairs, same)
  double floor = 0;
};

// What the rules read from a pair's pieces give, where asked for.
struct PairRuleFits {
  std::optional<SurfaceFloorFit> surface;
  std::optional<NameCapFit> names;
  std::optional<TranspositionCapFit> transpositions;
  std::optional<NumberCapFit> numbers;
};

struct RecalibrationReport {
  CalibrationFit fit;                               // the new calibration, on these groups
  std::optional<FlipCapFit> flips;                  // with fit_flip_cap
  std::optional<SurfaceFloorFit> surface;           // with fit_surface_floor
  std::optional<NameCapFit> names;                  // with fit_name_cap
  std::optional<TranspositionCapFit> transpositions;  // with fit_transposition_cap
  std::optional<NumberCapFit> numbers;              // with fit_number_cap
  std::optional<verify::Calibration> previous;      // the file's own, if it had one
  std::map<std::string, SourceMetrics> dev, previous_dev;  // per group, at each calibration's threshold
  size_t pairs = 0;
  double seconds = 0;
};

// GateSource::file (term gated only) keeps the file's own verdicts: the gate
// is its calibration, which must hold no pooled term (or be gated itself).
enum class GateSource { refit, file };
GateSource parse_gate_source(const std::string& text);  // "refit" | "file"
const char* gate_source_name(GateSource source);

struct RecalibrateOptions {
  PooledTerm term = PooledTerm::none;
  ThresholdRule rule = ThresholdRule::plateau;
  size_t chunk = 64;  // pairs encoded per batch
  GateSource gate_source = GateSource::refit;
  double gate_band = 0;
  // Keep the file's calibration as it is (it must have one) and fit only the
  // flip cap, surface floor, name, transposition and number caps asked for: a rule added to a calibrated
  // verifier moves no other score. term, rule, gate_source and gate_band are
  // then unused.
  bool keep_calibration = false;
  // Cap minimal flips (FlipCapFit; ConfigError when no dev pair is one).
  bool fit_flip_cap = false;
  // Fit the surface floor (SurfaceFloorFit), the name cap (NameCapFit), the
  // transposition cap (TranspositionCapFit) and the number cap (NumberCapFit)
  // on rule_groups, read whole (the groups' samples hold few such pairs).
  // ConfigError when none of them is a pair the rule picks.
  bool fit_surface_floor = false, fit_name_cap = false, fit_transposition_cap = false, fit_number_cap = false;
  std::vector<LabelledGroup> rule_groups;
};

// Refits a trained F5's calibration on labelled groups (fit_calibration) from
// its network's logits and the pooled cosines of `encoder`, which must be the
// encoder the file records (ConfigError naming both otherwise). The network is
// unchanged; the verifier gets the new calibration. SIGINT stops between
// chunks (Interrupted). The flip cap, the surface floor and the name,
// transposition and number caps are fitted after the rest, whose figures
// then include them.
RecalibrationReport recalibrate(verify::AlignmentVerifier& verifier, const encode::Encoder& encoder,
                                const std::vector<LabelledGroup>& groups, const RecalibrateOptions& options);

// The dev pairs among `groups` that each rule asked for picks, per group, and
// what they give: texts the same on the surface (the floor), differing by a
// swapped name, by two words that trade places, or by numbers alone (the
// caps). One pass over
// the pieces of the encoder's tokenizer (Encoder::pieces), read through the
// registered spellings and case folds.
PairRuleFits fit_pair_rules(const encode::Encoder& encoder, const std::vector<LabelledGroup>& groups, bool surface,
                            bool names, bool transpositions, bool numbers = false);

// Spells every antonym form and number word of the verifier's lexicon,
// lower-case and capitalized, with the encoder's tokenizer (Encoder::pieces)
// and stores the forms it splits into two or more pieces ("disable" as
// "\u2581dis" "able", "sixty" as "\u2581six" "ty"), so the polarity and
// number features see them (AlignmentVerifier::set_spellings; any
// earlier spellings are replaced). Returns how many forms were stored. The
// network is unchanged: refit the calibration after (verity calibrate
// --spell-lexicon).
size_t spell_lexicon(verify::AlignmentVerifier& verifier, const encode::Encoder& encoder);

}  // namespace verity::train
