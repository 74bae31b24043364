#include "text/word_kinds.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/error.hpp"
#include "../support/scratch_dir.hpp"
#include "text/surface.hpp"

namespace verity::text {
namespace {

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A WordNet of a few synsets: beverage > {coffee, tea}; fix/repair share one
// synset; mouse is a rodent, and "mice" its exception form.
std::filesystem::path tiny_wordnet(const std::string& name) {
  const auto dir = verity_test::fresh_dir("word_kinds", name);
  write(dir / "data.noun",
        "  1 licence header\n"
        "00000001 00 n 01 beverage 0 000 | a drink\n"
        "00000002 00 n 01 coffee 0 001 @ 00000001 n 0000 | a drink\n"
        "00000003 00 n 01 tea 0 001 @ 00000001 n 0000 | a drink\n"
        "00000004 00 n 02 fix 0 repair 0 000 | mending\n"
        "00000005 00 n 01 rodent 0 000 | an animal\n"
        "00000006 00 n 01 mouse 0 001 @ 00000005 n 0000 | a rodent\n"
        "00000007 00 n 01 rat 0 001 @i 00000005 n 0000 | a rodent\n");
  write(dir / "index.noun",
        "  1 licence header\n"
        "beverage n 1 0 1 0 00000001\n"
        "coffee n 1 1 @ 1 0 00000002\n"
        "tea n 1 1 @ 1 0 00000003\n"
        "fix n 1 0 1 0 00000004\n"
        "repair n 1 0 1 0 00000004\n"
        "rodent n 1 0 1 0 00000005\n"
        "mouse n 1 1 @ 1 0 00000006\n"
        "rat n 1 1 @ 1 0 00000007\n");
  write(dir / "noun.exc", "mice mouse\n");
  write(dir / "data.verb", "");
  write(dir / "index.verb", "");
  write(dir / "verb.exc", "");
  return dir;
}

TEST(WordKinds, TwoThingsUnderOneKindAreOfOneKind) {
  const auto kinds = WordKinds::load(tiny_wordnet("kinds").string());
  EXPECT_TRUE(kinds.same_kind("coffee", "tea"));
  EXPECT_TRUE(kinds.same_kind("tea", "coffee"));
  EXPECT_TRUE(kinds.same_kind("mice", "rats"));  // an exception form and a suffix rule's base; "@i" too
}

TEST(WordKinds, SynonymsKindsFormsAndFunctionWordsAreNot) {
  const auto kinds = WordKinds::load(tiny_wordnet("not").string());
  EXPECT_FALSE(kinds.same_kind("fix", "repair"));      // one synset
  EXPECT_FALSE(kinds.same_kind("coffee", "beverage"));  // one names the other's kind
  EXPECT_FALSE(kinds.same_kind("mouse", "rodent"));
  EXPECT_FALSE(kinds.same_kind("mouse", "mice"));       // forms of one word
  EXPECT_FALSE(kinds.same_kind("coffee", "coffee"));
  EXPECT_FALSE(kinds.same_kind("Coffee", "tea"));       // read in small letters only
  EXPECT_FALSE(kinds.same_kind("coffee", "juice"));     // unknown to WordNet
  EXPECT_FALSE(kinds.same_kind("coffee", "rat"));       // different kinds
}

// Loading `dir` throws ErrorType whose message names `where`.
template <class ErrorType>
void expect_load_error(const std::filesystem::path& dir, const std::string& where) {
  try {
    WordKinds::load(dir.string());
    ADD_FAILURE() << "loaded; expected an error naming " << where;
  } catch (const ErrorType& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
  }
}

TEST(WordKinds, AMissingOrMalformedFileIsNamed) {
  const auto dir = tiny_wordnet("bad");
  std::filesystem::remove(dir / "verb.exc");
  expect_load_error<Error>(dir, "verb.exc");
  write(dir / "verb.exc", "");
  write(dir / "index.noun", "  1 licence header\ncoffee n 2 0 2 0 00000002\n");  // two synsets, one given
  expect_load_error<FormatError>(dir, "index.noun:2");
  write(dir / "index.noun", "coffee n 1 0 1 0 00000002\n");
  write(dir / "data.noun", "00000002 00 n 01 coffee 0 002 @ 00000001 n 0000\n");  // two pointers, one given
  expect_load_error<FormatError>(dir, "data.noun:1");
}

TEST(SwappedKind, OneWordInSmallLettersSwappedForAnotherOfItsKind) {
  const auto kinds = WordKinds::load(tiny_wordnet("swap").string());
  const auto swap = swapped_kind("Is coffee bad for your heart?", "Is tea bad for your heart ?", &kinds);
  ASSERT_TRUE(swap);
  EXPECT_EQ(swap->from, "coffee");
  EXPECT_EQ(swap->to, "tea");
  EXPECT_TRUE(swapped_kind("coffee or water?", "tea or water?", &kinds));  // the first word too
  EXPECT_FALSE(swapped_kind("Is coffee bad for you?", "Is tea good for you?", &kinds));  // two words differ
  EXPECT_FALSE(swapped_kind("Is coffee bad?", "Is Tea bad?", &kinds));                    // a name's capital
  EXPECT_FALSE(swapped_kind("How do I fix it?", "How do I repair it?", &kinds));
  EXPECT_FALSE(swapped_kind("Is coffee bad?", "Is coffee bad?", &kinds));
}

TEST(ReversedWord, AWordAndItsUnOrDisForm) {
  const auto mount = reversed_word("How do I mount the drive?", "How do I unmount the drive ?");
  ASSERT_TRUE(mount);
  EXPECT_EQ(mount->word, "mount");
  EXPECT_EQ(mount->reversed, "unmount");
  EXPECT_TRUE(reversed_word("I disagree.", "I agree."));
  EXPECT_FALSE(reversed_word("It is a unit.", "It is a it."));            // a stem of two letters
  EXPECT_FALSE(reversed_word("How do I mount it?", "How do I Unmount it?"));  // a capital
  EXPECT_FALSE(reversed_word("I agree now.", "I disagree later."));        // two words differ
  EXPECT_FALSE(reversed_word("I agree.", "I redo."));
}

TEST(WordKinds, TheEnglishDatabaseKnowsEverydayKinds) {
  const WordKinds* kinds = WordKinds::english();  // Debian's wordnet-base, installed by scripts/setup.sh
  ASSERT_NE(kinds, nullptr);
  EXPECT_GT(kinds->words(), 100000u);
  EXPECT_TRUE(kinds->same_kind("coffee", "tea"));
  EXPECT_TRUE(kinds->same_kind("aspirin", "ibuprofen"));
  EXPECT_TRUE(kinds->same_kind("cats", "dogs"));
  EXPECT_FALSE(kinds->same_kind("fix", "repair"));
  EXPECT_FALSE(kinds->same_kind("movie", "film"));
  EXPECT_FALSE(kinds->same_kind("kids", "children"));
  EXPECT_FALSE(kinds->same_kind("dog", "animal"));
}

}  // namespace
}  // namespace verity::text
