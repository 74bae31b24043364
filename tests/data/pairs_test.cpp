// Pair files: the fields read, every bad line named by file:line, and triples
// turned into de-duplicated pairs.
#include "data/pairs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

using namespace verity;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("verity_pairs_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}
}  // namespace

TEST(Pairs, ReadsTheSharedFormat) {
  auto f = data::read_pairs(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/cache/pairs.jsonl");
  ASSERT_EQ(f.pairs.size(), 8u);
  EXPECT_EQ(f.pairs[0].id, "p1");
  EXPECT_TRUE(f.pairs[0].same);
  EXPECT_FALSE(f.pairs[1].same);
  EXPECT_EQ(f.pairs[2].a, "The dog bit the man.");
  EXPECT_NE(f.content_hash, 0u);
}

TEST(Pairs, BadLinesNameFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"a\": \"x\", \"b\": \"y\", \"label\": 2}", ":1: field \"label\" must be 0 or 1"},
      {"{\"a\": \"x\", \"label\": 1}", ":1: field \"b\" must be a non-empty string"},
      {"{\"a\": \"\", \"b\": \"y\", \"label\": 1}", ":1: field \"a\" must be"},
      {"{\"a\": \"x\", \"b\": \"y\", \"label\": 1}\n[1]", ":2: expected a JSON object"},
      {"{\"a\": ", ":1: malformed JSON"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    auto path = write_temp(std::to_string(i), cases[i].first);
    try {
      data::read_pairs(path);
      ADD_FAILURE() << "no error for " << cases[i].first;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(path + cases[i].second), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
  }
}

TEST(Pairs, TriplesBecomeTwoPairsEachWithoutRepeats) {
  auto t = data::read_triples(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/cache/triples.jsonl");
  auto pairs = data::pairs_from_triples(t.triples);
  // Two triples share query and positive: 3 triples -> 5 distinct pairs.
  ASSERT_EQ(pairs.size(), 5u);
  size_t same = 0;
  for (const auto& p : pairs) {
    same += p.same;
    EXPECT_EQ(p.type.empty(), p.same);
  }
  EXPECT_EQ(same, 2u);
  EXPECT_EQ(pairs[1].type, "role_swap");
}
