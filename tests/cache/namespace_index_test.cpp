// NamespaceIndex against an exact brute-force oracle: the scan below the limit,
// the HNSW graph above it, deletes, revival and the rebuild after many deletes.
#include "cache/namespace_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <map>
#include <set>

#include "core/error.hpp"

using namespace verity::cache;

namespace {
constexpr size_t kDim = 16;

std::vector<float> random_unit(std::mt19937& rng) {
  std::normal_distribution<float> g;
  std::vector<float> v(kDim);
  float n = 0;
  for (auto& x : v) x = g(rng), n += x * x;
  for (auto& x : v) x /= std::sqrt(n);
  return v;
}

float dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0;
  for (size_t i = 0; i < kDim; ++i) s += a[i] * b[i];
  return s;
}

// The k best live ids by exact cosine.
std::vector<int64_t> oracle(const std::map<int64_t, std::vector<float>>& live, const std::vector<float>& q, size_t k) {
  std::vector<std::pair<float, int64_t>> all;
  for (const auto& [id, v] : live) all.push_back({-dot(v, q), id});
  std::sort(all.begin(), all.end());
  std::vector<int64_t> out;
  for (size_t i = 0; i < std::min(k, all.size()); ++i) out.push_back(all[i].second);
  return out;
}
}  // namespace

TEST(NamespaceIndex, ExactScanMatchesTheOracleIncludingDeletes) {
  std::mt19937 rng(7);
  NamespaceIndex index(kDim, {});
  std::map<int64_t, std::vector<float>> live;
  for (int64_t id = 1; id <= 200; ++id) {
    live[id] = random_unit(rng);
    index.add(id, live[id]);
  }
  for (int64_t id = 1; id <= 200; id += 3) {
    EXPECT_TRUE(index.remove(id));
    live.erase(id);
  }
  EXPECT_FALSE(index.remove(1));
  EXPECT_FALSE(index.uses_graph());
  EXPECT_EQ(index.size(), live.size());
  for (int q = 0; q < 20; ++q) {
    auto query = random_unit(rng);
    auto got = index.search(query, 5);
    std::vector<int64_t> ids;
    for (const auto& n : got) ids.push_back(n.id);
    EXPECT_EQ(ids, oracle(live, query, 5));
    EXPECT_NEAR(got[0].cosine, dot(live[got[0].id], query), 1e-5);
    for (size_t i = 1; i < got.size(); ++i) EXPECT_GE(got[i - 1].cosine, got[i].cosine);
  }
}

TEST(NamespaceIndex, GraphAboveTheLimitRecallsTheOracle) {
  std::mt19937 rng(11);
  AnnOptions o;
  o.exact_limit = 100;
  NamespaceIndex index(kDim, o);
  std::map<int64_t, std::vector<float>> live;
  std::vector<int64_t> ids;
  std::vector<float> vecs;
  for (int64_t id = 1; id <= 1500; ++id) {
    live[id] = random_unit(rng);
    ids.push_back(id);
    vecs.insert(vecs.end(), live[id].begin(), live[id].end());
  }
  index.add_batch(ids, vecs, 2);
  EXPECT_TRUE(index.uses_graph());
  // Delete most of them: marked nodes outnumber live ones, so the graph is rebuilt.
  for (int64_t id = 1; id <= 1100; ++id) {
    ASSERT_TRUE(index.remove(id));
    live.erase(id);
  }
  EXPECT_EQ(index.size(), live.size());
  // A removed id comes back with a new vector.
  live[5] = random_unit(rng);
  index.add(5, live[5]);
  EXPECT_TRUE(index.contains(5));
  size_t found = 0, total = 0;
  for (int q = 0; q < 50; ++q) {
    auto query = random_unit(rng);
    auto want = oracle(live, query, 4);
    std::set<int64_t> got;
    for (const auto& n : index.search(query, 4)) {
      got.insert(n.id);
      EXPECT_TRUE(live.count(n.id)) << "deleted id " << n.id << " returned";
    }
    for (int64_t id : want) found += got.count(id), ++total;
  }
  EXPECT_GE(double(found) / double(total), 0.95);
  auto listed = index.ids();
  EXPECT_EQ(std::set<int64_t>(listed.begin(), listed.end()).size(), live.size());
}

TEST(NamespaceIndex, ReAddReplacesTheVector) {
  std::mt19937 rng(3);
  NamespaceIndex index(kDim, {});
  auto a = random_unit(rng), b = random_unit(rng);
  index.add(1, a);
  index.add(1, b);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_NEAR(index.search(b, 1)[0].cosine, 1.0f, 1e-5);
  EXPECT_TRUE(index.search(a, 0).empty());
  EXPECT_THROW(index.search(std::vector<float>(3), 1), verity::ConfigError);
}
