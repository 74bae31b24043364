#include "text/case_folds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "text/sentencepiece.hpp"
#include "text/wordpiece.hpp"

namespace verity::text {
namespace {

TEST(CaseFolds, PieceIdentityIsFnv1a32) {
  EXPECT_EQ(piece_identity(""), 2166136261u);
  EXPECT_EQ(piece_identity("a"), 0xe40c292cu);
}

TEST(CaseFolds, LowerCasesLettersOnly) {
  EXPECT_EQ(lower_case_piece("\u2581Open"), "\u2581open");
  EXPECT_EQ(lower_case_piece("\u2581open"), "\u2581open");
  EXPECT_EQ(lower_case_piece("USA"), "usa");
  EXPECT_EQ(lower_case_piece("##Ed"), "##ed");
  EXPECT_EQ(lower_case_piece("\u2581\u00C9cole"), "\u2581\u00E9cole");  // École
  EXPECT_EQ(lower_case_piece("\u2581\u0394"), "\u2581\u03B4");           // Greek capital delta
  EXPECT_EQ(lower_case_piece("12.5"), "12.5");
  EXPECT_EQ(lower_case_piece(""), "");
  EXPECT_EQ(lower_case_piece(std::string("A\xff" "B", 3)), std::string("a\xff" "b", 3));  // a bad byte stays
}

TEST(CaseFolds, EntriesRebuildTheSameFolds) {
  const CaseFolds folds(std::vector<std::string>{"\u2581Open", "\u2581USA", "\u2581the", "Take"});
  const auto entries = folds.entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_TRUE(std::is_sorted(entries.begin(), entries.end()));
  const auto copy = CaseFolds::from_entries(entries);
  EXPECT_EQ(copy.entries(), entries);
  const std::vector<uint32_t> ids = {piece_identity("\u2581Open"), piece_identity("\u2581the"),
                                     piece_identity("Take"), piece_identity("\u2581Port")};
  const std::vector<uint32_t> folded = {piece_identity("\u2581open"), piece_identity("\u2581the"),
                                        piece_identity("take"), piece_identity("\u2581Port")};
  EXPECT_EQ(folds.fold_all(ids), folded);
  EXPECT_EQ(copy.fold_all(ids), folded);
  EXPECT_EQ(CaseFolds().fold_all(ids), ids);
  // A file's pairs that could not come from a vocabulary.
  const std::vector<std::pair<uint32_t, uint32_t>> twice = {{1, 2}, {1, 3}}, itself = {{4, 4}};
  EXPECT_THROW(CaseFolds::from_entries(twice), ConfigError);
  EXPECT_THROW(CaseFolds::from_entries(itself), ConfigError);
}

TEST(CaseFolds, FoldsTheIdentitiesOfCapitalizedPieces) {
  const CaseFolds folds(std::vector<std::string>{"\u2581Open", "\u2581open", "\u2581USA", "\u2581the", "Take"});
  EXPECT_EQ(folds.size(), 3u);  // "\u2581open" and "\u2581the" are lower-case already
  EXPECT_EQ(folds.fold(piece_identity("\u2581Open")), piece_identity("\u2581open"));
  EXPECT_EQ(folds.fold(piece_identity("\u2581open")), piece_identity("\u2581open"));
  // Its lower case need not be a piece.
  EXPECT_EQ(folds.fold(piece_identity("\u2581USA")), piece_identity("\u2581usa"));
  EXPECT_EQ(folds.fold(piece_identity("Take")), piece_identity("take"));
  EXPECT_EQ(folds.fold(piece_identity("\u2581Port")), piece_identity("\u2581Port"));  // never seen: itself
  EXPECT_EQ(CaseFolds().fold(piece_identity("\u2581Open")), piece_identity("\u2581Open"));
  EXPECT_TRUE(CaseFolds().empty());
  // Adding pieces keeps what it held.
  const auto more = folds.with(std::vector<std::string>{"\u2581Port", "\u2581Open"});
  EXPECT_EQ(more.size(), 4u);
  EXPECT_EQ(more.fold(piece_identity("\u2581Port")), piece_identity("\u2581port"));
  EXPECT_EQ(more.fold(piece_identity("\u2581Open")), piece_identity("\u2581open"));
  EXPECT_EQ(folds.size(), 3u);
  // Many pieces: the table grows.
  std::vector<std::string> many;
  for (int k = 0; k < 1000; ++k) many.push_back("\u2581W" + std::to_string(k));
  const CaseFolds big(many);
  EXPECT_EQ(big.size(), 1000u);
  for (int k = 0; k < 1000; k += 97)
    EXPECT_EQ(big.fold(piece_identity("\u2581W" + std::to_string(k))), piece_identity("\u2581w" + std::to_string(k)));
}

// Every tokenizer made registers its vocabulary's folds; a snapshot taken
// before stays as it was.
TEST(CaseFolds, TokenizersRegisterTheirVocabularies) {
  const auto before = registered_case_folds();
  ASSERT_NE(before, nullptr);
  const SentencePieceTokenizer sp(
      {{"\xEF\xBF\xBD", 0}, {"<s>", 0}, {"\u2581Zebracase", -1}, {"\u2581zebracase", -1}}, 2);
  const auto after_sp = registered_case_folds();
  EXPECT_EQ(after_sp->fold(piece_identity("\u2581Zebracase")), piece_identity("\u2581zebracase"));
  EXPECT_EQ(before->fold(piece_identity("\u2581Zebracase")), piece_identity("\u2581Zebracase"));
  const WordPieceTokenizer wp({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Quokkacase", "##Ish"});
  const auto after_wp = registered_case_folds();
  EXPECT_EQ(after_wp->fold(piece_identity("Quokkacase")), piece_identity("quokkacase"));
  EXPECT_EQ(after_wp->fold(piece_identity("##Ish")), piece_identity("##ish"));
  EXPECT_EQ(after_wp->fold(piece_identity("\u2581Zebracase")), piece_identity("\u2581zebracase"));
  register_vocabulary(std::vector<std::string>{"\u2581Zebracase"});  // again: nothing new
  EXPECT_EQ(registered_case_folds(), after_wp);
}

}  // namespace
}  // namespace verity::text
