#include "nearmiss/splits.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "nearmiss/text_utils.hpp"

using namespace verity::nearmiss;
using verity::data::Triple;

namespace {
GroupedTriple make(std::string q, std::string p, std::string n, std::string group, std::string type = "negation",
                   std::string source = "s") {
  Triple t;
  t.query = std::move(q);
  t.positive = std::move(p);
  t.negative = std::move(n);
  t.type = std::move(type);
  t.source = std::move(source);
  return {t, std::move(group)};
}

std::vector<GroupedTriple> overlapping_fixture() {
  std::vector<GroupedTriple> v;
  // Reversed pairs (as in CANNOT's GLUE file): the same two sentences in two groups.
  for (int i = 0; i < 200; ++i) {
    std::string a = "Sentence number " + std::to_string(i) + " holds.";
    std::string b = "Sentence number " + std::to_string(i) + " does not hold.";
    std::string pa = "Statement number " + std::to_string(i) + " holds.";
    std::string pb = "Statement number " + std::to_string(i) + " does not hold.";
    v.push_back(make(a, pa, b, "g:" + a));
    v.push_back(make(b, pb, a, "g:" + b));
  }
  return v;
}
}  // namespace

TEST(NearmissSplits, NoSentenceInTwoSplitsAndConflictsCounted) {
  auto a = assign_splits(overlapping_fixture(), {}, 7);
  EXPECT_NO_THROW(check_disjoint(a.splits));
  size_t kept = a.splits[0].size() + a.splits[1].size() + a.splits[2].size();
  EXPECT_EQ(kept + a.dropped_cross_split, 400u);
  EXPECT_GT(a.dropped_cross_split, 0u);  // ~20% of reversed pairs hash to different splits
  EXPECT_EQ(a.dropped_cross_split_by_source["s"], a.dropped_cross_split);
  // Roughly 80/10/10 over the 400 groups.
  EXPECT_GT(a.splits[kTrain].size(), a.splits[kDev].size() * 3);
  EXPECT_GT(a.splits[kDev].size(), 0u);
  EXPECT_GT(a.splits[kTest].size(), 0u);
}

TEST(NearmissSplits, GroupsStayTogether) {
  std::vector<GroupedTriple> v;
  for (int g = 0; g < 50; ++g)
    for (int k = 0; k < 3; ++k)
      v.push_back(make("q" + std::to_string(g) + "_" + std::to_string(k) + ".", "p" + std::to_string(g) + "_" +
                           std::to_string(k) + ".", "n" + std::to_string(g) + "_" + std::to_string(k) + ".",
                       "story" + std::to_string(g)));
  auto a = assign_splits(v, {}, 3);
  EXPECT_EQ(a.dropped_cross_split, 0u);
  std::map<std::string, std::set<size_t>> split_of_group;
  for (size_t s = 0; s < 3; ++s)
    for (auto& t : a.splits[s]) split_of_group[t.query.substr(0, t.query.find('_'))].insert(s);
  EXPECT_EQ(split_of_group.size(), 50u);
  for (auto& [g, splits] : split_of_group) EXPECT_EQ(splits.size(), 1u) << g;
}

TEST(NearmissSplits, DeterministicForASeedDifferentAcrossSeeds) {
  auto a = assign_splits(overlapping_fixture(), {}, 11);
  auto b = assign_splits(overlapping_fixture(), {}, 11);
  auto c = assign_splits(overlapping_fixture(), {}, 12);
  for (size_t s = 0; s < 3; ++s) {
    ASSERT_EQ(a.splits[s].size(), b.splits[s].size());
    for (size_t i = 0; i < a.splits[s].size(); ++i) EXPECT_EQ(a.splits[s][i].query, b.splits[s][i].query);
  }
  bool differs = false;
  for (size_t s = 0; s < 3; ++s) differs |= a.splits[s].size() != c.splits[s].size();
  if (!differs)
    for (size_t i = 0; i < a.splits[0].size(); ++i) differs |= a.splits[0][i].query != c.splits[0][i].query;
  EXPECT_TRUE(differs);
}

TEST(NearmissSplits, CheckDisjointNamesTheSentence) {
  std::array<std::vector<Triple>, 3> splits;
  Triple t;
  t.query = "The dog bit the man.";
  t.positive = "The man was bitten by the dog.";
  t.negative = "The man bit the dog.";
  splits[kTrain].push_back(t);
  Triple u = t;
  u.query = "Another query.";
  u.positive = "Another positive.";
  u.negative = "the MAN bit  the dog.";  // same sentence after normalization
  splits[kTest].push_back(u);
  try {
    check_disjoint(splits);
    FAIL() << "overlap not detected";
  } catch (const verity::Error& e) {
    EXPECT_NE(std::string(e.what()).find("MAN bit"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("train"), std::string::npos) << e.what();
  }
}

TEST(NearmissSplits, BadRatiosRejected) {
  EXPECT_THROW(assign_splits({}, {0.5, 0.1, 0.1}, 1), verity::ConfigError);
  EXPECT_THROW(assign_splits({}, {1.2, -0.1, -0.1}, 1), verity::ConfigError);
}

TEST(NearmissSplits, CapPerTypeRoundRobinsSources) {
  std::vector<Triple> split;
  for (int i = 0; i < 100; ++i) {
    auto g = make("a" + std::to_string(i), "b", "c", "", "negation", "big");
    split.push_back(g.triple);
  }
  for (int i = 0; i < 3; ++i) split.push_back(make("x" + std::to_string(i), "b", "c", "", "negation", "small").triple);
  for (int i = 0; i < 5; ++i) split.push_back(make("y" + std::to_string(i), "b", "c", "", "spatial", "big").triple);
  size_t dropped = cap_per_type(split, 10, 1);
  EXPECT_EQ(dropped, 103u + 5u - 15u);
  std::map<std::string, size_t> per;
  for (auto& t : split) ++per[t.type + "/" + t.source];
  EXPECT_EQ(per["negation/small"], 3u);  // all of the small source survive
  EXPECT_EQ(per["negation/big"], 7u);
  EXPECT_EQ(per["spatial/big"], 5u);
}
