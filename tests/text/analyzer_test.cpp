#include "text/analyzer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/error.hpp"
#include "text/utf8.hpp"

using namespace verity;
using namespace verity::text;
using Tokens = std::vector<std::string>;

namespace {
Analyzer plain() { return Analyzer::from_spec("standard"); }
}  // namespace

TEST(Utf8, HoldsContentNeedsALetterNumberOrSymbol) {
  for (const char* yes : {"a", "  x  ", "42", "\xC3\xA9", "\xE4\xB8\xAD", "$", "+", "\xF0\x9F\x91\x8D", "? a"})
    EXPECT_TRUE(holds_content(yes)) << yes;
  for (const char* no : {"", "   ", "\t\r\n", "?!", ".", "\xE2\x80\x99", "\xC2\xA0", "\xFF\xFE", "(...)"})
    EXPECT_FALSE(holds_content(no)) << no;
}

TEST(Utf8, FirstInvalid) {
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("caf\xC3\xA9 \xE2\x80\x99 \xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("ab\xC3"), 2u);                 // truncated sequence
  EXPECT_EQ(first_invalid_utf8("a\x80z"), 1u);                 // stray continuation
  EXPECT_EQ(first_invalid_utf8("xy\xC0\xAF"), 2u);             // overlong '/'
  EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0u);           // UTF-16 surrogate
  EXPECT_EQ(first_invalid_utf8("ok\xF4\x90\x80\x80"), 2u);     // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("\xC3\xA9\xFF"), 2u);
}

TEST(Analyzer, InvalidUtf8IsFormatErrorWithOffset) {
  try {
    Analyzer().analyze("caf\xC3\xA9 \xC3");
    FAIL() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("byte 6"), std::string::npos) << e.what();
  }
}

TEST(Analyzer, CaseFoldingAndNfkc) {
  EXPECT_EQ(plain().analyze("Hello WORLD"), (Tokens{"hello", "world"}));
  // NFKC: the "fi" ligature and full-width letters become plain ASCII; ß folds to ss.
  EXPECT_EQ(plain().analyze("\xEF\xAC\x81nd \xEF\xBC\xA1\xEF\xBC\xA2 Stra\xC3\x9F" "e"),
            (Tokens{"find", "ab", "strasse"}));
  EXPECT_EQ(Analyzer::from_spec("standard:fold=0").analyze("Hello WORLD"),
            (Tokens{"Hello", "WORLD"}));
  // Without NFKC, compatibility forms survive (the circled digit; the ligature
  // too unless case folding, which expands it, is on).
  EXPECT_EQ(plain().analyze("\xE2\x91\xA0"), (Tokens{"1"}));
  EXPECT_EQ(Analyzer::from_spec("standard:nfkc=0").analyze("\xE2\x91\xA0"),
            (Tokens{"\xE2\x91\xA0"}));
  EXPECT_EQ(Analyzer::from_spec("standard:nfkc=0,fold=0").analyze("\xEF\xAC\x81nd"),
            (Tokens{"\xEF\xAC\x81nd"}));
  // Composed and decomposed é end up as the same token.
  EXPECT_EQ(plain().analyze("Caf\xC3\xA9"), plain().analyze("Cafe\xCC\x81"));
}

TEST(Analyzer, Accents) {
  EXPECT_EQ(plain().analyze("Caf\xC3\xA9 na\xC3\xAFve"), (Tokens{"caf\xC3\xA9", "na\xC3\xAFve"}));
  EXPECT_EQ(Analyzer::from_spec("standard:accents=strip").analyze("Caf\xC3\xA9 na\xC3\xAFve"),
            (Tokens{"cafe", "naive"}));
}

TEST(Analyzer, WordSplitting) {
  EXPECT_EQ(plain().analyze("IL-6 levels (p<0.05) rose 3.5-fold; 1,000 mice"),
            (Tokens{"il", "6", "levels", "p", "0.05", "rose", "3.5", "fold", "1,000", "mice"}));
  EXPECT_EQ(plain().analyze("  ...  "), Tokens{});
  EXPECT_EQ(plain().analyze(""), Tokens{});
  // Han ideographs are single-character tokens.
  EXPECT_EQ(plain().analyze("\xE4\xB8\xAD\xE6\x96\x87 abc"), (Tokens{"\xE4\xB8\xAD", "\xE6\x96\x87", "abc"}));
  // Combining marks stay inside the word (Devanagari "hindi").
  EXPECT_EQ(plain().analyze("\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\x82\xE0\xA4\xA6\xE0\xA5\x80"),
            (Tokens{"\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\x82\xE0\xA4\xA6\xE0\xA5\x80"}));
}

