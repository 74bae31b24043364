#include "diagnose/lexical.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"

namespace verity::diagnose {
namespace {

// N = 4 documents; df: cat 1, dog 2, fish 4 (the english analyzer keeps these words as they are).
IdfTable hand_table() { return IdfTable(4, {{"cat", 1}, {"dog", 2}, {"fish", 4}}); }

TEST(IdfTable, Formula) {
  auto t = hand_table();
  EXPECT_NEAR(t.idf("cat"), std::log(1 + 3.5 / 1.5), 1e-12);
  EXPECT_NEAR(t.idf("dog"), std::log(2.0), 1e-12);
  EXPECT_NEAR(t.idf("fish"), std::log(1 + 0.5 / 4.5), 1e-12);
  EXPECT_NEAR(t.idf("unseen"), std::log(1 + 4.5 / 0.5), 1e-12);  // df = 0
}

TEST(IdfTable, BuildCountsEachDocumentOnce) {
  std::vector<std::string> docs = {"cats and cats", "the dog", "a dog and a cat"};
  auto t = IdfTable::build(docs, text::Analyzer());
  EXPECT_EQ(t.num_docs(), 3u);
  EXPECT_EQ(t.df("cat"), 2u);  // "cats" stems to "cat"; counted once in doc 1
  EXPECT_EQ(t.df("dog"), 2u);
  EXPECT_EQ(t.df("the"), 0u);  // stopword
}

TEST(IdfTable, RejectsDfAboveN) { EXPECT_THROW(IdfTable(1, {{"x", 2}}), ConfigError); }

TEST(Lexical, HandComputedResiduality) {
  auto t = hand_table();
  LexicalScorer s(t, text::Analyzer());
  double cat = std::log(1 + 3.5 / 1.5), dog = std::log(2.0), fish = std::log(1 + 0.5 / 4.5);
  auto r = s.score("cat dog fish", "a dog");
  EXPECT_NEAR(r.residuality, (cat + fish) / (cat + dog + fish), 1e-12);  // 0.65386
  EXPECT_NEAR(r.residuality, 0.653856, 1e-6);
  EXPECT_NEAR(r.noncoverage, 2.0 / 3.0, 1e-12);
  EXPECT_FALSE(r.empty_query);
  // Repeated query tokens count once (T is a set).
  auto rep = s.score("cat cat cat dog fish", "a dog");
  EXPECT_DOUBLE_EQ(rep.residuality, r.residuality);
}

TEST(Lexical, AllCoveredIsZeroNoneCoveredIsOne) {
  auto t = hand_table();
  LexicalScorer s(t, text::Analyzer());
  auto all = s.score("cat dog", "the dog chased a cat and fish");
  EXPECT_EQ(all.residuality, 0.0);
  EXPECT_EQ(all.noncoverage, 0.0);
  auto none = s.score("cat dog", "fish swim");
  EXPECT_EQ(none.residuality, 1.0);
  EXPECT_EQ(none.noncoverage, 1.0);
}

TEST(Lexical, StopwordsOnlyQueryIsZeroAndFlagged) {
  auto t = hand_table();
  LexicalScorer s(t, text::Analyzer());
  auto r = s.score("the and of", "a dog");
  EXPECT_TRUE(r.empty_query);
  EXPECT_EQ(r.residuality, 0.0);
  EXPECT_EQ(r.noncoverage, 0.0);
  EXPECT_FALSE(std::isnan(r.residuality));
}

TEST(Lexical, StemmingMatchesLikeBm25) {
  auto t = hand_table();
  LexicalScorer s(t, text::Analyzer());
  EXPECT_EQ(s.score("dogs", "a dog").residuality, 0.0);  // porter: dogs -> dog
}

TEST(Lexical, InvalidUtf8IsAFormatError) {
  auto t = hand_table();
  LexicalScorer s(t, text::Analyzer());
  EXPECT_THROW(s.score("cat \xff", "dog"), FormatError);
}

}  // namespace
}  // namespace verity::diagnose
