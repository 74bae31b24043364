#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "core/error.hpp"
#include "verify/alignment_features.hpp"
#include "verify/alignment_verifier.hpp"
#include "verify/pair_scoring.hpp"
#include "verify/verifier.hpp"

using namespace verity;
using namespace verity::verify;
namespace fs = std::filesystem;

namespace {
std::string temp_path(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("verity_f5_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// One-hot token vectors: the map of two texts is their exact-match matrix.
std::vector<float> one_hot(const std::vector<int>& tokens, size_t dim) {
  std::vector<float> v(tokens.size() * dim, 0.0f);
  for (size_t i = 0; i < tokens.size(); ++i) v[i * dim + size_t(tokens[i])] = 1.0f;
  return v;
}

std::vector<uint32_t> ids_of(const std::vector<int>& tokens) {
  std::vector<uint32_t> out;
  for (int t : tokens) out.push_back(token_identity("tok" + std::to_string(t)));
  return out;
}

IdfTable small_idf() {
  std::vector<std::vector<uint32_t>> texts = {ids_of({0, 1, 2}), ids_of({0, 3}), ids_of({0, 1})};
  return build_idf_table(texts);
}
}  // namespace

TEST(TokenIdentity, IsFnv1a32OfThePiece) {
  EXPECT_EQ(token_identity(""), 2166136261u);
  EXPECT_EQ(token_identity("a"), 0xe40c292cu);
  EXPECT_NE(token_identity("not"), token_identity("now"));
}

TEST(IdfTable, RareTokensWeighMore) {
  auto idf = small_idf();
  EXPECT_EQ(idf.documents(), 3u);
  EXPECT_LT(idf.idf(ids_of({0})[0]), idf.idf(ids_of({1})[0]));
  EXPECT_LT(idf.idf(ids_of({1})[0]), idf.idf(ids_of({3})[0]));
  EXPECT_FLOAT_EQ(idf.idf(token_identity("never seen")), idf.idf(ids_of({3})[0]));  // unseen = seen once
  EXPECT_NEAR(idf.idf(ids_of({0})[0]), std::log(4.0 / 4.0) + 1, 1e-6);
}

TEST(AlignmentFeatures, SwapShowsInOrderFeaturesNotInMaxSim) {
  const size_t dim = 8;
  const std::vector<int> a = {1, 2, 3, 4, 5}, same = {1, 2, 3, 4, 5}, swapped = {3, 2, 1, 4, 5};
  auto idf = small_idf();
  auto features = [&](const std::vector<int>& b) {
    auto map = SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim);
    auto ia = ids_of(a), ib = ids_of(b);
    return alignment_features(map, PairContext{ia, ib, 0.9f}, idf);
  };
  auto f_same = features(same), f_swap = features(swapped);
  EXPECT_FLOAT_EQ(f_same.pair[2], f_swap.pair[2]);  // MaxSim cannot tell them apart
  EXPECT_FLOAT_EQ(f_same.pair[12], 1.0f);           // exact matches in order
  EXPECT_NEAR(f_swap.pair[12], 0.4f, 1e-6);         // 3 of 10 position pairs reversed
  EXPECT_FLOAT_EQ(f_same.pair[13], 1.0f);           // every bigram kept
  EXPECT_LT(f_swap.pair[13], 0.5f);
  EXPECT_FLOAT_EQ(f_same.pair[0], 0.9f);
  EXPECT_FLOAT_EQ(f_same.pair[1], 1.0f);
  ASSERT_EQ(f_same.forward.length, 5u);
  EXPECT_FLOAT_EQ(f_same.forward.tokens[2], 1.0f);  // token 0 has an exact match
}

TEST(AlignmentFeatures, UnknownIdsAndSizeErrors) {
  auto map = SimilarityMap(2, 3, std::vector<float>(6, 0.5f));
  auto f = alignment_features(map, PairContext{}, IdfTable());
  EXPECT_FLOAT_EQ(f.pair[6], 0.0f);  // no exact matches without identities
  EXPECT_FLOAT_EQ(f.pair[1], 0.0f);  // pooled cosine unknown
  std::vector<uint32_t> wrong = {1, 2, 3};
  EXPECT_THROW(alignment_features(map, PairContext{wrong, {}, NAN}, IdfTable()), ConfigError);
}

TEST(AlignmentVerifier, SaveLoadRoundTripAndCalibration) {
  AlignmentConfig c;
  c.hidden = 8;
  c.token_embedding = 4;
  c.buckets = 64;
  c.mlp = 8;
  auto v = AlignmentVerifier::untrained(c, small_idf(), 5);
  EXPECT_FALSE(v->default_threshold().has_value());
  v->set_calibration({2.0f, -0.5f, 0.6f});
  v->set_encoder("use-lite:0123abcd");
  v->mark_trained("test fixture");
  const size_t dim = 8;
  auto qa = one_hot({1, 2, 3}, dim), qb = one_hot({3, 2, 1, 5}, dim);
  auto ia = ids_of({1, 2, 3}), ib = ids_of({3, 2, 1, 5});
  std::vector<float> pooled_a(dim, 0.5f), pooled_b(dim, 0.25f);
  TextTokens a{qa, ia, pooled_a}, b{qb, ib, pooled_b};
  const auto before = score_texts(*v, a, std::span<const TextTokens>(&b, 1), dim);
  const auto path = temp_path("v.valn");
  v->save(path);
  EXPECT_TRUE(is_alignment_verifier_file(path));
  auto w = make_verifier("f5:" + path);
  EXPECT_EQ(w->spec(), "f5:" + path);
  EXPECT_TRUE(w->uses_context());
  EXPECT_FLOAT_EQ(*w->default_threshold(), 0.6f);
  EXPECT_EQ(w->encoder(), "use-lite:0123abcd");
  const auto after = score_texts(*w, a, std::span<const TextTokens>(&b, 1), dim);
  EXPECT_FLOAT_EQ(before[0], after[0]);
  EXPECT_GT(after[0], 0.0f);
  EXPECT_LT(after[0], 1.0f);
  // load_verifier_file tells the format apart by content.
  EXPECT_EQ(load_verifier_file(path)->spec(), "f5:" + path);
  // The context matters: without token identities the score changes.
  auto map = SimilarityMap::compute(qa, qb, dim);
  EXPECT_NE(w->score(map), after[0]);
}

TEST(AlignmentVerifier, DamagedFilesAreFormatErrors) {
  AlignmentConfig c;
  c.hidden = 4;
  c.mlp = 4;
  c.buckets = 16;
  auto v = AlignmentVerifier::untrained(c, small_idf(), 1);
  v->mark_trained("test");
  const auto path = temp_path("d.valn");
  v->save(path);
  const auto size = fs::file_size(path);
  fs::resize_file(path, size / 2);
  EXPECT_THROW(AlignmentVerifier::load(path), FormatError);
  EXPECT_THROW(make_verifier("f5"), ConfigError);
  try {
    AlignmentConfig bad;
    bad.inputs = {"map", "vibes"};
    AlignmentVerifier::untrained(bad, IdfTable(), 1);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'vibes' is unknown"), std::string::npos);
  }
}