TEST(Analyzer, Possessives) {
  EXPECT_EQ(plain().analyze("John's dog's bone"), (Tokens{"john", "dog", "bone"}));
  EXPECT_EQ(plain().analyze("JOHN\xE2\x80\x99S car"), (Tokens{"john", "car"}));  // curly apostrophe
  EXPECT_EQ(plain().analyze("the dogs' bones"), (Tokens{"the", "dogs", "bones"}));
  // Other in-word apostrophes join the word.
  EXPECT_EQ(plain().analyze("don't O'Neill's"), (Tokens{"dont", "oneill"}));
  EXPECT_EQ(Analyzer::from_spec("standard:possessive=0").analyze("John's"), (Tokens{"johns"}));
}

TEST(Analyzer, Stopwords) {
  const auto& words = english_stopwords();
  EXPECT_EQ(words.size(), 33u);
  auto a = Analyzer::from_spec("english:stem=none");
  EXPECT_EQ(a.analyze("The cat is on the mat and it was not there"), (Tokens{"cat", "mat"}));
  for (auto w : words) EXPECT_TRUE(a.analyze(w).empty()) << w;
  // Words outside the Lucene set survive.
  EXPECT_EQ(a.analyze("he she we"), (Tokens{"he", "she", "we"}));
  EXPECT_EQ(Analyzer::from_spec("english:stem=none,stop=none").analyze("the cat"),
            (Tokens{"the", "cat"}));
}

TEST(Analyzer, Stemming) {
  Analyzer porter;  // default: english analyzer with porter
  EXPECT_EQ(porter.analyze("Running runners generously connected connections"),
            (Tokens{"run", "runner", "gener", "connect", "connect"}));
  EXPECT_EQ(porter.analyze("caresses ponies relational"), (Tokens{"caress", "poni", "relat"}));
  auto porter2 = Analyzer::from_spec("english:stem=english");
  // Porter2 differs from Porter on these.
  EXPECT_EQ(porter2.analyze("generously ponies"), (Tokens{"generous", "poni"}));
  EXPECT_EQ(Analyzer::from_spec("english:stem=none").analyze("Running"), (Tokens{"running"}));
  // One- and two-letter words are left alone (Snowball porter alone maps "s" to "").
  EXPECT_EQ(porter.analyze("s us as ss"), (Tokens{"s", "us", "ss"}));
  EXPECT_EQ(porter2.analyze("s us"), (Tokens{"s", "us"}));
}

TEST(Analyzer, MinLength) {
  auto a = Analyzer::from_spec("standard:min=3");
  EXPECT_EQ(a.analyze("a bb ccc \xC3\xA9\xC3\xA9 dddd"), (Tokens{"ccc", "dddd"}));
  EXPECT_THROW(Analyzer::from_spec("standard:min=0"), ConfigError);
  EXPECT_THROW(Analyzer::from_spec("standard:min=x"), ConfigError);
}

TEST(Analyzer, SpecRoundTrip) {
  for (std::string s : {"english", "standard", "english:stem=english,stop=none",
                        "english:fold=0,nfkc=0,accents=strip,possessive=0,min=2",
                        "standard:stem=porter"}) {
    auto a = Analyzer::from_spec(s);
    auto b = Analyzer::from_spec(a.spec());
    EXPECT_EQ(a.options(), b.options()) << s;
    EXPECT_EQ(a.spec(), b.spec());
  }
  EXPECT_EQ(Analyzer().spec(),
            "english:stem=porter,stop=english,fold=1,nfkc=1,accents=keep,possessive=1,min=1");
  EXPECT_EQ(Analyzer::from_spec("english:stem=porter,stop=english,fold=1").options(),
            AnalyzerOptions{});
}

TEST(Analyzer, SpecErrorsListValidChoices) {
  auto message = [](std::string_view spec) {
    try {
      Analyzer::from_spec(spec);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("english:stemmer=porter").find("valid keys: stem, stop"), std::string::npos);
  EXPECT_NE(message("klingon").find("valid: english, standard"), std::string::npos);
  EXPECT_NE(message("english:stem=lovins").find("porter, english, none"), std::string::npos);
  EXPECT_NE(message("english:fold=yes").find("'fold'"), std::string::npos);
  EXPECT_NE(message("english:stem=none,stem=porter").find("twice"), std::string::npos);
  EXPECT_NE(message("english:porter").find("key=value"), std::string::npos);
}

TEST(Analyzer, ThreadSafe) {
  Analyzer a;
  const std::string text = "Generously connected runners' relational databases aren't O'Neill's";
  const auto expected = a.analyze(text);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i)
        if (a.analyze(text) != expected) ++mismatches;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}
