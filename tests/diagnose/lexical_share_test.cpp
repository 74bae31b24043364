#include <gtest/gtest.h>

#include "diagnose/lexical.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace verity::diagnose {
namespace {

const std::vector<std::string> kDocs = {"Cats chase the small mice.", "Dogs chase cats in gardens.",
                                        "Mice eat grain stored in barns.", "Gardens grow grain."};

TEST(LexicalShare, ThreadedIdfPassEqualsSerialAndKnownTextsScoreAlike) {
  text::Analyzer analyzer;
  std::vector<std::vector<std::string>> terms;
  auto serial = IdfTable::build(kDocs, analyzer);
  auto threaded = IdfTable::build(kDocs, analyzer, 2, &terms);
  ASSERT_EQ(terms.size(), kDocs.size());
  for (const char* t : {"cat", "chase", "mice", "grain", "garden", "absent"})
    EXPECT_EQ(serial.df(t), threaded.df(t)) << t;
  EXPECT_TRUE(std::is_sorted(terms[1].begin(), terms[1].end()));

  LexicalScorer fresh(serial, analyzer), shared(threaded, analyzer);
  shared.add_known_texts(kDocs, terms);
  std::vector<const std::string*> texts;
  for (const auto& d : kDocs) texts.push_back(&d);
  shared.prepare(texts, 2);
  for (const auto& doc : kDocs) {
    auto a = fresh.score("cats chase mice in barns", doc);
    auto b = shared.score("cats chase mice in barns", doc);
    EXPECT_DOUBLE_EQ(a.residuality, b.residuality) << doc;
    EXPECT_DOUBLE_EQ(a.noncoverage, b.noncoverage) << doc;
  }
}

TEST(LexicalShare, KnownTextsNeedOneTermListEach) {
  text::Analyzer analyzer;
  auto idf = IdfTable::build(kDocs, analyzer);
  LexicalScorer s(idf, analyzer);
  EXPECT_THROW(s.add_known_texts(kDocs, {{"x"}}), ConfigError);
}

}  // namespace
}  // namespace verity::diagnose
