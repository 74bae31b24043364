#pragma once
// An ensemble of learned verifiers (F3/F4) scored by the mean of their logits.
// Seeds of one training recipe disagree on a few percent of near-misses; the
// mean of their logits is steadier than any one run (docs/TRAINING.md).
//
// File (JSON, members relative to the file's directory, each checked for size
// and CRC-32C on load so a replaced or truncated member is refused):
//   {"format": "verity-verifier-ensemble", "version": 1, "combine": "logit_mean",
//    "members": [{"file": "a.vvrf", "bytes": 378196, "crc32c": "1a2b3c4d"}, ...],
//    "provenance": "how the members were chosen"}
#include <memory>
#include <string>
#include <vector>

#include "verify/learned.hpp"

namespace verity::verify {

class EnsembleVerifier final : public Verifier {
 public:
  static std::unique_ptr<EnsembleVerifier> load(const std::string& path);
  // Writes an ensemble file atomically over the given F3/F4 weight files; they
  // are stored relative to the ensemble file's directory.
  static void write(const std::string& path, const std::vector<std::string>& member_files,
                    const std::string& provenance);

  float score(const SimilarityMap& map) const override;
  std::vector<float> score_batch(std::span<const SimilarityMap> maps) const override;
  std::string spec() const override;  // "ensemble:PATH"
  bool is_trained() const override;
  size_t size() const { return members_.size(); }
  const std::string& provenance() const { return provenance_; }

 private:
  EnsembleVerifier() = default;
  std::vector<std::unique_ptr<LearnedVerifier>> members_;
  std::string path_, provenance_;
};

// True when path holds an ensemble file rather than a VVRF weights file.
bool is_ensemble_file(const std::string& path);

}  // namespace verity::verify
