#include "verify/simple_verifiers.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "verify/kernels.hpp"

namespace verity::verify {

float MeanVerifier::score(const SimilarityMap& map) const {
  if (map.empty()) return 0.0f;
  double sum = 0;
  for (float v : map.values()) sum += v;
  return float(sum / double(map.values().size()));
}

float MaxSimVerifier::score(const SimilarityMap& map) const {
  if (map.empty()) return 0.0f;
  double sum = 0;
  for (size_t i = 0; i < map.rows(); ++i) {
    auto row = map.row(i);
    sum += *std::max_element(row.begin(), row.end());
  }
  return float(sum / double(map.rows()));
}

SoftAlignVerifier::SoftAlignVerifier(float lambda, float tau) : lambda_(lambda), tau_(tau) {
  VERITY_CHECK(std::isfinite(lambda) && lambda >= 0, ConfigError, "f2: lambda=", lambda,
               " must be finite and >= 0");
  VERITY_CHECK(std::isfinite(tau) && tau > 0, ConfigError, "f2: tau=", tau,
               " must be finite and > 0");
}

namespace {
// Shortest text that parses back to the same float, so spec() round-trips.
std::string shortest(float v) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}
}  // namespace

std::string SoftAlignVerifier::spec() const {
  return "f2:lambda=" + shortest(lambda_) + ",tau=" + shortest(tau_);
}

float SoftAlignVerifier::score(const SimilarityMap& map) const {
  if (map.empty()) return 0.0f;
  const size_t rows = map.rows(), cols = map.cols();
  const float ratio = float(rows) / float(cols), inv_tau = 1.0f / tau_;
  std::vector<float> logits(cols);
  const auto isa = kernels::best_isa();
  double total = 0;
  for (size_t i = 0; i < rows; ++i) {
    auto row = map.row(i);
    for (size_t j = 0; j < cols; ++j) logits[j] = row[j] - lambda_ * std::fabs(float(i) - float(j) * ratio);
    total += kernels::softmax_mean(logits.data(), row.data(), cols, inv_tau, isa);
  }
  return float(total / double(rows));
}

}  // namespace verity::verify
