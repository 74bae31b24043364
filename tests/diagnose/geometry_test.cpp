#include "diagnose/geometry.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.hpp"

namespace verity::diagnose {
namespace {

TEST(Silhouette, MatchesHandComputedValue) {
  // 1-D clusters {0, 1} and {10, 11}: x=0 has a = 1, b = (10 + 11)/2 = 10.5,
  // s = 9.5/10.5; x=1 has a = 1, b = (9 + 10)/2, s = 8.5/9.5; the other
  // cluster mirrors these.
  std::vector<double> pts = {0, 1, 10, 11};
  std::vector<int> labels = {0, 0, 1, 1};
  EXPECT_NEAR(silhouette(pts, 1, labels), (9.5 / 10.5 + 8.5 / 9.5) / 2, 1e-12);
  // Interleaved clusters score below zero.
  std::vector<int> mixed = {0, 1, 0, 1};
  EXPECT_LT(silhouette(pts, 1, mixed), 0.0);
}

TEST(Silhouette, RejectsOneCluster) {
  std::vector<double> pts = {0, 1};
  std::vector<int> labels = {1, 1};
  EXPECT_THROW(silhouette(pts, 1, labels), ConfigError);
}

TEST(LogisticProbe, SeparatesLinearlySeparableData) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g;
  std::vector<double> x;
  std::vector<int> y;
  for (int i = 0; i < 200; ++i) {
    int label = i % 2;
    x.push_back(g(rng) * 0.1 + (label ? 1.0 : -1.0));
    x.push_back(g(rng));
    y.push_back(label);
  }
  LogisticProbe probe(200, 0.5, 0.0);
  probe.fit(x, 2, y);
  EXPECT_DOUBLE_EQ(probe.accuracy(x, y), 1.0);
  std::vector<double> pos = {1.0, 0.0}, neg = {-1.0, 0.0};
  EXPECT_GT(probe.probability(pos), 0.9);
  EXPECT_LT(probe.probability(neg), 0.1);
}

// Triples in dim 4 with known geometry: q = e0; the paraphrase is close to q;
// the "negation" edit moves q along e1 (a consistent direction: linearly
// separable), the "noise" edit is drawn exactly like the paraphrase (not
// separable).
struct Synthetic {
  std::vector<float> q, p, n;
  std::vector<std::string> types, keys;
  size_t count = 0;
  void add(const std::vector<float> &vq, const std::vector<float> &vp, const std::vector<float> &vn,
           const std::string &type) {
    auto norm = [](std::vector<float> v) {
      double s = 0;
      for (float x : v) s += double(x) * x;
      for (float &x : v) x = float(x / std::sqrt(s));
      return v;
    };
    for (float x : norm(vq)) q.push_back(x);
    for (float x : norm(vp)) p.push_back(x);
    for (float x : norm(vn)) n.push_back(x);
    types.push_back(type);
    keys.push_back("query " + std::to_string(count++));
  }
};

Synthetic make_synthetic(size_t per_type) {
  Synthetic s;
  std::mt19937_64 rng(5);
  std::normal_distribution<float> g(0.0f, 0.05f);
  for (size_t i = 0; i < per_type; ++i) {
    std::vector<float> q = {1, g(rng), g(rng), g(rng)};
    s.add(q, {1, g(rng), g(rng), g(rng)}, {1, 1 + g(rng), g(rng), g(rng)}, "negation");
    s.add(q, {1, g(rng), g(rng), g(rng)}, {1, g(rng), g(rng), g(rng)}, "noise");
  }
  return s;
}

TEST(Geometry, KnownCosinesProbeAndSilhouette) {
  auto s = make_synthetic(150);
  GeometryOptions opt;
  auto rep = probe_geometry(s.q, s.p, s.n, s.count, 4, s.types, s.keys, opt);
  ASSERT_EQ(rep.by_type.size(), 2u);
  const auto &neg = rep.by_type[0];
  const auto &noise = rep.by_type[1];
  ASSERT_EQ(neg.type, "negation");
  ASSERT_EQ(noise.type, "noise");
  EXPECT_EQ(neg.count, 150u);
  // cos(e0, (1,1,0,0)/sqrt2) = 1/sqrt2; the paraphrase is almost q.
  EXPECT_NEAR(neg.cos_edit.mean, 1 / std::sqrt(2.0), 0.02);
  EXPECT_GT(neg.cos_paraphrase.mean, 0.98);
  EXPECT_NEAR(noise.cos_edit.mean, noise.cos_paraphrase.mean, 0.01);
  ASSERT_TRUE(neg.probed);
  ASSERT_TRUE(noise.probed);
  EXPECT_GT(neg.test_pairs, 0u);
  EXPECT_EQ(neg.train_pairs + neg.test_pairs, 300u);
  EXPECT_GE(neg.probe_accuracy, 0.99);
  EXPECT_LT(noise.probe_accuracy, 0.7);  // same distribution: about chance
  EXPECT_GT(neg.silhouette, 0.7);
  EXPECT_LT(std::abs(noise.silhouette), 0.1);
  EXPECT_EQ(rep.all.count, 300u);
}

TEST(Geometry, SmallTypesGetCosinesOnly) {
  auto s = make_synthetic(4);
  GeometryOptions opt;
  auto rep = probe_geometry(s.q, s.p, s.n, s.count, 4, s.types, s.keys, opt);
  for (const auto &t : rep.by_type) EXPECT_FALSE(t.probed);
  EXPECT_GT(rep.by_type[0].cos_paraphrase.mean, rep.by_type[0].cos_edit.mean);
}

TEST(Geometry, ShapeMismatchNamesTheCounts) {
  auto s = make_synthetic(4);
  GeometryOptions opt;
  s.types.pop_back();
  try {
    probe_geometry(s.q, s.p, s.n, s.count, 4, s.types, s.keys, opt);
    FAIL() << "no exception";
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("7 types"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace verity::diagnose
