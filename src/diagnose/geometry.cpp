#include "diagnose/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "diagnose/embedding_cache.hpp"
#include "diagnose/statistics.hpp"

namespace verity::diagnose {
namespace {

double dot(const float *a, const float *b, size_t d) {
  double s = 0;
  for (size_t i = 0; i < d; ++i) s += double(a[i]) * double(b[i]);
  return s;
}

Moments moments(const std::vector<double> &x) {
  auto s = summarize(x);
  return {s.mean, s.std};
}

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// Pair features of (q, x): [q - x, q ⊙ x].
void append_features(const float *q, const float *x, size_t d, std::vector<double> &out) {
  for (size_t i = 0; i < d; ++i) out.push_back(double(q[i]) - double(x[i]));
  for (size_t i = 0; i < d; ++i) out.push_back(double(q[i]) * double(x[i]));
}

// Probe, split and silhouette for the triples `rows` (one type, or all).
TypeGeometry measure(std::span<const float> q, std::span<const float> p, std::span<const float> n, size_t dim,
                     const std::vector<size_t> &rows, const std::vector<bool> &held_out,
                     const GeometryOptions &opt, const std::string &type) {
  TypeGeometry g;
  g.type = type;
  g.count = rows.size();
  std::vector<double> ce, cp;
  for (size_t r : rows) {
    ce.push_back(dot(&q[r * dim], &n[r * dim], dim));
    cp.push_back(dot(&q[r * dim], &p[r * dim], dim));
  }
  g.cos_edit = moments(ce);
  g.cos_paraphrase = moments(cp);
  if (rows.size() < opt.min_type_count) return g;

  std::vector<double> xtr, xte;
  std::vector<int> ytr, yte;
  for (size_t r : rows) {
    auto &x = held_out[r] ? xte : xtr;
    auto &y = held_out[r] ? yte : ytr;
    append_features(&q[r * dim], &p[r * dim], dim, x);
    y.push_back(0);
    append_features(&q[r * dim], &n[r * dim], dim, x);
    y.push_back(1);
  }
  if (!ytr.empty() && !yte.empty()) {
    LogisticProbe probe(opt.epochs, opt.learning_rate, opt.l2);
    probe.fit(xtr, 2 * dim, ytr);
    g.probed = true;
    g.probe_train_accuracy = probe.accuracy(xtr, ytr);
    g.probe_accuracy = probe.accuracy(xte, yte);
    g.train_pairs = ytr.size();
    g.test_pairs = yte.size();
  }

  // Silhouette on e_q - e_x, at most silhouette_points triples (seeded).
  std::vector<size_t> pick(rows.begin(), rows.end());
  std::mt19937_64 rng(opt.seed ^ fnv1a64(type.data(), type.size()));
  std::shuffle(pick.begin(), pick.end(), rng);
  pick.resize(std::min(pick.size(), std::max<size_t>(1, opt.silhouette_points)));
  std::vector<double> pts;
  std::vector<int> labels;
  for (int label = 0; label < 2; ++label)
    for (size_t r : pick) {
      const float *x = label == 0 ? &p[r * dim] : &n[r * dim];
      for (size_t i = 0; i < dim; ++i) pts.push_back(double(q[r * dim + i]) - double(x[i]));
      labels.push_back(label);
    }
  g.silhouette = silhouette(pts, dim, labels);
  g.silhouette_points = labels.size();
  return g;
}

}  // namespace

double silhouette(std::span<const double> points, size_t dim, std::span<const int> labels) {
  const size_t m = labels.size();
  VERITY_CHECK(dim > 0 && points.size() == m * dim, ConfigError, "silhouette: ", points.size(),
               " values for ", m, " points of dim ", dim);
  size_t ones = 0;
  for (int l : labels) {
    VERITY_CHECK(l == 0 || l == 1, ConfigError, "silhouette: labels must be 0 or 1 (got ", l, ")");
    ones += size_t(l);
  }
  VERITY_CHECK(ones > 0 && ones < m, ConfigError, "silhouette: needs points of both clusters");
  std::vector<double> dist(m * m, 0.0);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = i + 1; j < m; ++j) {
      double s = 0;
      for (size_t k = 0; k < dim; ++k) {
        double t = points[i * dim + k] - points[j * dim + k];
        s += t * t;
      }
      dist[i * m + j] = dist[j * m + i] = std::sqrt(s);
    }
  const size_t size[2] = {m - ones, ones};
  double total = 0;
  for (size_t i = 0; i < m; ++i) {
    double sum[2] = {0, 0};
    for (size_t j = 0; j < m; ++j) sum[labels[j]] += dist[i * m + j];
    int own = labels[i];
    if (size[own] < 2) continue;  // s_i = 0
    double a = sum[own] / double(size[own] - 1), b = sum[1 - own] / double(size[1 - own]);
    double mx = std::max(a, b);
    total += mx > 0 ? (b - a) / mx : 0.0;
  }
  return total / double(m);
}

LogisticProbe::LogisticProbe(size_t epochs, double learning_rate, double l2)
    : epochs_(epochs), lr_(learning_rate), l2_(l2) {
  VERITY_CHECK(learning_rate > 0 && l2 >= 0, ConfigError, "probe: learning rate must be > 0 and l2 >= 0");
}

