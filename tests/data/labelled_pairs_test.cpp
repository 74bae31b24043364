#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <unistd.h>

#include "core/error.hpp"
#include "core/io.hpp"
#include "data/labelled_pairs.hpp"

using namespace verity;
using namespace verity::data;
namespace fs = std::filesystem;

namespace {
std::string temp_file(const std::string& name, const std::string& contents) {
  auto dir = fs::temp_directory_path() / ("verity_pairs_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto path = (dir / name).string();
  write_file_atomic(path, contents);
  return path;
}

std::string error_of(const std::string& path, bool skip = false) {
  try {
    read_labelled_pairs(path, skip);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(LabelledPairs, ReadsFieldsAndRoundTrips) {
  auto path = temp_file("ok.jsonl",
                        "{\"id\": 7, \"a\": \"x y\", \"b\": \"y x\", \"label\": 1}\n"
                        "{\"a\": \"p\", \"b\": \"q\", \"label\": false, \"source\": \"s\", \"score\": 2.5}\n");
  auto f = read_labelled_pairs(path);
  ASSERT_EQ(f.pairs.size(), 2u);
  EXPECT_EQ(f.pairs[0].id, "7");
  EXPECT_EQ(f.pairs[0].label, 1);
  EXPECT_EQ(f.pairs[1].label, 0);
  EXPECT_EQ(f.pairs[1].source, "s");
  EXPECT_EQ(f.pairs[1].line, 2u);
  auto out = temp_file("out.jsonl", "");
  write_labelled_pairs(out, f.pairs);
  auto g = read_labelled_pairs(out);
  ASSERT_EQ(g.pairs.size(), 2u);
  EXPECT_EQ(g.pairs[1].a, "p");
  EXPECT_EQ(g.pairs[0].id, "7");
}

TEST(LabelledPairs, BadLinesNameFileLineAndField) {
  auto empty = temp_file("empty.jsonl", "{\"a\": \"x\", \"b\": \"y\", \"label\": 1}\n{\"a\": \"x\", \"b\": \" \", \"label\": 0}\n");
  EXPECT_NE(error_of(empty).find("empty.jsonl:2: field \"b\" is empty"), std::string::npos) << error_of(empty);
  auto label = temp_file("label.jsonl", "{\"a\": \"x\", \"b\": \"y\", \"label\": 3}\n");
  EXPECT_NE(error_of(label).find("label.jsonl:1: field \"label\" must be 0 or 1"), std::string::npos);
  auto missing = temp_file("missing.jsonl", "{\"a\": \"x\", \"label\": 1}\n");
  EXPECT_NE(error_of(missing).find("missing field \"b\""), std::string::npos);
  auto malformed = temp_file("bad.jsonl", "{\"a\": \n");
  EXPECT_NE(error_of(malformed, true).find("bad.jsonl:1: malformed JSON"), std::string::npos);
  // Lenient reads skip and count field errors.
  auto f = read_labelled_pairs(empty, true);
  EXPECT_EQ(f.pairs.size(), 1u);
  EXPECT_EQ(f.skipped, 1u);
  ASSERT_EQ(f.skip_examples.size(), 1u);
}

TEST(LabelledPairs, GroupKeyFoldsCaseAndSpace) {
  EXPECT_EQ(pair_group_key("  The  Dog\tbit "), "the dog bit");
}

TEST(LabelledPairs, GroupedSplitNeverSharesASentence) {
  std::vector<LabelledPair> pairs;
  for (int i = 0; i < 300; ++i) {
    // Chains: pair i shares its b with pair i+1's a within blocks of 3.
    const int block = i / 3;
    pairs.push_back({"s" + std::to_string(block) + "_" + std::to_string(i % 3),
                     "S" + std::to_string(block) + "_" + std::to_string((i % 3) + 1), i % 2, "", "", 0});
    if (i % 3) pairs.back().a = "S" + std::to_string(block) + "_" + std::to_string(i % 3);  // shared text
  }
  auto split = split_grouped(pairs, {0.7, 0.15, 0.15}, 3);
  std::set<std::string> seen[3];
  size_t total = 0;
  for (int k = 0; k < 3; ++k) {
    total += split.parts[k].size();
    for (const auto& p : split.parts[k]) seen[k].insert(pair_group_key(p.a)), seen[k].insert(pair_group_key(p.b));
  }
  EXPECT_EQ(total, pairs.size());
  for (int x = 0; x < 3; ++x)
    for (int y = x + 1; y < 3; ++y)
      for (const auto& t : seen[x]) EXPECT_EQ(seen[y].count(t), 0u) << t << " in parts " << x << " and " << y;
  EXPECT_NEAR(double(split.parts[0].size()) / double(total), 0.7, 0.03);
  EXPECT_GT(split.parts[2].size(), 0u);
  // Deterministic in the seed, different across seeds.
  auto again = split_grouped(pairs, {0.7, 0.15, 0.15}, 3);
  EXPECT_EQ(again.parts[2].front().a, split.parts[2].front().a);
  EXPECT_THROW(split_grouped(pairs, {0.5, 0.2, 0.2}, 1), ConfigError);
}
