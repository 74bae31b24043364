#include "data/triples.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

using namespace verity;
namespace fs = std::filesystem;

namespace {
std::string write_temp(const std::string& name, const std::string& contents) {
  auto path = (fs::temp_directory_path() / ("verity_triples_" + name)).string();
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string error_of(const std::string& path, data::TripleReadOptions o = {}) {
  try {
    data::read_triples(path, o);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Triples, RoundTripKeepsEveryField) {
  std::vector<data::Triple> in(2);
  in[0] = {"the dog bit the man", "the man was bitten by the dog", "the man bit the dog", "role_swap", "", {}, {}, 0};
  in[1] = {"q \"quoted\" é", "p", "n", "", "bm25", 7, 12.5, 0};
  auto path = (fs::temp_directory_path() / "verity_triples_roundtrip.jsonl").string();
  data::write_triples(path, in);
  auto out = data::read_triples(path);
  ASSERT_EQ(out.triples.size(), 2u);
  EXPECT_EQ(out.triples[0].query, in[0].query);
  EXPECT_EQ(out.triples[0].type, "role_swap");
  EXPECT_FALSE(out.triples[0].rank.has_value());
  EXPECT_EQ(out.triples[1].query, in[1].query);
  EXPECT_EQ(out.triples[1].source, "bm25");
  EXPECT_EQ(out.triples[1].rank, 7);
  EXPECT_DOUBLE_EQ(*out.triples[1].score, 12.5);
  EXPECT_EQ(out.triples[1].line, 2u);
  EXPECT_NE(out.content_hash, 0u);
}

TEST(Triples, BadLinesNameFileAndLine) {
  auto good = R"({"query": "a", "positive": "b", "negative": "c"})";
  EXPECT_NE(error_of(write_temp("json.jsonl", std::string(good) + "\n{\"query\": \n")).find("json.jsonl:2: malformed JSON"),
            std::string::npos);
  EXPECT_NE(error_of(write_temp("miss.jsonl", R"({"query": "a", "positive": "b"})")).find(
                "miss.jsonl:1: missing field \"negative\""),
            std::string::npos);
  EXPECT_NE(error_of(write_temp("empty.jsonl", R"({"query": " ", "positive": "b", "negative": "c"})")).find(
                "field \"query\" is empty"),
            std::string::npos);
  EXPECT_NE(error_of(write_temp("rank.jsonl", R"({"query": "a", "positive": "b", "negative": "c", "rank": 1.5})"))
                .find("\"rank\" must be an integer"),
            std::string::npos);
  EXPECT_NE(error_of(write_temp("arr.jsonl", "[1]")).find("expected a JSON object, got array"), std::string::npos);
  EXPECT_NE(error_of(write_temp("big.jsonl", R"({"query": "a", "positive": "b", "negative": "c", "score": 1e999})"))
                .find("big.jsonl:1: malformed JSON"),
            std::string::npos);
}

TEST(Triples, SkipInvalidCountsByReason) {
  auto path = write_temp("skip.jsonl",
                         "{\"query\": \"a\", \"positive\": \"b\", \"negative\": \"c\"}\n"
                         "{\"query\": \"a\", \"positive\": \"b\"}\n"
                         "{\"query\": \"a\", \"positive\": \"\", \"negative\": \"c\"}\n"
                         "{\"query\": \"a\", \"positive\": \"b\"}\n");
  auto f = data::read_triples(path, {.skip_invalid = true});
  EXPECT_EQ(f.triples.size(), 1u);
  EXPECT_EQ(f.skipped, 3u);
  EXPECT_EQ(f.skipped_by_reason.at("missing field \"negative\""), 2u);
  EXPECT_EQ(f.skipped_by_reason.at("field \"positive\" is empty"), 1u);
  ASSERT_EQ(f.skip_examples.size(), 3u);
  EXPECT_NE(f.skip_examples[0].find("skip.jsonl:2"), std::string::npos);
  // Malformed JSON stays fatal: the rest of the file cannot be trusted.
  EXPECT_NE(error_of(write_temp("skipjson.jsonl", "{oops\n"), {.skip_invalid = true}).find("malformed JSON"),
            std::string::npos);
}
