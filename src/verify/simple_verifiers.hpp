#pragma once
// The parameter-free verifiers F0-F2 (plain C++, no torch).
#include "verify/verifier.hpp"

namespace verity::verify {

// F0: the mean of all cells.
class MeanVerifier final : public Verifier {
 public:
  float score(const SimilarityMap& map) const override;
  std::string spec() const override { return "f0"; }
  bool is_trained() const override { return true; }
};

// F1: MaxSim, the mean over query rows of the row maximum.
class MaxSimVerifier final : public Verifier {
 public:
  float score(const SimilarityMap& map) const override;
  std::string spec() const override { return "f1"; }
  bool is_trained() const override { return true; }
};

// F2: soft alignment with positional bias,
//   A_ij = softmax_j((M_ij - lambda·|i - j·r|) / tau),  r = rows / cols,
//   score = mean_i Σ_j A_ij · M_ij.
class SoftAlignVerifier final : public Verifier {
 public:
  // lambda >= 0 and tau > 0, both finite, else ConfigError.
  explicit SoftAlignVerifier(float lambda = 0.1f, float tau = 0.1f);
  float score(const SimilarityMap& map) const override;
  std::string spec() const override;
  bool is_trained() const override { return true; }
  float lambda() const { return lambda_; }
  float tau() const { return tau_; }

 private:
  float lambda_, tau_;
};

}  // namespace verity::verify
