#pragma once
// The two-stage pipeline over an index directory:
//   query -> encoder (pooled + token vectors, only when a stage needs them)
//         -> stage 1: bm25 | dense | hybrid (RRF or normalized-score fusion) -> top-K
//         -> stage 2: similarity map of (query tokens, candidate tokens) -> verifier score
//         -> final ranking (rerank by the verifier, or a weighted sum) + verdicts.
// Score combination, exactly (documented in docs/PIPELINE.md):
//   rrf:       s(d) = sum over lists L containing d of 1 / (rrf_k + rank_L(d))
//   weighted:  s(d) = w * minmax(dense)(d) + (1 - w) * minmax(bm25)(d); absent -> 0
//   rerank:    final = verifier score (ties keep stage-1 order)
//   weighted combine: final = (1 - a) * minmax(stage1) + a * verifier
//   penalty:   final = base - beta * sigmoid(20 (base - tau)) * (1 - raw), with base the
//              stage-1 score min-max normalized and raw = clamp(verifier, 0, 1)
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "search/text_verifier.hpp"

namespace verity::index {
class DocStore;
struct IndexManifest;
}
namespace verity::verify {
class Verifier;
}
namespace verity::encode {
class Encoder;
}

namespace verity::search {

struct PipelineOptions {
  std::string stage1 = "bm25";   // bm25 | dense | hybrid | auto (see resolve_auto_parts)
  // Defaults chosen on SciFact's train split (scripts/tune_two_stage.sh;
  // docs/RESULTS.md): a light dense weight and a light verifier weight.
  std::string fusion = "weighted";  // hybrid: rrf | weighted
  double rrf_k = 60;
  double dense_weight = 0.2;     // hybrid weighted fusion: weight of the dense list
  size_t candidates = 100;       // K: stage-1 results passed to stage 2
  std::string verifier = "none"; // none | f0 | f1 | f2 | f3:PATH | f4:PATH | default | auto
  std::string combine = "weighted";  // rerank | weighted | penalty
  double verifier_weight = 0.2;      // weighted combine
  double penalty_beta = 0.5, penalty_tau = 0.9;
  // Verdicts: score >= T -> "match", else "near-miss". Unset: the verifier's
  // calibrated threshold (no verdicts for uncalibrated verifiers).
  std::optional<double> reject_below;
  std::string encoder;           // "" = the encoder recorded in the index
  int threads = 0;               // encoder threads; 0 = runtime default
};

// "auto" settings resolved from the parts an index holds: stage1 "auto" is hybrid when the index
// has a dense part and a bm25 part, dense with the dense part alone, else bm25; verifier "auto" is none when it has no token vectors. Otherwise the
// verifier stays "auto" until the encoder is open: Pipeline then takes the default verifier when it
// was trained on the index's encoder, else F1 (logged). Other values pass unchanged.
PipelineOptions resolve_auto_parts(const index::IndexManifest& manifest, PipelineOptions options);

struct SearchHit {
  uint32_t doc = 0;
  std::string id;
  double stage1_score = 0;
  std::optional<double> verifier_score;
  double score = 0;     // final ranking score
  std::string verdict;  // "match" | "near-miss" | "" (no threshold)
};

struct StageTimings {
  double encode_ms = 0, stage1_ms = 0, stage2_ms = 0, total_ms = 0;
  size_t verified = 0;  // candidates the verifier scored (those that could reach the top k)
};

class Pipeline {
 public:
  // Opens the parts the options need; a missing part is a ConfigError naming it.
  Pipeline(const std::string& index_dir, PipelineOptions options);
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;

  // Thread-safe: many queries may run at once.
  std::vector<SearchHit> search(const std::string& query, size_t k,
                                StageTimings* timings = nullptr) const;
  // Stage 2 alone on caller-supplied candidate texts (encoded on the fly, see
  // search/text_verifier.hpp); verdicts at verdict_threshold().
  std::vector<Verification> verify(const std::string& query,
                                   std::span<const std::string> candidates) const;

  const index::DocStore& docs() const;
  const PipelineOptions& options() const;
  std::string describe() const;  // stage-1/verifier/combine specs, for provenance
  // The verdict threshold in use: reject_below, else the verifier's calibrated one.
  std::optional<double> verdict_threshold() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ConfigError naming both encoders when `verifier` records being trained on
// maps of another encoder than `encoder`. The encoder's identity hashes its
// model files: a caller that needs it too passes `identity`, filled here on
// first use (empty = not yet computed).
void check_verifier_encoder(const verify::Verifier& verifier, const encode::Encoder& encoder,
                            std::string* identity = nullptr);

// make_verifier(spec), checked against `encoder` (check_verifier_encoder). "auto" opens
// the default verifier where it reads this encoder's maps, else F1, and `spec` becomes
// the name of the one opened ("default" or "f1").
std::unique_ptr<verify::Verifier> open_verifier_for(std::string& spec, const encode::Encoder& encoder,
                                                   std::string* identity = nullptr);

// Validates option values; throws ConfigError listing the valid ones.
void validate(const PipelineOptions& options);

// Options a pipeline configured as `options` never reads, by the setting they need:
// giving one is a mistake the CLI and the Python API both refuse, each naming the
// options and the setting in its own terms. `options` and `setting` are PipelineOptions
// field names; `value` is the setting's value they need, "" for any but "none" (a
// verifier). With `per_request` (a server), stage 1 and the verifier stay open, so
// only the fusion and combine modes decide. In order: the first group that holds a
// given option is the one to report.
struct UnreadOptions {
  std::vector<const char*> options;
  const char* setting;
  const char* value;
};
std::vector<UnreadOptions> unread_options(const PipelineOptions& options, bool per_request);

}  // namespace verity::search
