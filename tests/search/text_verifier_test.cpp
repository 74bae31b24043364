// TextVerifier: index-free stage 2 over a deterministic word-hash encoder, so
// no model is needed. Checks scores, verdict thresholds and the context
// (token identities, pooled cosine) that reaches verifiers reading it.
#include "search/text_verifier.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "encode/encoder.hpp"
#include "verify/pair_scoring.hpp"
#include "verify/verifier.hpp"

using namespace verity;

namespace {
constexpr size_t kDim = 8;

// One token per whitespace-separated word; a word's vector comes from its
// hash, so equal words have equal vectors. Right-padded like real encoders.
class WordHashEncoder final : public encode::Encoder {
 public:
  std::string spec() const override { return "word-hash"; }
  size_t dim() const override { return kDim; }
  encode::Encoded encode(std::span<const std::string> texts, const encode::EncodeOptions&) const override {
    std::vector<std::vector<std::string>> words(texts.size());
    size_t T = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      std::istringstream in(texts[i]);
      for (std::string w; in >> w;) words[i].push_back(w);
      T = std::max(T, words[i].size());
    }
    encode::Encoded e;
    e.batch = texts.size(), e.max_tokens = T, e.dim = kDim;
    e.pooled.assign(e.batch * kDim, 0.f);
    e.tokens.assign(e.batch * T * kDim, 0.f);
    e.mask.assign(e.batch * T, 0);
    e.token_strings = words;
    for (size_t i = 0; i < texts.size(); ++i)
      for (size_t t = 0; t < words[i].size(); ++t) {
        e.mask[i * T + t] = 1;
        const uint32_t h = verify::token_identity(words[i][t]);
        for (size_t d = 0; d < kDim; ++d) {
          const float v = float((h >> (d * 4)) & 15u) - 7.5f;
          e.tokens[(i * T + t) * kDim + d] = v;
          e.pooled[i * kDim + d] += v;
        }
      }
    return e;
  }
};

// Scores a pair by its pooled cosine and records what it was given.
class ContextVerifier final : public verify::Verifier {
 public:
  mutable std::vector<size_t> query_ids, candidate_ids;
  float score(const verify::SimilarityMap&) const override { return 0; }
  std::vector<float> score_pairs(std::span<const verify::SimilarityMap> maps,
                                 std::span<const verify::PairContext> context) const override {
    std::vector<float> out;
    for (size_t i = 0; i < maps.size(); ++i) {
      query_ids.push_back(context[i].query_ids.size());
      candidate_ids.push_back(context[i].candidate_ids.size());
      out.push_back(context[i].pooled_cosine);
    }
    return out;
  }
  bool uses_context() const override { return true; }
  std::string spec() const override { return "context-test"; }
  bool is_trained() const override { return true; }
};

std::shared_ptr<const encode::Encoder> encoder() { return std::make_shared<WordHashEncoder>(); }
}  // namespace

TEST(TextVerifier, ScoresEachCandidateAsTheMapKernelDoes) {
  std::shared_ptr<const verify::Verifier> f1 = verify::make_verifier("f1");
  search::TextVerifier tv(encoder(), f1, std::nullopt);
  std::vector<std::string> cands{"the cat sat", "dogs run fast", "cat"};
  auto v = tv.verify("the cat sat", cands);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NEAR(v[0].score, 1.0, 1e-2);  // every query token has an exact match
  EXPECT_LT(v[1].score, v[0].score);
  for (const auto& x : v) EXPECT_EQ(x.verdict, "");  // no threshold, no verdicts
  EXPECT_TRUE(tv.verify("the cat sat", {}).empty());
  EXPECT_FALSE(tv.threshold());
}

TEST(TextVerifier, VerdictsAtTheThreshold) {
  search::TextVerifier tv(encoder(), verify::make_verifier("f1"), 0.99);
  std::vector<std::string> cands{"the cat sat", "dogs run fast"};
  auto v = tv.verify("the cat sat", cands);
  EXPECT_EQ(v[0].verdict, "match");
  EXPECT_EQ(v[1].verdict, "near-miss");
  EXPECT_NE(tv.describe().find("threshold=0.99"), std::string::npos);
}

TEST(TextVerifier, TextWithoutAWordMatchesNothing) {
  search::TextVerifier tv(encoder(), verify::make_verifier("f1"), 0.5);
  // "? !" is two tokens here, equal to the query's own: only the rule keeps it from matching.
  std::vector<std::string> cands{"? !", "the cat sat", "   "};
  auto v = tv.verify("the cat sat ? !", cands);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].score, 0.0);
  EXPECT_EQ(v[0].verdict, "near-miss");
  EXPECT_GT(v[1].score, 0.5);
  EXPECT_EQ(v[2].score, 0.0);
  for (const std::string query : {"", "   ", "?!", "\t.\n"})
    EXPECT_THROW(tv.verify(query, cands), ConfigError) << "'" << query << "'";
  EXPECT_NO_THROW(tv.verify("42", cands));
  EXPECT_NO_THROW(tv.verify("\xF0\x9F\x91\x8D", cands));  // an emoji is a symbol
}

TEST(TextVerifier, PassesTokenIdentitiesAndPooledCosine) {
  auto verifier = std::make_shared<ContextVerifier>();
  search::TextVerifier tv(encoder(), verifier, std::nullopt);
  std::vector<std::string> cands{"the cat sat", "a b c d e", "", "the cat sat down"};
  auto v = tv.verify("the cat sat", cands);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_NEAR(v[0].score, 1.0, 1e-6);        // identical text: pooled cosine 1
  EXPECT_EQ(v[2].score, 0.0);                // no tokens: not scored
  EXPECT_EQ(verifier->query_ids, (std::vector<size_t>{3, 3, 3}));
  EXPECT_EQ(verifier->candidate_ids, (std::vector<size_t>{3, 5, 4}));
}

TEST(TextVerifier, ThresholdIsTheCallersElseTheCalibratedOne) {
  class Calibrated final : public verify::Verifier {
   public:
    float score(const verify::SimilarityMap&) const override { return 0; }
    std::optional<float> default_threshold() const override { return 0.25f; }
    std::string spec() const override { return "calibrated-test"; }
    bool is_trained() const override { return true; }
  };
  Calibrated calibrated;
  EXPECT_EQ(search::verdict_threshold(0.7, calibrated), 0.7);
  EXPECT_EQ(search::verdict_threshold(std::nullopt, calibrated), 0.25);
  EXPECT_EQ(search::verdict_threshold(std::nullopt, *verify::make_verifier("f1")), std::nullopt);
}

TEST(TextVerifier, RefusesNoVerifier) {
  search::TextVerifierOptions o;
  o.verifier = "none";
  EXPECT_THROW(search::TextVerifier{o}, ConfigError);
}
