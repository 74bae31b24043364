#pragma once
// Geometry probes of an encoder's pooled space on near-miss triples
// (issue 6, "Geometry"; docs/DIAGNOSTICS.md, section "Geometry probes").
// A near-miss triple (q, p, n) gives two pairs: (q, p) a paraphrase pair and
// (q, n) an edit pair of the triple's type (negation, role_swap, ...). Per type
// and over all types:
//   - the mean (and std) cos(q, n) ("cos(q, edited q)") and cos(q, p);
//   - a logistic-regression probe separating edit pairs (label 1) from
//     paraphrase pairs (label 0) on the pair features [e_q - e_x, e_q ⊙ e_x]
//     (2·dim values, standardized with the training part's mean and std), its
//     accuracy on a held-out part (queries split by a seeded hash, so both
//     pairs of a triple and every triple of a query fall on the same side);
//   - the silhouette of the two clusters {e_q - e_p} and {e_q - e_n}
//   (Euclidean).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/triples.hpp"
#include "encode/encoder.hpp"

namespace verity::diagnose {

struct GeometryOptions {
  double holdout = 0.3;  // share of queries held out for the probe's accuracy
  uint64_t seed = 13;    // split hash, silhouette subsample
  size_t epochs = 300;   // full-batch gradient steps of the probe
  double learning_rate = 0.5;
  double l2 = 1e-3;                // ridge penalty on the probe's weights
  size_t silhouette_points = 400;  // per cluster at most (seeded subsample)
  size_t min_type_count = 10;      // types with fewer triples get cosines only (no probe/silhouette)
};

struct Moments {
  double mean = 0, std = 0;  // population std
};

struct TypeGeometry {
  std::string type;                  // "all" for the pooled row
  size_t count = 0;                  // triples
  Moments cos_edit, cos_paraphrase;  // cos(q, n), cos(q, p)
  bool probed = false;               // false when count < min_type_count or a split side is empty
  double probe_accuracy = 0;         // held-out
  double probe_train_accuracy = 0;
  size_t train_pairs = 0, test_pairs = 0;
  double silhouette = 0;
  size_t silhouette_points = 0;
};

struct GeometryReport {
  size_t dim = 0;
  TypeGeometry all;
  std::vector<TypeGeometry> by_type;  // sorted by type name
};

// q, p, n: count x dim row-major, L2-normalized pooled vectors; types and
// query_keys (the split key, e.g. the query text) have count entries.
// Throws ConfigError on shape mismatches or an invalid option.
GeometryReport probe_geometry(std::span<const float> q, std::span<const float> p, std::span<const float> n,
                              size_t count, size_t dim, std::span<const std::string> types,
                              std::span<const std::string> query_keys, const GeometryOptions &options);

// Encodes every distinct text of the triples once (pooled, normalized) and
// runs probe_geometry. An empty triple type is reported as "unknown".
GeometryReport probe_geometry(std::span<const data::Triple> triples, const encode::Encoder &encoder,
                              const GeometryOptions &options, size_t batch_size = 32);

// ---- pieces exposed for tests ----

// Mean silhouette of points (rows x dim) with labels 0/1, Euclidean distance:
// s_i = (b_i - a_i) / max(a_i, b_i), a_i = mean distance to the other points of
// its cluster, b_i = mean distance to the other cluster; s_i = 0 for a point
// alone in its cluster. Needs both labels present (ConfigError otherwise).
double silhouette(std::span<const double> points, size_t dim, std::span<const int> labels);

// L2-regularized logistic regression trained by full-batch gradient descent
// on standardized features. Deterministic (zero init).
class LogisticProbe {
 public:
  LogisticProbe(size_t epochs, double learning_rate, double l2);
  void fit(std::span<const double> x, size_t dim, std::span<const int> labels);
  double probability(std::span<const double> row) const;  // P(label 1)
  double accuracy(std::span<const double> x, std::span<const int> labels) const;

 private:
  size_t epochs_;
  double lr_, l2_;
  std::vector<double> mean_, scale_, w_;
  double bias_ = 0;
};

}  // namespace verity::diagnose
