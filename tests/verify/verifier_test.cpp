#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "core/error.hpp"
#include "verify/simple_verifiers.hpp"
#include "verify/verifier.hpp"

using namespace verity;
using namespace verity::verify;

namespace {
SimilarityMap hand_map() { return SimilarityMap(2, 3, {0.9f, 0.1f, -0.2f, 0.3f, 0.8f, 0.5f}); }

std::vector<float> random_tokens(size_t n, size_t d, std::mt19937& rng) {
  std::normal_distribution<float> g;
  std::vector<float> v(n * d);
  for (auto& x : v) x = g(rng);
  return v;
}
}  // namespace

TEST(Verifiers, HandComputedTwoByThree) {
  auto m = hand_map();
  EXPECT_NEAR(make_verifier("f0")->score(m), 2.4 / 6, 1e-6);
  EXPECT_NEAR(make_verifier("f1")->score(m), (0.9 + 0.8) / 2, 1e-6);
  // r = 2/3. Row 0 logits: 0.9/0.1, (0.1-0.1·2/3)/0.1, (-0.2-0.1·4/3)/0.1;
  // row 1: (0.3-0.1)/0.1, (0.8-0.1/3)/0.1, (0.5-0.1/3)/0.1.
  auto row = [](std::vector<double> logits, std::vector<double> values) {
    double z = 0, s = 0;
    for (size_t j = 0; j < logits.size(); ++j) z += std::exp(logits[j]), s += std::exp(logits[j]) * values[j];
    return s / z;
  };
  const double expected = (row({9.0, 1.0 / 3, -10.0 / 3}, {0.9, 0.1, -0.2}) +
                           row({2.0, 23.0 / 3, 14.0 / 3}, {0.3, 0.8, 0.5})) / 2;
  EXPECT_NEAR(expected, 0.8420170603188837, 1e-12);  // independent Python computation
  EXPECT_NEAR(make_verifier("f2")->score(m), expected, 1e-6);
  EXPECT_NEAR(make_verifier("f2:lambda=0.1,tau=0.1")->score(m), expected, 1e-6);
  // lambda = 0 and a tiny tau turn the soft alignment into MaxSim.
  EXPECT_NEAR(make_verifier("f2:lambda=0,tau=0.0001")->score(m), 0.85, 1e-5);
}

TEST(Verifiers, EmptyMapScoresZero) {
  SimilarityMap empty(0, 5, {});
  for (const char* s : {"f0", "f1", "f2"}) EXPECT_EQ(make_verifier(s)->score(empty), 0.0f) << s;
}

TEST(Verifiers, MaxSimIgnoresTokenOrderSoftAlignDoesNot) {
  std::mt19937 rng(9);
  const size_t d = 32, n = 12;
  auto q = random_tokens(n, d, rng);
  auto doc = q;  // document tokens aligned with the query, plus noise
  std::normal_distribution<float> noise(0, 0.3f);
  for (auto& x : doc) x += noise(rng);
  auto permuted = doc;
  for (size_t t = 0; t < n; ++t)  // reverse the token order
    std::copy_n(doc.begin() + (n - 1 - t) * d, d, permuted.begin() + t * d);
  auto aligned_map = SimilarityMap::compute(q, doc, d);
  auto permuted_map = SimilarityMap::compute(q, permuted, d);
  auto f1 = make_verifier("f1"), f2 = make_verifier("f2");
  EXPECT_NEAR(f1->score(aligned_map), f1->score(permuted_map), 1e-6);
  EXPECT_GT(f2->score(aligned_map), f2->score(permuted_map) + 0.05);
}

TEST(Verifiers, BatchEqualsSingle) {
  std::mt19937 rng(3);
  std::vector<SimilarityMap> maps;
  for (size_t k = 0; k < 5; ++k)
    maps.push_back(SimilarityMap::compute(random_tokens(3 + k, 8, rng), random_tokens(7, 8, rng), 8));
  for (const char* s : {"f0", "f1", "f2"}) {
    auto v = make_verifier(s);
    auto batch = v->score_batch(maps);
    ASSERT_EQ(batch.size(), maps.size());
    for (size_t k = 0; k < maps.size(); ++k) EXPECT_EQ(batch[k], v->score(maps[k])) << s;
  }
}

TEST(Verifiers, FactoryErrorsAndSpecs) {
  auto expect_error = [](const std::string& spec, const std::string& needle) {
    try {
      make_verifier(spec);
      FAIL() << spec;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("f9", "valid: f0, f1, f2, f3, f4");
  expect_error("f2:gamma=1", "valid: lambda, tau");
  expect_error("f2:tau=0", "tau=0");
  expect_error("f2:lambda=-1", "lambda=-1");
  expect_error("f2:tau=x", "not a number");
  expect_error("f2:tau=1,tau=2", "twice");
  expect_error("f1:x=1", "no arguments");
  expect_error("f3", "needs a trained weights file");
  expect_error("f4:", "needs a trained weights file");
  EXPECT_EQ(make_verifier("f2")->spec(), "f2:lambda=0.1,tau=0.1");
  auto f2 = make_verifier("f2:lambda=0.3,tau=0.07");
  EXPECT_EQ(make_verifier(f2->spec())->spec(), f2->spec());
  EXPECT_TRUE(f2->is_trained());
  EXPECT_THROW(f2->save("/tmp/never"), Unsupported);
  EXPECT_EQ(verifier_kinds().size(), 8u);  // f0-f5, ensemble and default
  expect_error("ensemble", "needs a file");
}
