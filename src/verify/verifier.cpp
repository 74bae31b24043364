#include "verify/verifier.hpp"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <unordered_set>

#include "core/error.hpp"
#include "core/io.hpp"
#include "text/case_folds.hpp"
#include "verify/alignment_verifier.hpp"
#include "verify/ensemble.hpp"
#include "verify/learned.hpp"
#include "verify/simple_verifiers.hpp"

namespace verity::verify {

std::vector<float> Verifier::score_batch(std::span<const SimilarityMap> maps) const {
  std::vector<float> out;
  out.reserve(maps.size());
  for (const auto& m : maps) out.push_back(score(m));
  return out;
}

std::vector<float> Verifier::score_pairs(std::span<const SimilarityMap> maps,
                                         std::span<const PairContext> context) const {
  VERITY_CHECK(context.size() == maps.size(), ConfigError, "verifier ", spec(), ": ", maps.size(),
               " maps but ", context.size(), " contexts");
  return score_batch(maps);
}

uint32_t token_identity(std::string_view piece) { return text::piece_identity(piece); }

std::vector<uint32_t> token_identities(const std::vector<std::string>& pieces) {
  std::vector<uint32_t> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces) out.push_back(token_identity(p));
  return out;
}

void Verifier::save(const std::string& path) const {
  throw Unsupported(cat("verifier ", spec(), " has no parameters to save (to ", path, ")"));
}

std::vector<VerifierKind> verifier_kinds() {
  return {{"f0", "mean of the similarity map"},
          {"f1", "MaxSim: mean over query tokens of the best candidate-token similarity"},
          {"f2", "soft alignment with positional bias; keys lambda=0.1, tau=0.1"},
          {"f3", "small CNN over the map (f3:PATH, trained weights file required)"},
          {"f4", "small ViT over map patches (f4:PATH, trained weights file required)"},
          {"f5", "alignment reader: per-token alignment and identity features, calibrated P(same meaning) "
                 "(f5:PATH, trained weights file required)"},
          {"ensemble", "logit mean of trained F3/F4 files (ensemble:PATH, an ensemble file; "
                       "verify/ensemble.hpp)"},
          {"default", "the committed trained default verifier (assets/verifiers/default.json says "
                      "which; $VERITY_DEFAULT_VERIFIER overrides the path)"}};
}

namespace {

std::string valid_kinds() {
  std::string out;
  for (const auto& k : verifier_kinds()) out += (out.empty() ? "" : ", ") + k.name;
  return out;
}

float parse_float(std::string_view spec, std::string_view key, std::string_view value) {
  float v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  VERITY_CHECK(ec == std::errc() && end == value.data() + value.size(), ConfigError,
               "verifier spec '", spec, "': ", key, "='", value, "' is not a number");
  return v;
}

std::unique_ptr<Verifier> make_soft_align(std::string_view spec, std::string_view args) {
  float lambda = 0.1f, tau = 0.1f;
  std::unordered_set<std::string> seen;
  while (!args.empty()) {
    auto comma = args.find(',');
    auto item = args.substr(0, comma);
    auto eq = item.find('=');
    VERITY_CHECK(eq != std::string_view::npos, ConfigError, "verifier spec '", spec,
                 "': expected key=value, got '", item, "'");
    auto key = item.substr(0, eq), value = item.substr(eq + 1);
    VERITY_CHECK(seen.insert(std::string(key)).second, ConfigError, "verifier spec '", spec,
                 "': key '", key, "' given twice");
    if (key == "lambda") lambda = parse_float(spec, key, value);
    else if (key == "tau") tau = parse_float(spec, key, value);
    else
      throw ConfigError(cat("verifier spec '", spec, "': unknown key '", key,
                            "' for f2 (valid: lambda, tau)"));
    if (comma == std::string_view::npos) break;
    args = args.substr(comma + 1);
  }
  return std::make_unique<SoftAlignVerifier>(lambda, tau);
}

#ifndef VERITY_DEFAULT_VERIFIER_FILE  // set by CMakeLists.txt to the source tree's file
#define VERITY_DEFAULT_VERIFIER_FILE "assets/verifiers/default.valn"
#endif

// "default": $VERITY_DEFAULT_VERIFIER if set, else the source tree's
// assets/verifiers/default.valn, the calibrated F5 (record in assets/verifiers/default.json).
std::string default_verifier_path() {
  if (const char* env = std::getenv("VERITY_DEFAULT_VERIFIER"); env && *env) return env;
  return VERITY_DEFAULT_VERIFIER_FILE;
}

}  // namespace

std::unique_ptr<Verifier> load_verifier_file(const std::string& path) {
  if (is_ensemble_file(path)) return EnsembleVerifier::load(path);
  if (is_alignment_verifier_file(path)) return AlignmentVerifier::load(path);
  return LearnedVerifier::load(path);
}

void check_trained_encoder(const Verifier& verifier, const std::string& encoder_identity,
                           const std::string& encoder_spec) {
  const auto trained_on = verifier.encoder();
  if (trained_on.empty()) return;
  VERITY_CHECK(trained_on == encoder_identity, ConfigError, "verifier ", verifier.spec(),
               " was trained on maps of encoder ", trained_on, ", but the maps come from encoder ", spec_for_report(encoder_spec), " (",
               encoder_identity, "); train a verifier for this encoder (scripts/train_verifier.sh) or use its encoder");
}

std::unique_ptr<Verifier> make_verifier(std::string_view spec) {
  const auto colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view args = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  if (kind == "f0" || kind == "f1") {
    VERITY_CHECK(colon == std::string_view::npos, ConfigError, "verifier spec '", spec, "': ",
                 kind, " takes no arguments");
    if (kind == "f0") return std::make_unique<MeanVerifier>();
    return std::make_unique<MaxSimVerifier>();
  }
  if (kind == "f2") return make_soft_align(spec, args);
  if (kind == "default") {
    VERITY_CHECK(colon == std::string_view::npos, ConfigError, "verifier spec '", spec,
                 "': default takes no arguments");
    const auto path = default_verifier_path();
    VERITY_CHECK(verity::file_exists(path), ConfigError, "verifier spec 'default': ", path,
                 " does not exist (scripts/train_default_verifier.sh trains it; "
                 "$VERITY_DEFAULT_VERIFIER picks another file)");
    return load_verifier_file(path);
  }
  if (kind == "ensemble") {
    VERITY_CHECK(!args.empty(), ConfigError, "verifier spec '", spec, "': ensemble needs a file (ensemble:PATH)");
    return EnsembleVerifier::load(std::string(args));
  }
  if (kind == "f5") {
    VERITY_CHECK(!args.empty(), ConfigError, "verifier spec '", spec,
                 "': f5 needs a trained weights file (f5:PATH); untrained learned verifiers are never a default");
    return AlignmentVerifier::load(std::string(args));
  }
  if (kind == "f3" || kind == "f4") {
    VERITY_CHECK(!args.empty(), ConfigError, "verifier spec '", spec, "': ", kind,
                 " needs a trained weights file (", kind,
                 ":PATH); untrained learned verifiers are never a default");
    return LearnedVerifier::load(std::string(args), kind);
  }
  throw ConfigError(cat("verifier spec '", spec, "': unknown kind '", kind, "' (valid: ",
                        valid_kinds(), ")"));
}

}  // namespace verity::verify