void LogisticProbe::fit(std::span<const double> x, size_t dim, std::span<const int> labels) {
  const size_t m = labels.size();
  VERITY_CHECK(m > 0 && dim > 0 && x.size() == m * dim, ConfigError, "probe: ", x.size(), " values for ", m,
               " rows of dim ", dim);
  mean_.assign(dim, 0.0);
  scale_.assign(dim, 0.0);
  for (size_t r = 0; r < m; ++r)
    for (size_t i = 0; i < dim; ++i) mean_[i] += x[r * dim + i];
  for (auto &v : mean_) v /= double(m);
  for (size_t r = 0; r < m; ++r)
    for (size_t i = 0; i < dim; ++i) scale_[i] += (x[r * dim + i] - mean_[i]) * (x[r * dim + i] - mean_[i]);
  for (auto &v : scale_) {
    double sd = std::sqrt(v / double(m));
    v = sd > 1e-12 ? 1.0 / sd : 0.0;  // constant feature: ignored
  }
  std::vector<double> z(m * dim);
  for (size_t r = 0; r < m; ++r)
    for (size_t i = 0; i < dim; ++i) z[r * dim + i] = (x[r * dim + i] - mean_[i]) * scale_[i];
  w_.assign(dim, 0.0);
  bias_ = 0;
  std::vector<double> grad(dim);
  for (size_t e = 0; e < epochs_; ++e) {
    std::fill(grad.begin(), grad.end(), 0.0);
    double gb = 0;
    for (size_t r = 0; r < m; ++r) {
      const double *zr = &z[r * dim];
      double s = bias_;
      for (size_t i = 0; i < dim; ++i) s += w_[i] * zr[i];
      double err = sigmoid(s) - double(labels[r]);
      gb += err;
      for (size_t i = 0; i < dim; ++i) grad[i] += err * zr[i];
    }
    for (size_t i = 0; i < dim; ++i) w_[i] -= lr_ * (grad[i] / double(m) + l2_ * w_[i]);
    bias_ -= lr_ * gb / double(m);
  }
}

double LogisticProbe::probability(std::span<const double> row) const {
  VERITY_CHECK(row.size() == w_.size(), ConfigError, "probe: row of ", row.size(), " values, trained on ",
               w_.size());
  double s = bias_;
  for (size_t i = 0; i < w_.size(); ++i) s += w_[i] * (row[i] - mean_[i]) * scale_[i];
  return sigmoid(s);
}

double LogisticProbe::accuracy(std::span<const double> x, std::span<const int> labels) const {
  const size_t dim = w_.size();
  VERITY_CHECK(dim > 0 && x.size() == labels.size() * dim, ConfigError, "probe: accuracy shape mismatch");
  if (labels.empty()) return 0;
  size_t right = 0;
  for (size_t r = 0; r < labels.size(); ++r)
    right += (probability(x.subspan(r * dim, dim)) >= 0.5) == (labels[r] == 1);
  return double(right) / double(labels.size());
}

GeometryReport probe_geometry(std::span<const float> q, std::span<const float> p, std::span<const float> n,
                              size_t count, size_t dim, std::span<const std::string> types,
                              std::span<const std::string> query_keys, const GeometryOptions &opt) {
  VERITY_CHECK(dim > 0 && q.size() == count * dim && p.size() == count * dim && n.size() == count * dim,
               ConfigError, "geometry: vectors do not match ", count, " triples of dim ", dim);
  VERITY_CHECK(types.size() == count && query_keys.size() == count, ConfigError, "geometry: ", types.size(),
               " types and ", query_keys.size(), " query keys for ", count, " triples");
  VERITY_CHECK(opt.holdout > 0 && opt.holdout < 1, ConfigError, "geometry: holdout must be in (0, 1) (got ",
               opt.holdout, ")");
  VERITY_CHECK(count > 0, ConfigError, "geometry: no triples");
  std::vector<bool> held_out(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t h = fnv1a64(query_keys[i].data(), query_keys[i].size(), 14695981039346656037ull ^ opt.seed);
    held_out[i] = double(h % 1000003) / 1000003.0 < opt.holdout;
  }
  GeometryReport rep;
  rep.dim = dim;
  std::map<std::string, std::vector<size_t>> by_type;
  std::vector<size_t> all(count);
  std::iota(all.begin(), all.end(), 0);
  for (size_t i = 0; i < count; ++i) by_type[types[i].empty() ? "unknown" : types[i]].push_back(i);
  rep.all = measure(q, p, n, dim, all, held_out, opt, "all");
  for (const auto &[type, rows] : by_type)
    rep.by_type.push_back(measure(q, p, n, dim, rows, held_out, opt, type));
  return rep;
}

GeometryReport probe_geometry(std::span<const data::Triple> triples, const encode::Encoder &encoder,
                              const GeometryOptions &options, size_t batch_size) {
  EmbeddingCache cache(encoder, "", batch_size);
  std::vector<std::string> qs, ps, ns, types, keys;
  for (const auto &t : triples) {
    qs.push_back(t.query);
    ps.push_back(t.positive);
    ns.push_back(t.negative);
    types.push_back(t.type);
  }
  auto eq = cache.embed(qs), ep = cache.embed(ps),
       en = cache.embed(ns);  // each distinct text encoded once
  return probe_geometry(eq, ep, en, triples.size(), cache.dim(), types, qs, options);
}

}  // namespace verity::diagnose
