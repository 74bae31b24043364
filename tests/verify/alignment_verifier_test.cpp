#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <list>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/section_file.hpp"
#include "text/case_folds.hpp"
#include "text/sentencepiece.hpp"
#include "text/surface.hpp"
#include "verify/alignment_features.hpp"
#include "verify/alignment_verifier.hpp"
#include "verify/detail/alignment_modules.hpp"
#include "verify/pair_scoring.hpp"
#include "verify/simple_verifiers.hpp"
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

// A tiny F5 without token embeddings, for the calibration tests.
std::unique_ptr<AlignmentVerifier> tiny_verifier(uint64_t seed) {
  AlignmentConfig c;
  c.hidden = 8;
  c.mlp = 8;
  c.token_embedding = 0;
  return AlignmentVerifier::untrained(c, small_idf(), seed);
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
    return alignment_features(map, PairContext{ia, ib, 0.9f}, idf, Lexicon());
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
  auto f = alignment_features(map, PairContext{}, IdfTable(), Lexicon());
  EXPECT_FLOAT_EQ(f.pair[6], 0.0f);  // no exact matches without identities
  EXPECT_FLOAT_EQ(f.pair[1], 0.0f);  // pooled cosine unknown
  std::vector<uint32_t> wrong = {1, 2, 3};
  EXPECT_THROW(alignment_features(map, PairContext{wrong, {}, NAN}, IdfTable(), Lexicon()), ConfigError);
}

using Words = std::vector<std::pair<std::string, std::string>>;

// Pieces as a SentencePiece tokenizer writes them.
std::vector<uint32_t> piece_ids(const std::vector<std::string>& pieces) {
  std::vector<uint32_t> out;
  for (const auto& p : pieces) out.push_back(token_identity(p));
  return out;
}

TEST(Lexicon, AntonymsThroughPieceFormsAndInflections) {
  Lexicon lex(Words{{"closed", "open"}, {"decrease", "increase"}});
  EXPECT_TRUE(lex.antonyms(token_identity("\u2581open"), token_identity("\u2581closed")));
  EXPECT_TRUE(lex.antonyms(token_identity("Open"), token_identity("\u2581closed")));
  EXPECT_TRUE(lex.antonyms(token_identity("\u2581increased"), token_identity("\u2581decreased")));
  EXPECT_TRUE(lex.antonyms(token_identity("increasing"), token_identity("decreasing")));
  EXPECT_FALSE(lex.antonyms(token_identity("\u2581increased"), token_identity("\u2581decrease")));
  EXPECT_FALSE(lex.antonyms(token_identity("\u2581open"), token_identity("\u2581open")));
  EXPECT_FALSE(lex.antonyms(token_identity("\u2581open"), token_identity("\u2581shut")));
  EXPECT_TRUE(lex.has_antonyms(token_identity("\u2581open")));
  EXPECT_FALSE(lex.has_antonyms(token_identity("\u2581port")));
  // Each word's antonyms, ascending, as the features read them.
  const uint32_t open = lex.word_of(token_identity("\u2581open")), closed = lex.word_of(token_identity("closed"));
  EXPECT_EQ(std::vector<uint32_t>(lex.antonyms_of(open).begin(), lex.antonyms_of(open).end()),
            std::vector<uint32_t>{closed});
  EXPECT_EQ(lex.antonyms_of(lex.word_of(token_identity("increasing"))).size(), 1u);
  EXPECT_TRUE(lex.antonyms_of(Lexicon::kNoWord).empty());
  EXPECT_TRUE(Lexicon().antonyms_of(0).empty());
  EXPECT_TRUE(Lexicon::is_digits(token_identity("\u25816")));
  EXPECT_TRUE(Lexicon::is_digits(token_identity("379")));
  EXPECT_TRUE(Lexicon::is_digits(token_identity("##07")));
  EXPECT_FALSE(Lexicon::is_digits(token_identity("\u2581six")));
  EXPECT_FALSE(Lexicon::is_digits(token_identity("12345")));
}

TEST(AlignmentFeatures, AntonymsAndChangedNumbersAreSeen) {
  // "Is port 6379 open" against "Is port 6380 closed": the map (one-hot here)
  // says nothing about open/closed; the lexicon features do.
  const size_t dim = 8;
  const std::vector<int> a = {0, 1, 2, 3, 4, 5}, b = {0, 1, 2, 3, 6, 7};
  auto ia = piece_ids({"\u2581Is", "\u2581port", "\u25816", "3", "79", "\u2581open"});
  auto ib = piece_ids({"\u2581Is", "\u2581port", "\u25816", "3", "80", "\u2581closed"});
  auto map = SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim);
  Lexicon lex(Words{{"closed", "open"}});
  auto f = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), lex);
  auto token = [&](const DirectionFeatures& d, size_t i, size_t k) { return d.tokens[i * kTokenFeatures + k]; };
  EXPECT_FLOAT_EQ(token(f.forward, 4, 13), 1.0f);  // "79" has no match
  EXPECT_FLOAT_EQ(token(f.forward, 2, 13), 0.0f);  // "6" is matched
  EXPECT_FLOAT_EQ(token(f.forward, 5, 14), 1.0f);  // "open" faces "closed"
  EXPECT_FLOAT_EQ(token(f.backward, 5, 14), 1.0f);
  EXPECT_FLOAT_EQ(token(f.forward, 1, 14), 0.0f);
  EXPECT_FLOAT_EQ(f.pair[17], 0.5f);  // one unmatched digit piece
  EXPECT_FLOAT_EQ(f.pair[18], 0.5f);  // one antonym pair
  auto plain = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), Lexicon());
  EXPECT_FLOAT_EQ(plain.pair[18], 0.0f);
  EXPECT_FLOAT_EQ(plain.pair[17], 0.5f);  // digits need no word list
}

// The identity signal a gate band reads: an unmatched number, a polarity flip
// or the same tokens reordered; a rewording (tokens not all matched) has none.
TEST(AlignmentFeatures, IdentitySignalIsNumbersPolarityOrReordering) {
  const size_t dim = 8;
  auto features = [&](const std::vector<int>& a, const std::vector<int>& b, const std::vector<std::string>& pa,
                      const std::vector<std::string>& pb, const Lexicon& lex) {
    auto map = SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim);
    auto ia = piece_ids(pa), ib = piece_ids(pb);
    return alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), lex);
  };
  const Lexicon lex(Words{{"closed", "open"}});
  const std::vector<std::string> is_open = {"\u2581Is", "\u2581it", "\u2581open"};
  EXPECT_TRUE(identity_signal(features({0, 1, 2}, {0, 1, 3}, is_open, {"\u2581Is", "\u2581it", "\u2581closed"}, lex)));
  EXPECT_TRUE(identity_signal(features({0, 1, 2}, {0, 1, 3}, is_open, {"\u2581Is", "\u2581it", "\u25817"}, lex)));
  EXPECT_TRUE(identity_signal(features({0, 1, 2}, {1, 0, 2}, is_open, {"\u2581it", "\u2581Is", "\u2581open"}, lex)));
  EXPECT_FALSE(identity_signal(features({0, 1, 2}, {0, 1, 2}, is_open, is_open, lex)));
  EXPECT_FALSE(identity_signal(features({0, 1, 2}, {0, 4, 2}, is_open, {"\u2581Is", "\u2581this", "\u2581open"}, lex)));
  // Three of four tokens matched, in another order: a swap with a word changed.
  const std::vector<std::string> four = {"\u2581Is", "\u2581it", "\u2581open", "\u2581now"};
  EXPECT_TRUE(identity_signal(features({0, 1, 2, 3}, {2, 1, 0, 5}, four, {"\u2581open", "\u2581it", "\u2581Is", "\u2581today"}, lex)));
  // Two of four matched in another order: a rewording, no signal.
  EXPECT_FALSE(identity_signal(features({0, 1, 2, 3}, {1, 0, 5, 6}, four, {"\u2581it", "\u2581Is", "\u2581a", "\u2581b"}, lex)));
  EXPECT_TRUE(identity_signal(AlignmentFeatures{}));  // no features: keep the gate
}

// A minimal flip: the texts differ by an opposite or a negator (not both: they
// cancel) and nothing else but stop words. An opposite both texts hold ("advantages and
// disadvantages"), or one beside other changes, is not one.
TEST(AlignmentFeatures, MinimalFlipIsAnOppositeWithNothingElseChanged) {
  const Lexicon lex(Words{{"closed", "open"}, {"decrease", "increase"}, {"advantages", "disadvantages"}},
                    LexiconWords{{}, {"not"}});
  // "the" in every text: a stop word by idf; the other words once each.
  std::vector<std::vector<uint32_t>> texts;
  for (const char* w : {"\u2581store", "\u2581volume", "\u2581now", "\u2581today", "\u2581it", "\u2581is"})
    texts.push_back(piece_ids({"\u2581the", w}));
  for (int k = 0; texts.size() < 20; ++k) texts.push_back(piece_ids({"\u2581the", "\u2581filler" + std::to_string(k)}));
  const auto idf = build_idf_table(texts);
  auto flip = [&](const std::vector<std::string>& pa, const std::vector<std::string>& pb, float common) {
    std::vector<int> a, b;  // one-hot maps: a piece is similar only to itself
    std::map<std::string, int> index;
    for (const auto& p : pa) a.push_back(index.emplace(p, int(index.size())).first->second);
    for (const auto& p : pb) b.push_back(index.emplace(p, int(index.size())).first->second);
    const size_t dim = index.size();
    auto map = SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim);
    auto ia = piece_ids(pa), ib = piece_ids(pb);
    return minimal_flip(alignment_features(map, PairContext{ia, ib, 0.9f}, idf, lex), common);
  };
  const float stop = kMinimalFlipCommonIdf;
  EXPECT_TRUE(flip({"\u2581increase", "\u2581volume"}, {"\u2581decrease", "\u2581volume"}, stop));
  EXPECT_TRUE(flip({"\u2581is", "\u2581it", "\u2581open"}, {"\u2581is", "\u2581it", "\u2581closed"}, stop));
  EXPECT_TRUE(flip({"\u2581is", "\u2581it", "\u2581open"}, {"\u2581is", "\u2581it", "\u2581not", "\u2581open"}, stop));
  // The same words in another order around the opposite: a converse, the same relation.
  EXPECT_FALSE(flip({"\u2581it", "\u2581is", "\u2581open"}, {"\u2581is", "\u2581it", "\u2581closed"}, 1.0f));
  // A negator and an opposite cancel: "is it not open" means "is it closed".
  EXPECT_FALSE(flip({"\u2581is", "\u2581it", "\u2581not", "\u2581open"}, {"\u2581is", "\u2581it", "\u2581closed"}, stop));
  // Another word changed too: the network decides.
  EXPECT_FALSE(flip({"\u2581is", "\u2581it", "\u2581open", "\u2581now"},
                    {"\u2581is", "\u2581it", "\u2581closed", "\u2581today"}, stop));
  EXPECT_FALSE(flip({"\u2581is", "\u2581it", "\u2581open"}, {"\u2581is", "\u2581it", "\u2581open"}, stop));
  // Both texts hold both opposites: nothing is flipped.
  EXPECT_FALSE(flip({"\u2581advantages", "\u2581and", "\u2581disadvantages"},
                    {"\u2581disadvantages", "\u2581and", "\u2581advantages", "\u2581now"}, 1.0f));
  // A stop word more is no change; with no stop words allowed, it is.
  EXPECT_TRUE(flip({"\u2581the", "\u2581store", "\u2581is", "\u2581open"}, {"\u2581store", "\u2581is", "\u2581closed"}, stop));
  EXPECT_FALSE(flip({"\u2581the", "\u2581store", "\u2581is", "\u2581open"}, {"\u2581store", "\u2581is", "\u2581closed"}, 0.0f));
  // Negators are counted: one more is a flip though it is matched ("not ... not" against
  // "not"), two more are not, and a negator more with an opposite cancel.
  const std::string no = "\u2581not";
  EXPECT_TRUE(flip({no, "\u2581it", "\u2581is", no, "\u2581open"}, {no, "\u2581it", "\u2581is", "\u2581open"}, stop));
  EXPECT_TRUE(flip({no, "\u2581it", "\u2581is", "\u2581open"}, {no, "\u2581it", "\u2581is", no, "\u2581open"}, stop));
  EXPECT_FALSE(flip({no, "\u2581it", "\u2581is", no, "\u2581open"}, {"\u2581it", "\u2581is", "\u2581open"}, stop));
  EXPECT_FALSE(flip({no, "\u2581it", "\u2581is", no, "\u2581open"}, {no, "\u2581it", "\u2581is", "\u2581closed"}, stop));
  // The same negators, one moved: no flip (its meaning may change, but the network reads that).
  EXPECT_FALSE(flip({no, "\u2581it", "\u2581is", "\u2581open"}, {"\u2581it", "\u2581is", no, "\u2581open"}, stop));
  {  // Features without per-token negators count the flagged extra negator.
    auto map = SimilarityMap::compute(one_hot({0, 1, 2}, 4), one_hot({0, 1, 3, 2}, 4), 4);
    auto ia = piece_ids({"\u2581is", "\u2581it", "\u2581open"}), ib = piece_ids({"\u2581is", "\u2581it", no, "\u2581open"});
    auto features = alignment_features(map, PairContext{ia, ib, 0.9f}, idf, lex);
    features.forward.negators.clear(), features.backward.negators.clear();
    EXPECT_TRUE(minimal_flip(features));
  }
  EXPECT_FALSE(minimal_flip(AlignmentFeatures{}));
}

// A sentence's first word is capitalized, and a SentencePiece tokenizer writes
// it as another piece ("\u2581Open" against "\u2581open" inside the other
// text): through the tokenizers' case folds, a word matched in another case is
// matched, so "Open the port" / "Never open the port" differ by the negator
// alone. Without folds (no vocabulary known) the match is feature 2's, case
// included, as before. The network's inputs are the same either way.
TEST(AlignmentFeatures, MinimalFlipMatchesAWordInAnotherCase) {
  const Lexicon lex(Words{{"closed", "open"}}, LexiconWords{{}, {"never", "not", "no"}, {}});
  // "the" in every text: a stop word by idf; "The", never seen, is not one.
  std::vector<std::vector<uint32_t>> texts;
  for (const char* w : {"\u2581port", "\u2581door", "\u2581is", "\u2581open"})
    texts.push_back(piece_ids({"\u2581the", w}));
  for (int k = 0; texts.size() < 20; ++k) texts.push_back(piece_ids({"\u2581the", "\u2581filler" + std::to_string(k)}));
  const auto idf = build_idf_table(texts);
  const text::CaseFolds folds(std::vector<std::string>{"\u2581Open", "\u2581open", "\u2581Never", "\u2581The",
                                                       "\u2581the", "\u2581port", "\u2581door", ".", "\u2581No",
                                                       "\u2581NO"});
  auto features = [&](const std::vector<std::string>& pa, const std::vector<std::string>& pb,
                      const text::CaseFolds* case_folds) {
    std::vector<int> a, b;  // one-hot maps: a piece is similar to itself in any case, to nothing else
    std::map<std::string, int> index;
    for (const auto& p : pa) a.push_back(index.emplace(text::lower_case_piece(p), int(index.size())).first->second);
    for (const auto& p : pb) b.push_back(index.emplace(text::lower_case_piece(p), int(index.size())).first->second);
    const size_t dim = index.size();
    auto map = SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim);
    auto ia = piece_ids(pa), ib = piece_ids(pb);
    return alignment_features(map, PairContext{ia, ib, 0.9f}, idf, lex, case_folds);
  };
  const std::vector<std::string> open = {"\u2581Open", "\u2581the", "\u2581port", "."};
  const std::vector<std::string> never_open = {"\u2581Never", "\u2581open", "\u2581the", "\u2581port", "."};
  const auto folded = features(open, never_open, &folds), unfolded = features(open, never_open, nullptr);
  EXPECT_TRUE(minimal_flip(folded));
  EXPECT_FALSE(minimal_flip(unfolded));  // "Open" a word more, as before
  const text::CaseFolds none;
  EXPECT_FALSE(minimal_flip(features(open, never_open, &none)));  // folds of no piece
  EXPECT_EQ(folded.forward.matched, (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(folded.backward.matched, (std::vector<uint8_t>{0, 1, 1, 1, 1}));
  EXPECT_TRUE(unfolded.forward.matched.empty());  // feature 2 stands for it
  // Filled only where minimal_flip reads it: no polarity flip, no negator more, nothing to read.
  const auto same = features(open, {"\u2581open", "\u2581the", "\u2581port", "."}, &folds);
  EXPECT_TRUE(same.forward.matched.empty() && same.backward.matched.empty());
  EXPECT_FALSE(minimal_flip(same));
  EXPECT_EQ(folded.forward.tokens, unfolded.forward.tokens);  // the network reads the same inputs
  EXPECT_EQ(folded.backward.tokens, unfolded.backward.tokens);
  EXPECT_EQ(folded.pair, unfolded.pair);
  EXPECT_FLOAT_EQ(folded.forward.tokens[2], 0.0f);  // feature 2 stays exact, case included
  // An opposite, the first word's case changed: "The port is open" / "the port is closed".
  EXPECT_TRUE(minimal_flip(features({"\u2581The", "\u2581port", "\u2581is", "\u2581open"},
                                    {"\u2581the", "\u2581port", "\u2581is", "\u2581closed"}, &folds)));
  EXPECT_FALSE(minimal_flip(features({"\u2581The", "\u2581port", "\u2581is", "\u2581open"},
                                     {"\u2581the", "\u2581port", "\u2581is", "\u2581closed"}, nullptr)));
  // Case aside, another word changed too: the network decides.
  EXPECT_FALSE(minimal_flip(
      features(open, {"\u2581Never", "\u2581open", "\u2581the", "\u2581door", "."}, &folds)));
  // A word matched in another case keeps its place: "Open the port" / "Never the port open" is no flip.
  EXPECT_FALSE(minimal_flip(
      features(open, {"\u2581Never", "\u2581the", "\u2581port", "\u2581open", "."}, &folds)));
  // Only where the lexicon reads both alike: the word lists hold "no" and "No", not "NO", so
  // "No." / "NO." would count a negator more. They stay unmatched, as before.
  const auto shouted = features({"\u2581No", "."}, {"\u2581NO", "."}, &folds);
  EXPECT_EQ(shouted.forward.matched, (std::vector<uint8_t>{0, 1}));
  EXPECT_FALSE(minimal_flip(shouted));
  EXPECT_TRUE(minimal_flip(features({"\u2581No", "."}, {"."}, &folds)));  // a negator more indeed
  // A stop word in another case, unmatched: "The" is as common as "the" ("The port is open" / "port is closed").
  const auto dropped_the = features({"\u2581The", "\u2581port", "\u2581is", "\u2581open"},
                                    {"\u2581port", "\u2581is", "\u2581closed"}, &folds);
  EXPECT_TRUE(minimal_flip(dropped_the));
  EXPECT_LT(dropped_the.forward.folded_idf[0], dropped_the.forward.tokens[3]);  // feature 3: "The", never seen
  EXPECT_FALSE(minimal_flip(features({"\u2581The", "\u2581port", "\u2581is", "\u2581open"},
                                     {"\u2581port", "\u2581is", "\u2581closed"}, nullptr)));
  // A rare word stays one in any case: "Door" is not common because "door" is not.
  EXPECT_FALSE(minimal_flip(features({"\u2581Door", "\u2581port", "\u2581is", "\u2581open"},
                                     {"\u2581port", "\u2581is", "\u2581closed"}, &folds)));
}

// A list of opposites: each pair lower-case, two different words, listed once.
void expect_well_formed(const Words& pairs) {
  ASSERT_FALSE(pairs.empty());
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& [a, b] : pairs) {
    EXPECT_NE(a, b);
    for (const auto& w : {a, b}) {
      EXPECT_FALSE(w.empty());
      for (char ch : w) EXPECT_TRUE(ch >= 'a' && ch <= 'z') << w;
    }
    EXPECT_TRUE(seen.insert(std::minmax(a, b)).second) << a << " / " << b << " listed twice";
  }
}

// The relation opposites: well formed; through a Lexicon they reach the antonym
// feature both ways.
TEST(Lexicon, RelationOppositesAreWellFormedAndSeen) {
  const auto relations = relation_antonyms();
  expect_well_formed(relations);
  const Lexicon lex(relations);
  for (const auto& [a, b] : Words{{"under", "on"}, {"behind", "front"}, {"after", "before"}, {"forbids", "allows"}})
    EXPECT_TRUE(lex.antonyms(token_identity("\u2581" + a), token_identity("\u2581" + b))) << a << " / " << b;
  EXPECT_FALSE(lex.antonyms(token_identity("\u2581under"), token_identity("\u2581beneath")));  // same side
  EXPECT_FALSE(Lexicon(Words{{"closed", "open"}}).antonyms(token_identity("\u2581under"), token_identity("\u2581on")));
}

// Whether two whole words, as SentencePiece writes them, face each other in the lexicon.
static bool meet(const Lexicon& lex, const std::string& a, const std::string& b) {
  return lex.antonyms(token_identity("\u2581" + a), token_identity("\u2581" + b));
}

// The spatial relation changes: well formed, a word of one relation against
// a word of another, never two words for one relation.
TEST(Lexicon, SpatialRelationChangesPairRelationsNotSynonyms) {
  const auto spatial = spatial_relation_changes();
  expect_well_formed(spatial);
  const Lexicon lex(spatial);
  const auto changed = [&](const std::string& a, const std::string& b) { return meet(lex, a, b); };
  for (const auto& [a, b] : Words{{"above", "beside"}, {"left", "front"}, {"behind", "between"}, {"inside", "behind"},
                                  {"beneath", "beside"}, {"near", "inside"}, {"right", "behind"}})
    EXPECT_TRUE(changed(a, b)) << a << " / " << b;
  for (const auto& [a, b] : Words{{"below", "beneath"}, {"under", "underneath"}, {"above", "atop"},
                                  {"beside", "alongside"}, {"near", "nearby"}})
    EXPECT_FALSE(changed(a, b)) << a << " / " << b << ": one relation";
  EXPECT_FALSE(changed("near", "beside")) << "what is beside a thing is near it";
  for (const char* polysemous : {"over", "next", "far", "on", "across"})
    for (const auto& [a, b] : spatial) EXPECT_TRUE(a != polysemous && b != polysemous) << a << " / " << b;
}

// The time changes: times of one kind meet, times of two kinds and two words
// for one time do not; days and "during" are left out.
TEST(Lexicon, TimeChangesPairTimesOfOneKind) {
  const auto times = time_relation_changes();
  expect_well_formed(times);
  const Lexicon lex(times);
  const auto changed = [&](const std::string& a, const std::string& b) { return meet(lex, a, b); };
  for (const auto& [a, b] : Words{{"monthly", "yearly"}, {"daily", "annually"}, {"morning", "afternoon"},
                                  {"summer", "autumn"}, {"weekdays", "weekends"}, {"hourly", "weekly"}})
    EXPECT_TRUE(changed(a, b)) << a << " / " << b;
  for (const auto& [a, b] : Words{{"yearly", "annually"}, {"annual", "yearly"}, {"weekday", "weekdays"},
                                  {"evening", "night"}, {"monthly", "morning"}})
    EXPECT_FALSE(changed(a, b)) << a << " / " << b;
  for (const char* left_out : {"today", "tomorrow", "yesterday", "during", "day", "month", "spring", "fall"})
    for (const auto& [a, b] : times) EXPECT_TRUE(a != left_out && b != left_out) << a << " / " << b;
}

// The direction opposites: well formed like the relation opposites, and they
// meet across the split a tokenizer makes of an inflected word.
TEST(Lexicon, DirectionOppositesMeetAcrossInflectionsAndPieces) {
  const auto directions = direction_antonyms();
  expect_well_formed(directions);
  const Lexicon lex(directions);
  auto opposite = [&](const std::string& a, const std::string& b) {
    return lex.antonyms(token_identity("\u2581" + a), token_identity("\u2581" + b));
  };
  for (const auto& [a, b] : Words{{"increase", "reduce"}, {"increased", "reduced"}, {"rose", "fell"},
                                  {"supported", "opposed"}, {"on", "off"}, {"add", "remove"}})
    EXPECT_TRUE(opposite(a, b)) << a << " / " << b;
  // USE-lite writes "rejected" as "\u2581reject" "ed" and "gained" as "\u2581gain" "ed".
  EXPECT_TRUE(opposite("approved", "reject"));
  EXPECT_TRUE(opposite("increase", "reduces"));
  EXPECT_TRUE(opposite("gain", "lost"));
  EXPECT_FALSE(opposite("on", "offer")) << "no -er crossing: it would make words of another meaning";
  EXPECT_FALSE(opposite("increase", "raise")) << "same direction";
  EXPECT_FALSE(opposite("reduce", "lower"));
}

// add_antonyms extends a verifier's lexicon (its token table too), skips the
// pairs it holds either way round, and needs the lexicon input.
TEST(AlignmentVerifierLexicon, AddAntonymsExtendsTheLexicon) {
  AlignmentConfig c;
  auto v = AlignmentVerifier::untrained(c, small_idf(), 1, Lexicon(Words{{"closed", "open"}}));
  EXPECT_EQ(v->add_antonyms(Words{{"on", "under"}, {"open", "closed"}, {"before", "after"}}), 2u);
  EXPECT_EQ(v->lexicon().antonym_words().size(), 3u);
  EXPECT_TRUE(v->lexicon().antonyms(token_identity("\u2581under"), token_identity("\u2581on")));
  EXPECT_TRUE(v->lexicon().antonyms(token_identity("\u2581open"), token_identity("\u2581closed")));
  EXPECT_EQ(v->add_antonyms(Words{{"under", "on"}}), 0u);
  EXPECT_THROW(v->add_antonyms(Words{{"same", "same"}}), ConfigError);
  c.inputs = {"map", "identity", "pooled"};
  auto bare = AlignmentVerifier::untrained(c, small_idf(), 1);
  EXPECT_THROW(bare->add_antonyms(relation_antonyms()), ConfigError);
}

TEST(Lexicon, NumberWordsAndNegatorsThroughPieceForms) {
  const Lexicon lex(Words{}, LexiconWords::english());
  for (const char* piece : {"\u2581four", "\u2581Ten", "ten", "\u2581hundred", "\u25816", "379"})
    EXPECT_TRUE(lex.is_number(token_identity(piece))) << piece;
  for (const char* piece : {"\u2581one", "\u2581fourth", "\u2581port", "12345"})
    EXPECT_FALSE(lex.is_number(token_identity(piece))) << piece;
  for (const char* piece : {"\u2581not", "not", "\u2581Never", "\u2581cannot", "\u2581without", "No"})
    EXPECT_TRUE(lex.is_negator(token_identity(piece))) << piece;
  for (const char* piece : {"\u2581note", "\u2581can", "\u2581now", "\u2581four"})
    EXPECT_FALSE(lex.is_negator(token_identity(piece))) << piece;
  EXPECT_FALSE(Lexicon().is_number(token_identity("\u2581four")));
  EXPECT_FALSE(Lexicon().is_negator(token_identity("\u2581not")));
}

TEST(Lexicon, NegatingCliticOnlyAfterAnApostrophe) {
  const Lexicon lex(Words{}, LexiconWords::english());
  EXPECT_TRUE(lex.is_negating_clitic(token_identity("t")));
  EXPECT_FALSE(lex.is_negating_clitic(token_identity("\u2581t")));
  EXPECT_FALSE(lex.is_negator(token_identity("t")));  // alone, "t" is no negator
  EXPECT_TRUE(Lexicon::is_apostrophe(token_identity("'")));
  EXPECT_TRUE(Lexicon::is_apostrophe(token_identity("\u2019")));
  EXPECT_FALSE(Lexicon().is_negating_clitic(token_identity("t")));
}

// Pieces of a sentence as a SentencePiece tokenizer writes them, words split
// at spaces ("b+act" is two pieces of one word).
std::vector<uint32_t> sentence_ids(const std::string& sentence) {
  std::vector<std::string> pieces;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    std::string rest = word;
    bool first = true;
    for (size_t plus; (plus = rest.find('+')) != std::string::npos || !rest.empty();) {
      const std::string piece = plus == std::string::npos ? rest : rest.substr(0, plus);
      pieces.push_back(first ? "\u2581" + piece : piece);
      first = false;
      rest = plus == std::string::npos ? "" : rest.substr(plus + 1);
    }
    word.clear();
  };
  for (char c : sentence) c == ' ' ? flush() : word.push_back(c);
  flush();
  return piece_ids(pieces);
}

std::vector<uint32_t> reordered(std::span<const uint32_t> ids, const std::vector<size_t>& order) {
  std::vector<uint32_t> out;
  for (size_t j : order) out.push_back(ids[j]);
  return out;
}

TEST(CoordinationOrder, UndoesASwappedCoordination) {
  const auto x = sentence_ids("is salt or sugar worse ?"), y = sentence_ids("is sugar or salt worse ?");
  const auto order = coordination_order(x, y);
  ASSERT_EQ(order, (std::vector<size_t>{0, 3, 2, 1, 4, 5}));
  EXPECT_EQ(reordered(y, order), x);
  // Longest conjuncts first: two pieces each, not "value or by".
  const auto by_x = sentence_ids("pass it by value or by reference");
  const auto by_y = sentence_ids("pass it by reference or by value");
  EXPECT_EQ(reordered(by_y, coordination_order(by_x, by_y)), by_x);
  // Conjuncts of several pieces; the words around them may differ.
  const auto v_x = sentence_ids("a vir+us and a b+act+er differ how");
  const auto v_y = sentence_ids("how do a b+act+er and a vir+us differ");
  const auto v_order = coordination_order(v_x, v_y);
  ASSERT_FALSE(v_order.empty());
  const auto v_read = reordered(v_y, v_order);
  EXPECT_EQ(std::vector<uint32_t>(v_read.begin() + 2, v_read.begin() + 10),
            std::vector<uint32_t>(v_x.begin(), v_x.begin() + 8));
}

TEST(CoordinationOrder, LeavesEverythingElseAlone) {
  auto none = [](const std::string& a, const std::string& b) {
    return coordination_order(sentence_ids(a), sentence_ids(b)).empty();
  };
  EXPECT_TRUE(none("the dog bit the man", "the man bit the dog"));        // a role swap has no coordinator
  EXPECT_TRUE(none("salt or sugar", "salt or sugar"));                    // already in order
  EXPECT_TRUE(none("salt or sugar", "sugar or salt then salt or sugar"));  // Y holds X's order too
  EXPECT_TRUE(none("salt or sugar", "sugar and salt"));                   // another coordinator
  EXPECT_TRUE(none("salt or salt", "salt or salt"));
  EXPECT_TRUE(none("one two three four five or six", "six or one two three four five"));  // a conjunct over 4 pieces
  EXPECT_TRUE(none("or salt", "salt or"));                                // no conjunct before the coordinator
  EXPECT_TRUE(coordination_order(sentence_ids("salt or sugar"), {}).empty());
}

TEST(CoordinationOrder, RandomTextsGetAPermutationOrNothing) {
  // Short texts over a few pieces, coordinators among them, so that swaps,
  // repeats and overlapping coordinations all occur.
  const std::vector<uint32_t> alphabet = piece_ids({"\u2581a", "\u2581b", "\u2581c", "\u2581and", "\u2581or"});
  std::mt19937 rng(7);
  size_t reordered_pairs = 0;
  for (int round = 0; round < 3000; ++round) {
    auto text = [&] {
      std::vector<uint32_t> t(rng() % 13);
      for (auto& id : t) id = alphabet[rng() % alphabet.size()];
      return t;
    };
    const auto x = text(), y = text();
    const auto order = coordination_order(x, y);
    if (order.empty()) continue;
    ++reordered_pairs;
    ASSERT_EQ(order.size(), y.size());
    auto sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t j = 0; j < sorted.size(); ++j) ASSERT_EQ(sorted[j], j);
    EXPECT_NE(reordered(y, order), y);
  }
  EXPECT_GT(reordered_pairs, 50u);  // the property was exercised
}

TEST(AlignmentFeatures, ASwappedCoordinationReadsLikeTheSameOrder) {
  const size_t dim = 8;
  // tokens: 0 is, 1 salt, 2 or, 3 sugar, 4 worse
  const std::vector<int> a = {0, 1, 2, 3, 4}, b = {0, 3, 2, 1, 4};
  std::vector<uint32_t> ia = ids_of(a), ib = ids_of(b);
  ia[2] = ib[2] = token_identity("\u2581or");
  auto idf = small_idf();
  auto features = [&](const std::vector<int>& x, const std::vector<int>& y, std::span<const uint32_t> ix,
                      std::span<const uint32_t> iy) {
    return alignment_features(SimilarityMap::compute(one_hot(x, dim), one_hot(y, dim), dim), PairContext{ix, iy, 0.9f},
                              idf, Lexicon());
  };
  const auto swapped = features(a, b, ia, ib), reversed = features(b, a, ib, ia);
  // Read in one text's order: as that text against itself.
  const bool a_order = !std::lexicographical_compare(ib.begin(), ib.end(), ia.begin(), ia.end());
  const auto same = a_order ? features(a, a, ia, ia) : features(b, b, ib, ib);
  EXPECT_EQ(swapped.pair, same.pair);
  EXPECT_EQ(swapped.forward.tokens, same.forward.tokens);
  EXPECT_EQ(swapped.backward.tokens, same.backward.tokens);
  EXPECT_FLOAT_EQ(swapped.pair[12], 1.0f);  // exact matches in order
  // (b, a) is (a, b) with the directions exchanged, so F5 stays symmetric
  // (up to the rounding of row and column softmax kernels).
  auto expect_near = [](const std::vector<float>& x, const std::vector<float>& y) {
    ASSERT_EQ(x.size(), y.size());
    for (size_t k = 0; k < x.size(); ++k) EXPECT_NEAR(x[k], y[k], 1e-5) << k;
  };
  expect_near(reversed.pair, swapped.pair);
  expect_near(reversed.forward.tokens, swapped.backward.tokens);
  expect_near(reversed.backward.tokens, swapped.forward.tokens);
  // Without the coordinator the same swap is a crossed alignment.
  const auto plain = features(a, b, ids_of(a), ids_of(b));
  EXPECT_LT(plain.pair[12], 1.0f);
}


TEST(AlignmentFeatures, NumberWordsAndAddedNegatorsAreSeen) {
  // "the past four years" against "the past ten years", and "it did improve"
  // against "it did not improve": one-hot maps, so only the lexicon tells.
  const size_t dim = 8;
  const Lexicon words(Words{}, LexiconWords::english());
  auto token = [&](const DirectionFeatures& d, size_t i, size_t k) { return d.tokens[i * kTokenFeatures + k]; };
  {
    auto map = SimilarityMap::compute(one_hot({0, 1, 2, 3}, dim), one_hot({0, 1, 4, 3}, dim), dim);
    auto ia = piece_ids({"\u2581the", "\u2581past", "\u2581four", "\u2581years"});
    auto ib = piece_ids({"\u2581the", "\u2581past", "\u2581ten", "\u2581years"});
    auto f = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), words);
    EXPECT_FLOAT_EQ(token(f.forward, 2, 13), 1.0f);
    EXPECT_FLOAT_EQ(token(f.backward, 2, 13), 1.0f);
    EXPECT_FLOAT_EQ(f.pair[17], 0.5f);
    EXPECT_FLOAT_EQ(f.pair[18], 0.0f);
    // Without number words the pair looks like a synonym swap.
    EXPECT_FLOAT_EQ(alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), Lexicon()).pair[17], 0.0f);
  }
  {
    auto map = SimilarityMap::compute(one_hot({0, 1, 2}, dim), one_hot({0, 1, 5, 2}, dim), dim);
    auto ia = piece_ids({"\u2581it", "\u2581did", "\u2581improve"});
    auto ib = piece_ids({"\u2581it", "\u2581did", "\u2581not", "\u2581improve"});
    auto f = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), words);
    EXPECT_FLOAT_EQ(token(f.backward, 2, 14), 1.0f);  // "not" has no counterpart
    EXPECT_FLOAT_EQ(token(f.backward, 3, 14), 0.0f);
    for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(token(f.forward, i, 14), 0.0f);
    EXPECT_FLOAT_EQ(f.pair[18], 0.5f);
    EXPECT_FLOAT_EQ(alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), Lexicon()).pair[18], 0.0f);
  }
  {
    // "no" against "not": as many negators on each side, so no flip.
    auto map = SimilarityMap::compute(one_hot({0, 6, 2}, dim), one_hot({0, 5, 2}, dim), dim);
    auto ia = piece_ids({"\u2581there", "\u2581no", "\u2581doubt"});
    auto ib = piece_ids({"\u2581there", "\u2581not", "\u2581doubt"});
    auto f = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), words);
    EXPECT_FLOAT_EQ(f.pair[18], 0.0f);
  }
}

TEST(AlignmentFeatures, ContractedNegationsAreSeen) {
  // The pieces a SentencePiece tokenizer makes of "the drug isn't effective"
  // against "the drug is effective", "... is not effective" and "the drug's
  // t cells": one-hot maps, so only the lexicon tells.
  const size_t dim = 12;
  const Lexicon words(Words{}, LexiconWords::english());
  auto token = [&](const DirectionFeatures& d, size_t i, size_t k) { return d.tokens[i * kTokenFeatures + k]; };
  const auto contracted = piece_ids({"\u2581the", "\u2581drug", "\u2581isn", "'", "t", "\u2581effective"});
  auto contracted_map = [&](std::vector<int> other) {
    return SimilarityMap::compute(one_hot({0, 1, 2, 3, 4, 5}, dim), one_hot(other, dim), dim);
  };
  {
    auto ib = piece_ids({"\u2581the", "\u2581drug", "\u2581is", "\u2581effective"});
    auto f = alignment_features(contracted_map({0, 1, 6, 5}), PairContext{contracted, ib, 0.9f}, small_idf(), words);
    EXPECT_FLOAT_EQ(token(f.forward, 4, 14), 1.0f);  // the "t" after the apostrophe
    EXPECT_FLOAT_EQ(token(f.forward, 3, 14), 0.0f);
    EXPECT_FLOAT_EQ(f.pair[18], 0.5f);
    // A lexicon of the older lists (no clitics) sees nothing.
    LexiconWords older = LexiconWords::english();
    older.negating_clitics.clear();
    EXPECT_FLOAT_EQ(
        alignment_features(contracted_map({0, 1, 6, 5}), PairContext{contracted, ib, 0.9f}, small_idf(),
                           Lexicon(Words{}, older))
            .pair[18],
        0.0f);
  }
  {
    // "isn't" against "is not": one negator each, no flip.
    auto ib = piece_ids({"\u2581the", "\u2581drug", "\u2581is", "\u2581not", "\u2581effective"});
    auto f = alignment_features(contracted_map({0, 1, 6, 7, 5}), PairContext{contracted, ib, 0.9f}, small_idf(), words);
    EXPECT_FLOAT_EQ(f.pair[18], 0.0f);
  }
  {
    // A "t" after anything but an apostrophe is no negator.
    auto ia = piece_ids({"\u2581the", "\u2581drug", "\u2581is", "-", "t", "\u2581effective"});
    auto ib = piece_ids({"\u2581the", "\u2581drug", "\u2581is", "\u2581effective"});
    auto f = alignment_features(contracted_map({0, 1, 2, 5}), PairContext{ia, ib, 0.9f}, small_idf(), words);
    EXPECT_FLOAT_EQ(f.pair[18], 0.0f);
  }
}

TEST(AlignmentFeatures, MinimalFlipSetsAsideAContractedNegatorsStem) {
  // "\u2581is" is in every text (a stop word); the other pieces are rare.
  std::vector<std::vector<uint32_t>> texts(20, piece_ids({"\u2581is"}));
  const auto idf = build_idf_table(texts);
  const Lexicon words(Words{}, LexiconWords::english());
  auto flip = [&](const std::vector<std::string>& pa, const std::vector<std::string>& pb) {
    std::map<std::string, int> index;  // one-hot: the map is the exact-match matrix
    std::vector<int> a, b;
    for (const auto& p : pa) a.push_back(index.emplace(p, int(index.size())).first->second);
    for (const auto& p : pb) b.push_back(index.emplace(p, int(index.size())).first->second);
    const size_t dim = index.size();
    const auto ia = piece_ids(pa), ib = piece_ids(pb);
    const auto map = SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim);
    return minimal_flip(alignment_features(map, PairContext{ia, ib, 0.9f}, idf, words));
  };
  const std::vector<std::string> dont = {"\u2581don", "\u2019", "t", "\u2581take", "\u2581the", "\u2581pills"};
  const std::vector<std::string> take = {"\u2581take", "\u2581the", "\u2581pills"};
  EXPECT_TRUE(flip(dont, take));  // "don" and the apostrophe go with the "t"
  EXPECT_TRUE(flip(take, dont));
  EXPECT_TRUE(flip({"\u2581it", "\u2581isn", "'", "t", "\u2581open"}, {"\u2581it", "\u2581is", "\u2581open"}));
  // Something else changed too: no minimal flip.
  EXPECT_FALSE(flip(dont, {"\u2581take", "\u2581the", "\u2581tablets"}));
  // Both contracted: nothing is set aside, "don" against "doesn" is a change.
  EXPECT_FALSE(flip({"\u2581don", "'", "t", "\u2581go"}, {"\u2581doesn", "'", "t", "\u2581go"}));
  // A stem without its clitic is an ordinary word: "don" is not dropped.
  EXPECT_FALSE(flip({"\u2581don", "\u2581not", "\u2581go"}, {"\u2581go"}));
}

TEST(AlignmentVerifier, SaveLoadRoundTripAndCalibration) {
  AlignmentConfig c;
  c.hidden = 8;
  c.token_embedding = 4;
  c.buckets = 64;
  c.mlp = 8;
  auto v = AlignmentVerifier::untrained(c, small_idf(), 5, Lexicon(Words{{"closed", "open"}, {"down", "up"}}));
  EXPECT_FALSE(v->default_threshold().has_value());
  Calibration fixed;
  fixed.scale = 2.0f, fixed.bias = -0.5f, fixed.threshold = 0.6f;
  v->set_calibration(fixed);
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
  const auto* f5 = dynamic_cast<const AlignmentVerifier*>(w.get());
  ASSERT_NE(f5, nullptr);
  EXPECT_EQ(f5->lexicon().antonym_words(), v->lexicon().antonym_words());
  EXPECT_TRUE(f5->lexicon().antonyms(token_identity("\u2581up"), token_identity("\u2581down")));
  EXPECT_TRUE(f5->lexicon().words().empty());
  EXPECT_EQ(SectionFile(path, "VALN", 5).version(), 3u);  // no word lists: what older builds read
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

// The calibration's pooled term: P = sigmoid(scale · logit + w · min(cosine -
// center, 0) + bias), 0 when the cosine is unknown; it survives a save and load.
TEST(AlignmentVerifier, PooledTermOfTheCalibration) {
  auto v = tiny_verifier(7);
  Calibration cal;
  cal.scale = 1.5f, cal.bias = -0.25f, cal.threshold = 0.4f;
  cal.pooled_weight = 3.0f;
  cal.pooled_center = 0.6f;
  v->set_calibration(cal);
  v->mark_trained("test fixture");
  const size_t dim = 8;
  const auto map = SimilarityMap::compute(one_hot({1, 2, 3}, dim), one_hot({3, 2, 1, 4}, dim), dim);
  std::vector<SimilarityMap> maps = {map, map, map};
  const auto ids_a = ids_of({1, 2, 3}), ids_b = ids_of({3, 2, 1, 4});  // contexts hold views
  std::vector<PairContext> ctx(3, PairContext{ids_a, ids_b});
  ctx[0].pooled_cosine = 0.9f;
  ctx[1].pooled_cosine = 0.2f;  // ctx[2]: unknown
  const auto logits = v->logits(maps, ctx);
  const auto p = v->score_pairs(maps, ctx);
  auto expect = [&](size_t i, double pooled) {
    return 1 / (1 + std::exp(-(1.5 * logits[i] + pooled - 0.25)));
  };
  EXPECT_NEAR(p[0], expect(0, 0.0), 1e-6);  // above the center: no pooled term
  EXPECT_NEAR(p[1], expect(1, 3.0 * (0.2f - 0.6f)), 1e-6);
  EXPECT_NEAR(p[2], expect(2, 0.0), 1e-6);
  EXPECT_LT(p[1], expect(1, 0.0));
  const auto path = temp_path("pooled.valn");
  v->save(path);
  auto w = AlignmentVerifier::load(path);
  EXPECT_EQ(w->calibration()->pooled_weight, 3.0f);
  EXPECT_EQ(w->calibration()->pooled_center, 0.6f);
  EXPECT_EQ(w->score_pairs(maps, ctx), p);
  cal.pooled_weight = -1;
  EXPECT_THROW(v->set_calibration(cal), ConfigError);
}

// A linear pooled term behind a gate: P = sigmoid(scale · logit + w · (cosine
// - center) + bias), but at most the gate's own probability where that is
// under the gate's threshold and at least the threshold elsewhere, so the
// verdicts are the gate's; it survives a save and load (file version 4), and a
// gate whose threshold is not the verdict threshold is refused.
namespace {
// `v` with calibration `cal`, saved to `path` and loaded back.
std::unique_ptr<AlignmentVerifier> saved_and_loaded(AlignmentVerifier& v, const Calibration& cal,
                                                    const std::string& path) {
  v.set_calibration(cal);
  v.mark_trained("test fixture");
  v.save(path);
  return AlignmentVerifier::load(path);
}

// A calibration rule (a cap or a floor) travels in the file at `version` and
// under `key` in the calibration's JSON; at its neutral value (a default
// Calibration's) the key is absent and the file keeps version 3; `invalid`
// is refused.
void expect_rule_saved(AlignmentVerifier& v, Calibration cal, float Calibration::*rule, const std::string& key,
                       uint32_t version, float invalid) {
  const float value = cal.*rule;
  const auto path = temp_path(key + ".valn");
  auto w = saved_and_loaded(v, cal, path);
  EXPECT_EQ(SectionFile(path, "VALN", version).version(), version);
  ASSERT_TRUE(w->calibration());
  EXPECT_FLOAT_EQ((*w->calibration()).*rule, value);
  EXPECT_FLOAT_EQ(calibration_json(cal)[key].get<float>(), value);
  cal.*rule = Calibration{}.*rule;
  EXPECT_FALSE(calibration_json(cal).contains(key));
  v.set_calibration(cal);
  v.save(path);
  EXPECT_EQ(SectionFile(path, "VALN", version).version(), 3u);
  cal.*rule = invalid;
  EXPECT_THROW(v.set_calibration(cal), ConfigError);
}
}  // namespace

TEST(AlignmentVerifier, GatedLinearTermOfTheCalibration) {
  auto v = tiny_verifier(9);
  Calibration cal;
  cal.scale = 1.5f, cal.bias = -0.25f, cal.threshold = 0.45f;
  cal.pooled_weight = 4.0f, cal.pooled_center = 0.6f;
  cal.pooled_form = Calibration::PooledForm::linear;
  cal.gate = CalibrationGate{1.0f, 0.0f, 0.45f};
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  for (float logit : {-2.0f, -0.1f, 0.5f, 2.0f})
    for (double cosine : {0.2, 0.6, 0.95}) {
      const double linear = sigmoid(1.5 * logit + 4.0 * (cosine - 0.6) - 0.25), own = sigmoid(logit);
      const double p = cal.probability(logit, cosine);
      EXPECT_NEAR(p, own < 0.45 ? std::min(linear, own) : std::max(linear, 0.45), 1e-6);
      EXPECT_EQ(p >= 0.45f, own >= 0.45) << logit << " " << cosine;  // the gate's verdict
    }
  EXPECT_NEAR(cal.probability(-2.0f, 0.95), sigmoid(-2.0), 1e-9);     // a high cosine cannot lift a rejected pair
  EXPECT_GT(cal.probability(0.5f, 0.95), cal.probability(0.5f, 0.7));  // but orders the accepted ones
  EXPECT_NEAR(cal.probability(0.5f, 0.2), 0.45, 1e-6);                // nor can a low one reject an accepted pair
  const auto path = temp_path("gated.valn");
  auto w = saved_and_loaded(*v, cal, path);
  EXPECT_EQ(SectionFile(path, "VALN", 4).version(), 4u);
  ASSERT_TRUE(w->calibration().has_value());
  EXPECT_EQ(w->calibration()->pooled_form, Calibration::PooledForm::linear);
  ASSERT_TRUE(w->calibration()->gate.has_value());
  EXPECT_EQ(w->calibration()->gate->threshold, 0.45f);
  EXPECT_EQ(w->calibration()->gate->scale, 1.0f);
  EXPECT_DOUBLE_EQ(w->calibration()->probability(0.3f, 0.8), cal.probability(0.3f, 0.8));
  // Without a linear term or a gate the file stays at version 3, which older builds read.
  cal.pooled_form = Calibration::PooledForm::hinge;
  cal.gate.reset();
  v->set_calibration(cal);
  v->save(path);
  EXPECT_EQ(SectionFile(path, "VALN", 4).version(), 3u);
  cal.gate = CalibrationGate{1.0f, 0.0f, 0.55f};  // not the verdict threshold 0.45
  EXPECT_THROW(v->set_calibration(cal), ConfigError);
  EXPECT_EQ(calibration_json(cal)["gate"]["threshold"].get<float>(), 0.55f);
  EXPECT_EQ(calibration_json(cal)["pooled_form"], "hinge");
  EXPECT_THROW(parse_pooled_form("cubic"), FormatError);
  cal.gate = CalibrationGate{1.0f, 0.0f, 0.45f, 0.5f};  // a band of 0.5 would free every verdict
  EXPECT_THROW(v->set_calibration(cal), ConfigError);
}

// A gate band: a pair the network is unsure of (its own probability within
// the band of the threshold) and without an identity signal gets the linear
// probability, so a high cosine may accept it; with a signal, or further from
// the threshold, the gate holds. The band survives a save and load (version 9).
TEST(AlignmentVerifier, GateBandFreesOnlyUnsureVerdictsWithoutASignal) {
  auto v = tiny_verifier(9);
  Calibration cal;
  cal.scale = 1.0f, cal.bias = 0.0f, cal.threshold = 0.5f;
  cal.pooled_weight = 8.0f, cal.pooled_center = 0.6f;
  cal.pooled_form = Calibration::PooledForm::linear;
  cal.gate = CalibrationGate{1.0f, 0.0f, 0.5f, 0.1f};
  const float unsure = -0.2f, sure = -1.0f;  // own probability 0.45 (in the band), 0.27 (not)
  EXPECT_GT(cal.probability(unsure, 0.95, {false}), 0.5);  // the cosine accepts it
  EXPECT_LT(cal.probability(unsure, 0.95, {true}), 0.5);   // an identity signal keeps the gate
  EXPECT_LT(cal.probability(unsure, 0.95), 0.5);         // unknown counts as a signal
  EXPECT_LT(cal.probability(sure, 0.95, {false}), 0.5);    // outside the band the gate holds
  EXPECT_LT(cal.probability(0.2f, 0.2, {false}), 0.5);     // and a low cosine may reject an unsure match
  EXPECT_GE(cal.probability(0.2f, 0.2, {true}), 0.5);
  const auto path = temp_path("band.valn");
  auto w = saved_and_loaded(*v, cal, path);
  EXPECT_EQ(SectionFile(path, "VALN", 9).version(), 9u);
  ASSERT_TRUE(w->calibration() && w->calibration()->gate);
  EXPECT_FLOAT_EQ(w->calibration()->gate->band, 0.1f);
  EXPECT_DOUBLE_EQ(w->calibration()->probability(unsure, 0.95, {false}), cal.probability(unsure, 0.95, {false}));
  EXPECT_FLOAT_EQ(calibration_json(cal)["gate"]["band"].get<float>(), 0.1f);
  cal.gate->band = 0;  // no band: the key is absent and the file stays at version 4
  EXPECT_FALSE(calibration_json(cal)["gate"].contains("band"));
  v->set_calibration(cal);
  v->save(path);
  EXPECT_EQ(SectionFile(path, "VALN", 9).version(), 4u);
}

// The flip cap bounds P of a minimal flip only, and travels in the file
// (version 10; absent when 1, so the file keeps its older version).
TEST(AlignmentVerifier, FlipCapBoundsOnlyMinimalFlips) {
  auto v = tiny_verifier(11);
  Calibration cal;
  cal.scale = 1.0f, cal.bias = 0.0f, cal.threshold = 0.5f;
  cal.flip_cap = 0.2f;
  EXPECT_NEAR(cal.probability(3.0f, 0.9, {true, true}), 0.2, 1e-6);
  EXPECT_NEAR(cal.probability(3.0f, 0.9, {true, false}), 1.0 / (1.0 + std::exp(-3.0)), 1e-6);
  EXPECT_NEAR(cal.probability(-3.0f, 0.9, {true, true}), 1.0 / (1.0 + std::exp(3.0)), 1e-6);  // already lower
  expect_rule_saved(*v, cal, &Calibration::flip_cap, "flip_cap", 10, 0.0f);
}

// The surface floor raises P of a pair whose texts are the same but for case
// and punctuation, read through the spellings of the tokenizers this process
// made, and travels in the file (version 12; absent when 0).
TEST(AlignmentVerifier, SurfaceFloorRaisesOnlyTextsTheSameOnTheSurface) {
  // Making a tokenizer registers how its pieces spell text (text/surface.hpp).
  const text::SentencePieceTokenizer tokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"<x1>", 0}, {"<x2>", 0},
                                                {"<x3>", 0}, {"\u2581Close", -1}, {"\u2581close", -1},
                                                {"\u2581open", -1}, {"\u2581the", -1}, {"\u2581Valve", -1},
                                                {"\u2581valve", -1}, {".", -1}, {"\u2581ten", -1},
                                                {"\u258110", -1}, {"\u258112", -1}, {"\u2581times", -1}});
  EXPECT_GT(tokenizer.size(), 0u);
  auto v = tiny_verifier(13);
  Calibration cal;
  cal.scale = 1.0f, cal.bias = -4.0f, cal.threshold = 0.5f;  // the network's P is low for every pair
  v->set_calibration(cal);
  auto score = [&](const std::vector<std::string>& pa, const std::vector<std::string>& pb) {
    const size_t dim = 8;
    std::vector<int> a, b;
    for (size_t i = 0; i < pa.size(); ++i) a.push_back(int(i % dim));
    for (size_t i = 0; i < pb.size(); ++i) b.push_back(int(i % dim));
    const std::vector<SimilarityMap> maps = {SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim)};
    const auto ia = piece_ids(pa), ib = piece_ids(pb);
    return v->score_pairs(maps, std::vector<PairContext>{PairContext{ia, ib, 0.9f}})[0];
  };
  const std::vector<std::string> upper = {"\u2581Close", "\u2581the", "\u2581Valve", "."};
  const std::vector<std::string> lower = {"\u2581close", "\u2581the", "\u2581valve"};
  const std::vector<std::string> opposite = {"\u2581open", "\u2581the", "\u2581valve"};
  const float unfloored = score(upper, lower);
  ASSERT_LT(unfloored, 0.5f);
  const float other = score(upper, opposite);
  const std::vector<std::string> words = {"\u2581close", "\u2581ten", "\u2581times"};
  const std::vector<std::string> digits = {"\u2581Close", "\u258110", "\u2581times", "."};
  const std::vector<std::string> twelve = {"\u2581close", "\u258112", "\u2581times"};
  ASSERT_LT(score(words, digits), 0.5f);
  const float changed = score(words, twelve);
  cal.surface_floor = 0.9f;
  v->set_calibration(cal);
  EXPECT_FLOAT_EQ(score(upper, lower), 0.9f);
  EXPECT_FLOAT_EQ(score(lower, upper), 0.9f);
  EXPECT_FLOAT_EQ(score(upper, opposite), other);  // another word: no floor
  EXPECT_FLOAT_EQ(score(words, digits), 0.9f);     // one number written two ways
  EXPECT_FLOAT_EQ(score(words, twelve), changed);  // another value: no floor
  {  // the trace gives the same score and says the floor raised it
    const size_t dim = 8;
    const std::vector<SimilarityMap> maps = {
        SimilarityMap::compute(one_hot({0, 1, 2, 3}, dim), one_hot({0, 1, 2}, dim), dim), SimilarityMap{}};
    const auto ia = piece_ids(upper), ib = piece_ids(lower);
    const std::vector<PairContext> context = {PairContext{ia, ib, 0.9f}, PairContext{}};
    const auto traces = v->trace_pairs(maps, context);
    EXPECT_FLOAT_EQ(float(traces[0].probability), v->score_pairs(maps, context)[0]);
    EXPECT_TRUE(traces[0].surface_match && traces[0].floored && !traces[0].capped);
    EXPECT_LT(traces[0].network_probability, 0.5);
    EXPECT_EQ(traces[1].probability, 0.0);  // an empty map
  }
  EXPECT_NEAR(cal.probability(4.0f, 0.9, {true, false, true}), 0.9, 1e-6);  // 0.5 raised to the floor
  EXPECT_NEAR(cal.probability(4.0f, 0.9, {true, false, false}), 0.5, 1e-6);
  EXPECT_NEAR(cal.probability(8.0f, 0.9, {true, false, true}), 1.0 / (1.0 + std::exp(-4.0)), 1e-6);  // already higher

  expect_rule_saved(*v, cal, &Calibration::surface_floor, "surface_floor", 12, 1.0f);
}

namespace {
// Scores pairs of pieces with a verifier, on one-hot maps of their sizes and
// contexts that hold their identities (pooled cosine 0.9).
class PieceScorer {
 public:
  explicit PieceScorer(const AlignmentVerifier& v) : v_(v) {}
  float score(const std::vector<std::string>& pa, const std::vector<std::string>& pb) {
    const std::vector<SimilarityMap> maps = {map(pa.size(), pb.size())};
    return v_.score_pairs(maps, std::vector<PairContext>{context(pa, pb)})[0];
  }
  // The trace, after checking that it gives the score.
  ScoreTrace trace(const std::vector<std::string>& pa, const std::vector<std::string>& pb) {
    const std::vector<SimilarityMap> maps = {map(pa.size(), pb.size())};
    const std::vector<PairContext> contexts = {context(pa, pb)};
    const auto traces = v_.trace_pairs(maps, contexts);
    EXPECT_FLOAT_EQ(float(traces[0].probability), v_.score_pairs(maps, contexts)[0]);
    return traces[0];
  }

 private:
  static SimilarityMap map(size_t na, size_t nb) {
    constexpr size_t dim = 8;
    std::vector<int> a, b;
    for (size_t i = 0; i < na; ++i) a.push_back(int(i % dim));
    for (size_t i = 0; i < nb; ++i) b.push_back(int(i % dim));
    return SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim);
  }
  PairContext context(const std::vector<std::string>& pa, const std::vector<std::string>& pb) {
    const auto& a = held_.emplace_back(piece_ids(pa));
    const auto& b = held_.emplace_back(piece_ids(pb));
    return PairContext{a, b, 0.9f};
  }
  const AlignmentVerifier& v_;
  std::list<std::vector<uint32_t>> held_;  // PairContext holds spans of them
};
}  // namespace

// The name cap lowers P of a pair whose texts differ by one capitalized word
// inside, swapped for another, read through the spellings of the tokenizers
// this process made, and travels in the file (version 13; absent when 1).
TEST(AlignmentVerifier, NameCapLowersOnlyASwappedName) {
  const text::SentencePieceTokenizer tokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"<x1>", 0}, {"<x2>", 0},
                                                {"<x3>", 0}, {"\u2581Weather", -1}, {"\u2581in", -1},
                                                {"\u2581Canada", -1}, {"\u2581Germany", -1}, {"\u2581Canadas", -1},
                                                {"\u2581canada", -1}, {"\u2581today", -1}, {"?", -1}});
  EXPECT_GT(tokenizer.size(), 0u);
  auto v = tiny_verifier(17);
  Calibration cal;
  cal.scale = 1.0f, cal.bias = 4.0f, cal.threshold = 0.5f;  // the network's P is high for every pair
  v->set_calibration(cal);
  PieceScorer pairs(*v);
  const std::vector<std::string> canada = {"\u2581Weather", "\u2581in", "\u2581Canada", "?"};
  const std::vector<std::string> germany = {"\u2581Weather", "\u2581in", "\u2581Germany"};
  const std::vector<std::string> near = {"\u2581Weather", "\u2581in", "\u2581Canadas"};
  const std::vector<std::string> lower = {"\u2581Weather", "\u2581in", "\u2581canada", "\u2581today"};
  const float uncapped = pairs.score(canada, germany), near_score = pairs.score(canada, near),
              other = pairs.score(canada, lower);
  ASSERT_GT(uncapped, 0.5f);
  cal.name_cap = 0.15f;
  v->set_calibration(cal);
  EXPECT_FLOAT_EQ(pairs.score(canada, germany), 0.15f);
  EXPECT_FLOAT_EQ(pairs.score(germany, canada), 0.15f);
  EXPECT_FLOAT_EQ(pairs.score(canada, near), near_score);  // a near spelling: no cap
  EXPECT_FLOAT_EQ(pairs.score(canada, lower), other);      // a word more: no cap
  const auto t = pairs.trace(canada, germany);  // it says the cap lowered it
  EXPECT_TRUE(t.name_swap && t.name_capped && !t.capped && !t.floored && !t.transposition);
  EXPECT_GT(t.network_probability, 0.5);
  RuleSignals swapped;
  swapped.name_swap = true;
  EXPECT_NEAR(cal.probability(0.0f, 0.9, swapped), 0.15, 1e-6);
  EXPECT_NEAR(cal.probability(-8.0f, 0.9, swapped), 1.0 / (1.0 + std::exp(4.0)), 1e-6);  // already lower
  EXPECT_NEAR(cal.probability(0.0f, 0.9), 1.0 / (1.0 + std::exp(-4.0)), 1e-6);

  expect_rule_saved(*v, cal, &Calibration::name_cap, "name_cap", 13, 0.0f);
}

// The name cap also lowers P of a pair whose texts differ by one word in small
// letters swapped for another thing of its kind (text::swapped_kind, read from
// the English WordNet that scripts/setup.sh installs), and not a synonym's.
TEST(AlignmentVerifier, NameCapLowersAThingSwappedForAnotherOfItsKind) {
  const text::SentencePieceTokenizer tokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"<x1>", 0}, {"<x2>", 0},
                                                {"<x3>", 0}, {"\u2581Is", -1}, {"\u2581coffee", -1},
                                                {"\u2581tea", -1}, {"\u2581film", -1}, {"\u2581movie", -1},
                                                {"\u2581good", -1}, {"?", -1}});
  EXPECT_GT(tokenizer.size(), 0u);
  auto v = tiny_verifier(17);
  Calibration cal;
  cal.scale = 1.0f, cal.bias = 4.0f, cal.threshold = 0.5f;
  v->set_calibration(cal);
  PieceScorer pairs(*v);
  const std::vector<std::string> coffee = {"\u2581Is", "\u2581coffee", "\u2581good", "?"};
  const std::vector<std::string> tea = {"\u2581Is", "\u2581tea", "\u2581good", "?"};
  const std::vector<std::string> film = {"\u2581Is", "\u2581film", "\u2581good", "?"};
  const std::vector<std::string> movie = {"\u2581Is", "\u2581movie", "\u2581good", "?"};
  const float synonyms = pairs.score(film, movie);
  ASSERT_GT(pairs.score(coffee, tea), 0.5f);
  cal.name_cap = 0.15f;
  v->set_calibration(cal);
  EXPECT_FLOAT_EQ(pairs.score(coffee, tea), 0.15f);
  EXPECT_FLOAT_EQ(pairs.score(tea, coffee), 0.15f);
  EXPECT_FLOAT_EQ(pairs.score(film, movie), synonyms);  // one synset: no cap
  const auto t = pairs.trace(coffee, tea);
  EXPECT_TRUE(t.kind_swap && t.name_capped && !t.name_swap && !t.capped && !t.transposition);
  EXPECT_FALSE(pairs.trace(film, movie).kind_swap);
  RuleSignals kind;
  kind.kind_swap = true;
  EXPECT_NEAR(cal.probability(0.0f, 0.9, kind), 0.15, 1e-6);
}

// A word the other text holds with "un" or "dis" before it
// (text::reversed_word: "mount" / "unmount") is a minimal flip for the flip
// cap, read from the spellings; "unit" / "it" is none.
TEST(AlignmentVerifier, FlipCapLowersAWordReversedByItsPrefix) {
  const text::SentencePieceTokenizer tokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"<x1>", 0}, {"<x2>", 0},
                                                {"<x3>", 0}, {"\u2581mount", -1}, {"\u2581un", -1},
                                                {"mount", -1}, {"\u2581the", -1}, {"\u2581drive", -1},
                                                {"\u2581remove", -1}, {"?", -1}});
  EXPECT_GT(tokenizer.size(), 0u);
  auto v = tiny_verifier(17);
  Calibration cal;
  cal.scale = 1.0f, cal.bias = 4.0f, cal.threshold = 0.5f;
  cal.flip_cap = 0.002f;
  v->set_calibration(cal);
  PieceScorer pairs(*v);
  const std::vector<std::string> mount = {"\u2581mount", "\u2581the", "\u2581drive", "?"};
  const std::vector<std::string> unmount = {"\u2581un", "mount", "\u2581the", "\u2581drive", "?"};
  const std::vector<std::string> remove = {"\u2581remove", "\u2581the", "\u2581drive", "?"};
  EXPECT_FLOAT_EQ(pairs.score(mount, unmount), 0.002f);
  EXPECT_FLOAT_EQ(pairs.score(unmount, mount), 0.002f);
  const auto t = pairs.trace(mount, unmount);
  EXPECT_TRUE(t.minimal_flip && t.capped);
  EXPECT_GT(pairs.score(mount, remove), 0.002f);
  EXPECT_FALSE(pairs.trace(mount, remove).minimal_flip);
}

// The transposition cap lowers P of a pair whose texts are the same but for
// two words that trade places, and only that, and travels in the file
// (version 14; absent when 1).
TEST(AlignmentVerifier, TranspositionCapLowersOnlyTwoWordsTradingPlaces) {
  const text::SentencePieceTokenizer tokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"<x1>", 0}, {"<x2>", 0},
                                                {"<x3>", 0}, {"\u2581convert", -1}, {"\u2581Celsius", -1},
                                                {"\u2581to", -1}, {"\u2581Fahren", -1}, {"heit", -1},
                                                {"\u2581or", -1}, {"\u2581Kelvin", -1}});
  EXPECT_GT(tokenizer.size(), 0u);
  auto v = tiny_verifier(19);
  Calibration cal;
  cal.scale = 1.0f, cal.bias = 4.0f, cal.threshold = 0.5f;
  v->set_calibration(cal);
  PieceScorer pairs(*v);
  const std::vector<std::string> c_to_f = {"\u2581convert", "\u2581Celsius", "\u2581to", "\u2581Fahren", "heit"};
  const std::vector<std::string> f_to_c = {"\u2581convert", "\u2581Fahren", "heit", "\u2581to", "\u2581Celsius"};
  const std::vector<std::string> c_or_f = {"\u2581convert", "\u2581Celsius", "\u2581or", "\u2581Fahren", "heit"};
  const std::vector<std::string> f_or_c = {"\u2581convert", "\u2581Fahren", "heit", "\u2581or", "\u2581Celsius"};
  const std::vector<std::string> c_to_k = {"\u2581convert", "\u2581Celsius", "\u2581to", "\u2581Kelvin"};
  const float coordination = pairs.score(c_or_f, f_or_c), other = pairs.score(c_to_f, c_to_k);
  ASSERT_GT(pairs.score(c_to_f, f_to_c), 0.5f);
  cal.transposition_cap = 0.04f;
  v->set_calibration(cal);
  EXPECT_FLOAT_EQ(pairs.score(c_to_f, f_to_c), 0.04f);
  EXPECT_FLOAT_EQ(pairs.score(f_to_c, c_to_f), 0.04f);
  EXPECT_FLOAT_EQ(pairs.score(c_or_f, f_or_c), coordination);  // a coordination: no cap
  EXPECT_FLOAT_EQ(pairs.score(c_to_f, c_to_k), other);         // another word: no cap
  const auto t = pairs.trace(c_to_f, f_to_c);
  EXPECT_TRUE(t.transposition && t.transposition_capped && !t.name_swap && !t.name_capped && !t.capped);
  RuleSignals transposed;
  transposed.transposition = true;
  EXPECT_NEAR(cal.probability(0.0f, 0.9, transposed), 0.04, 1e-6);
  EXPECT_NEAR(cal.probability(-8.0f, 0.9, transposed), 1.0 / (1.0 + std::exp(4.0)), 1e-6);

  expect_rule_saved(*v, cal, &Calibration::transposition_cap, "transposition_cap", 14, 1.5f);
}

// The number cap lowers P of a pair whose texts are the same but for numbers
// changed in value, and only that, and travels in the file (version 15; absent
// when 1).
TEST(AlignmentVerifier, NumberCapLowersOnlyChangedNumbers) {
  const text::SentencePieceTokenizer tokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"<x1>", 0}, {"<x2>", 0},
                                                {"<x3>", 0}, {"\u2581lasted", -1}, {"\u2581thirteen", -1},
                                                {"\u2581thirty", -1}, {"\u258113", -1}, {"\u258130", -1}, {"\u2581minutes", -1},
                                                {"\u2581hours", -1}, {"\u2581guests", -1}});
  EXPECT_GT(tokenizer.size(), 0u);
  auto v = tiny_verifier(23);
  Calibration cal;
  cal.scale = 1.0f, cal.bias = 4.0f, cal.threshold = 0.5f;
  v->set_calibration(cal);
  PieceScorer pairs(*v);
  const std::vector<std::string> thirteen = {"\u2581lasted", "\u2581thirteen", "\u2581minutes"};
  const std::vector<std::string> thirty = {"\u2581lasted", "\u2581thirty", "\u2581minutes"};
  const std::vector<std::string> digits = {"\u2581lasted", "\u258113", "\u2581minutes"};
  const std::vector<std::string> hours = {"\u2581lasted", "\u2581thirteen", "\u2581hours"};
  const std::vector<std::string> guests = {"\u2581lasted", "\u2581thirteen", "\u2581guests"};
  const float written = pairs.score(thirteen, digits), other = pairs.score(thirteen, guests);
  ASSERT_GT(pairs.score(thirteen, hours), 0.2f);
  ASSERT_GT(pairs.score(thirteen, thirty), 0.5f);
  cal.number_cap = 0.2f;
  v->set_calibration(cal);
  EXPECT_FLOAT_EQ(pairs.score(thirteen, thirty), 0.2f);
  EXPECT_FLOAT_EQ(pairs.score(thirty, thirteen), 0.2f);
  EXPECT_FLOAT_EQ(pairs.score(thirteen, {"\u2581lasted", "\u258130", "\u2581minutes"}), 0.2f);  // by value
  EXPECT_FLOAT_EQ(pairs.score(thirteen, digits), written);  // written two ways: no cap
  EXPECT_FLOAT_EQ(pairs.score(thirteen, hours), 0.2f);      // another unit
  EXPECT_FLOAT_EQ(pairs.score(thirteen, guests), other);    // another word: no cap
  const auto t = pairs.trace(thirteen, thirty);
  EXPECT_TRUE(t.number_change && t.number_capped && !t.transposition && !t.name_capped && !t.capped);
  RuleSignals changed;
  changed.number_change = true;
  EXPECT_NEAR(cal.probability(0.0f, 0.9, changed), 0.2, 1e-6);
  EXPECT_NEAR(cal.probability(-8.0f, 0.9, changed), 1.0 / (1.0 + std::exp(4.0)), 1e-6);

  expect_rule_saved(*v, cal, &Calibration::number_cap, "number_cap", 15, 1.5f);
}

// The cap reads the case folds of the tokenizers this process made (text/
// case_folds.hpp): "Shut the valve" / "Never shut the valve" is capped like
// "shut the valve" / "never shut the valve", the first word capitalized or not.
TEST(AlignmentVerifier, FlipCapSeesAWordInAnotherCase) {
  // Making a tokenizer registers its vocabulary's folds ("\u2581Shut" -> "\u2581shut").
  const text::SentencePieceTokenizer tokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"<x1>", 0}, {"<x2>", 0},
                                                {"<x3>", 0}, {"\u2581Shut", -1}, {"\u2581shut", -1},
                                                {"\u2581Never", -1}, {"\u2581never", -1}, {"\u2581the", -1},
                                                {"\u2581valve", -1}});
  EXPECT_GT(tokenizer.size(), 0u);
  AlignmentConfig config;
  config.hidden = 8, config.mlp = 8, config.token_embedding = 0;
  auto v = AlignmentVerifier::untrained(config, small_idf(), 12, Lexicon({}, LexiconWords{{}, {"never"}, {}}));
  auto probability = [&](const std::vector<std::string>& pa, const std::vector<std::string>& pb, float flip_cap) {
    Calibration cal;
    cal.scale = 1.0f, cal.bias = 0.0f, cal.threshold = 0.5f, cal.flip_cap = flip_cap;
    v->set_calibration(cal);
    std::vector<int> a, b;  // one-hot: a word is similar to itself in any case
    std::map<std::string, int> index;
    auto lower = [](std::string p) {
      for (char& c : p) c = c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
      return p;
    };
    for (const auto& p : pa) a.push_back(index.emplace(lower(p), int(index.size())).first->second);
    for (const auto& p : pb) b.push_back(index.emplace(lower(p), int(index.size())).first->second);
    const size_t dim = index.size();
    const std::vector<SimilarityMap> maps = {SimilarityMap::compute(one_hot(a, dim), one_hot(b, dim), dim)};
    const auto ia = piece_ids(pa), ib = piece_ids(pb);
    return v->score_pairs(maps, std::vector<PairContext>{PairContext{ia, ib, 0.9f}})[0];
  };
  const std::vector<std::string> shut = {"\u2581Shut", "\u2581the", "\u2581valve"};
  const std::vector<std::string> never_shut = {"\u2581Never", "\u2581shut", "\u2581the", "\u2581valve"};
  const std::vector<std::string> lower_shut = {"\u2581shut", "\u2581the", "\u2581valve"};
  const std::vector<std::string> lower_never_shut = {"\u2581never", "\u2581shut", "\u2581the", "\u2581valve"};
  ASSERT_GT(probability(shut, never_shut, 1.0f), 0.01f);  // uncapped
  ASSERT_GT(probability(lower_shut, lower_never_shut, 1.0f), 0.01f);
  EXPECT_FLOAT_EQ(probability(lower_shut, lower_never_shut, 0.01f), 0.01f);
  EXPECT_FLOAT_EQ(probability(shut, never_shut, 0.01f), 0.01f);
  EXPECT_FLOAT_EQ(probability(never_shut, shut, 0.01f), 0.01f);
}

// A fold_case verifier reads "\u2581Machine" as "\u2581machine": the same
// network inputs as the lower-case pair, with the folds kept in its file.
TEST(AlignmentVerifier, FoldCaseReadsIdentitiesIgnoringCaseAndKeepsItsFolds) {
  const std::vector<std::string> vocabulary = {"\u2581What", "\u2581what", "\u2581is", "\u2581Machine",
                                               "\u2581machine", "\u2581Learning", "\u2581learning"};
  AlignmentConfig config;
  config.hidden = 8, config.mlp = 8, config.token_embedding = 0;
  auto plain = AlignmentVerifier::untrained(config, small_idf(), 5);
  config.fold_case = true;
  auto folding = AlignmentVerifier::untrained(config, small_idf(), 5);
  folding->set_case_folds(text::CaseFolds(vocabulary));
  folding->mark_trained("test");
  EXPECT_THROW(plain->set_case_folds(text::CaseFolds(vocabulary)), ConfigError);

  const std::vector<std::string> upper = {"\u2581What", "\u2581is", "\u2581Machine", "\u2581Learning"};
  const std::vector<std::string> lower = {"\u2581what", "\u2581is", "\u2581machine", "\u2581learning"};
  const size_t dim = 4;  // one-hot: a word is similar to itself in any case
  const std::vector<SimilarityMap> maps = {
      SimilarityMap::compute(one_hot({0, 1, 2, 3}, dim), one_hot({0, 1, 2, 3}, dim), dim)};
  auto logit = [&](const AlignmentVerifier& v, const std::vector<std::string>& a, const std::vector<std::string>& b) {
    const auto ia = piece_ids(a), ib = piece_ids(b);
    return v.logits(maps, std::vector<PairContext>{PairContext{ia, ib, 0.8f}})[0];
  };
  // Without folding, "Machine" has no exact match in "machine": other inputs, another logit.
  ASSERT_NE(logit(*plain, upper, lower), logit(*plain, lower, lower));
  EXPECT_FLOAT_EQ(logit(*folding, upper, lower), logit(*folding, lower, lower));
  EXPECT_FLOAT_EQ(logit(*folding, lower, upper), logit(*folding, lower, lower));

  const auto path = temp_path("fold.valn");
  folding->save(path);
  EXPECT_EQ(SectionFile(path, "VALN", 11).version(), 11u);
  const auto loaded = AlignmentVerifier::load(path);
  EXPECT_TRUE(loaded->config().fold_case);
  EXPECT_EQ(loaded->case_folds().entries(), folding->case_folds().entries());
  EXPECT_FLOAT_EQ(logit(*loaded, upper, lower), logit(*folding, lower, lower));
  // A verifier that keeps case stays at the version older builds read, with no FOLD section.
  plain->mark_trained("test");
  const auto plain_path = temp_path("plain.valn");
  plain->save(plain_path);
  EXPECT_LT(SectionFile(plain_path, "VALN", 11).version(), 11u);
  EXPECT_FALSE(SectionFile(plain_path, "VALN", 11).has("FOLD"));

  // The folding file without its FOLD section, and with a FOLD section that is cut short.
  const SectionFile good(path, "VALN", 11);
  auto copy_without_folds = [&](const std::string& name, const std::string& fold_bytes) {
    const auto bad = temp_path(name);
    SectionWriter out(bad, "VALN", 11);
    for (const char* tag : {"CONF", "IDFT", "LEXA", "PNAM", "PDAT"}) {
      const auto bytes = good.section(tag);
      out.add(tag, bytes.data(), bytes.size());
    }
    if (!fold_bytes.empty()) out.add("FOLD", fold_bytes.data(), fold_bytes.size());
    out.commit();
    return bad;
  };
  const auto folds = good.section("FOLD");
  const std::string short_folds(reinterpret_cast<const char*>(folds.data()), folds.size() - 8);
  for (const auto& [name, bytes] : {std::pair<std::string, std::string>{"nofold.valn", ""},
                                    std::pair<std::string, std::string>{"shortfold.valn", short_folds}}) {
    const auto bad = copy_without_folds(name, bytes);
    try {
      AlignmentVerifier::load(bad);
      FAIL() << name;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("FOLD"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

// Number words and negators travel in the file (version 5), so a loaded
// verifier reads the same features; a bad LEXW line names itself.
namespace {
// A copy of the file at `path` with `tags` kept and `section` replaced by
// `lines`, whose second line is bad: loading it names that section and line.
void expect_bad_word_list(const std::string& path, uint32_t version, std::initializer_list<const char*> tags,
                          const char* section, const std::string& lines) {
  const SectionFile good(path, "VALN", 8);
  const auto bad_path = temp_path("bad-word-list.valn");
  SectionWriter out(bad_path, "VALN", version);
  for (const char* tag : tags) {
    const auto bytes = good.section(tag);
    out.add(tag, bytes.data(), bytes.size());
  }
  out.add(section, lines.data(), lines.size());
  out.commit();
  try {
    AlignmentVerifier::load(bad_path);
    FAIL() << lines;
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(section) + " line 2"), std::string::npos) << e.what();
  }
}
}  // namespace

TEST(AlignmentVerifier, LexiconWordsSurviveASaveAndLoad) {
  AlignmentConfig c;
  c.hidden = 4, c.mlp = 4, c.buckets = 16;
  auto v = AlignmentVerifier::untrained(c, small_idf(), 1, Lexicon(Words{{"closed", "open"}}, LexiconWords::english()));
  v->mark_trained("test");
  const auto path = temp_path("w.valn");
  v->save(path);
  EXPECT_EQ(SectionFile(path, "VALN", 6).version(), 6u);
  auto w = AlignmentVerifier::load(path);
  EXPECT_EQ(w->lexicon().words().numbers, LexiconWords::english().numbers);
  EXPECT_EQ(w->lexicon().words().negators, LexiconWords::english().negators);
  EXPECT_EQ(w->lexicon().words().negating_clitics, LexiconWords::english().negating_clitics);
  EXPECT_TRUE(w->lexicon().is_negator(token_identity("\u2581never")));
  EXPECT_TRUE(w->lexicon().is_negating_clitic(token_identity("t")));
  const size_t dim = 8;
  auto qa = one_hot({0, 1, 2}, dim), qb = one_hot({0, 1, 5, 2}, dim);
  auto ia = piece_ids({"\u2581it", "\u2581did", "\u2581improve"});
  auto ib = piece_ids({"\u2581it", "\u2581did", "\u2581not", "\u2581improve"});
  std::vector<float> pooled(dim, 0.5f);
  TextTokens a{qa, ia, pooled}, b{qb, ib, pooled};
  EXPECT_FLOAT_EQ(score_texts(*v, a, std::span<const TextTokens>(&b, 1), dim)[0],
                  score_texts(*w, a, std::span<const TextTokens>(&b, 1), dim)[0]);
  // Without clitics the file stays at version 5, which older builds read.
  LexiconWords older = LexiconWords::english();
  older.negating_clitics.clear();
  auto v5 = AlignmentVerifier::untrained(c, small_idf(), 1, Lexicon(Words{{"closed", "open"}}, older));
  v5->mark_trained("test");
  const auto v5_path = temp_path("w5.valn");
  v5->save(v5_path);
  EXPECT_EQ(SectionFile(v5_path, "VALN", 6).version(), 5u);
  EXPECT_TRUE(AlignmentVerifier::load(v5_path)->lexicon().words().negating_clitics.empty());
  // The same file with one LEXW line of an unknown kind; and a clitic in a
  // version-5 file, which cannot hold one.
  for (const std::string lines : {"number\tfour\nverb\trun\n", "negator\tnot\nnegating_clitic\tt\n"})
    expect_bad_word_list(path, 5, {"CONF", "IDFT", "LEXA", "PNAM", "PDAT"}, "LEXW", lines);
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

// Inference runs F5's network outside torch (verify/kernels.hpp); the torch
// module, which training uses, is the reference it must agree with.
TEST(AlignmentVerifier, InferenceMatchesTheTorchModule) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random_text = [&](size_t n, size_t dim) {
    std::vector<float> v(n * dim);
    for (auto& x : v) x = normal(rng);
    return v;
  };
  struct Variant {
    size_t hidden, mlp, embedding;
    bool conv;
    std::vector<std::string> inputs;
    size_t pooled_head = 0;
  };
  const std::vector<Variant> variants = {{32, 64, 0, true, {"map", "identity", "pooled", "lexicon"}},
                                         {16, 24, 4, true, {"map", "identity", "pooled", "lexicon"}},
                                         {12, 10, 0, false, {"map", "pooled"}},
                                         {8, 8, 3, true, {"map", "lexicon"}},
                                         {32, 64, 0, true, {"map", "identity", "pooled", "lexicon"}, 4},
                                         {8, 8, 0, false, {"map", "pooled"}, 1}};
  const size_t dim = 16;
  const Lexicon lexicon(Words{{"closed", "open"}});
  for (const auto& variant : variants) {
    SCOPED_TRACE("hidden " + std::to_string(variant.hidden));
    AlignmentConfig c;
    c.hidden = variant.hidden, c.mlp = variant.mlp, c.token_embedding = variant.embedding, c.conv = variant.conv;
    c.buckets = 97, c.inputs = variant.inputs;
    c.pooled_head = variant.pooled_head, c.pooled_dim = variant.pooled_head ? dim : 0;
    auto v = AlignmentVerifier::untrained(c, small_idf(), 7, lexicon);
    std::vector<std::vector<float>> pooled;  // two per map
    pooled.reserve(2 * 6);
    // Maps of several shapes, some with token identities and a pooled cosine.
    std::vector<SimilarityMap> maps;
    std::vector<std::vector<uint32_t>> ids;
    std::vector<PairContext> contexts;
    const std::vector<std::pair<size_t, size_t>> shapes = {{1, 1}, {3, 5}, {16, 128}, {9, 2}, {5, 5}, {1, 40}};
    for (const auto& [n, m] : shapes) {
      auto a = random_text(n, dim), b = random_text(m, dim);
      maps.push_back(SimilarityMap::compute(a, b, dim));
    }
    ids.reserve(2 * shapes.size());
    for (size_t k = 0; k < shapes.size(); ++k) {
      std::vector<int> ta, tb;
      for (size_t i = 0; i < shapes[k].first; ++i) ta.push_back(int(rng() % 6));
      for (size_t j = 0; j < shapes[k].second; ++j) tb.push_back(int(rng() % 6));
      ids.push_back(ids_of(ta));
      ids.push_back(ids_of(tb));
      pooled.push_back(random_text(1, dim));
      pooled.push_back(random_text(1, dim));
      PairContext ctx;
      if (k % 2 == 0) ctx = {ids[2 * k], ids[2 * k + 1], 0.3f + 0.1f * float(k), pooled[2 * k], pooled[2 * k + 1]};
      if (k == 3) ctx.query_pooled = pooled[2 * k], ctx.candidate_pooled = pooled[2 * k + 1];  // vectors, no ids
      contexts.push_back(ctx);
    }
    const auto fast = v->logits(maps, contexts);
    std::vector<AlignmentFeatures> features;
    for (size_t k = 0; k < maps.size(); ++k) {
      features.push_back(alignment_features(maps[k], contexts[k], v->idf(), v->lexicon()));
      if (c.pooled_head) features.back().pooled = pooled_comparison(contexts[k].query_pooled, contexts[k].candidate_pooled);
    }
    std::vector<const AlignmentFeatures*> ptrs;
    for (const auto& f : features) ptrs.push_back(&f);
    auto& net = v->impl().net;
    torch::NoGradGuard no_grad;
    auto reference = net->forward(verify::detail::make_alignment_batch(ptrs, c)).contiguous();
    for (size_t k = 0; k < maps.size(); ++k)
      EXPECT_NEAR(fast[k], reference.data_ptr<float>()[k], 1e-4) << "map " << k;
    // Weights changed in place (as an optimizer step does) are seen by the next call.
    net->out->bias.add_(1.5f);
    const auto shifted = v->logits(maps, contexts);
    for (size_t k = 0; k < maps.size(); ++k) EXPECT_NEAR(shifted[k], fast[k] + 1.5f, 1e-4) << "map " << k;
  }
}

// The target j* of a token is the first j maximizing M_ij + 0.5 [same token
// at j]; quantized maps make ties between exact and inexact positions common.
TEST(AlignmentFeatures, TargetIsTheFirstBestWithTheExactMatchBonus) {
  std::mt19937 rng(17);
  const float levels[] = {-0.5f, 0.0f, 0.5f, 1.0f};
  const auto idf = small_idf();
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 6, m = 1 + rng() % 20;
    std::vector<float> cells(n * m);
    for (auto& c : cells) c = levels[rng() % 4];
    std::vector<int> ta, tb;
    for (size_t i = 0; i < n; ++i) ta.push_back(int(rng() % 4));
    for (size_t j = 0; j < m; ++j) tb.push_back(int(rng() % 4));
    const auto ia = ids_of(ta), ib = ids_of(tb);
    const SimilarityMap map(n, m, cells);
    const auto f = alignment_features(map, PairContext{ia, ib, 0.5f}, idf, Lexicon());
    for (size_t i = 0; i < n; ++i) {
      float best = -1e30f, bonus_best = -1e30f;
      size_t arg = 0;
      for (size_t j = 0; j < m; ++j) {
        best = std::max(best, cells[i * m + j]);
        const float v = cells[i * m + j] + (ia[i] == ib[j] ? 0.5f : 0.0f);
        if (v > bonus_best) bonus_best = v, arg = j;
      }
      const float* row = f.forward.tokens.data() + i * kTokenFeatures;
      ASSERT_FLOAT_EQ(row[0], std::max(-1.0f, best)) << "trial " << trial << " token " << i;
      ASSERT_FLOAT_EQ(row[5], m > 1 ? float(arg) / float(m - 1) : 0.5f) << "trial " << trial << " token " << i;
    }
    // The backward direction reads the columns the same way.
    std::vector<float> transposed(m * n);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < m; ++j) transposed[j * n + i] = cells[i * m + j];
    for (size_t j = 0; j < m; ++j) {
      float best = -1e30f, bonus_best = -1e30f;
      size_t arg = 0;
      double z = 0, soft = 0;
      for (size_t i = 0; i < n; ++i) best = std::max(best, cells[i * m + j]);
      for (size_t i = 0; i < n; ++i) {
        const float v = cells[i * m + j] + (ia[i] == ib[j] ? 0.5f : 0.0f);
        if (v > bonus_best) bonus_best = v, arg = i;
        const double w = std::exp((double(cells[i * m + j]) - best) / 0.1);
        z += w, soft += w * cells[i * m + j];
      }
      const float* col = f.backward.tokens.data() + j * kTokenFeatures;
      ASSERT_FLOAT_EQ(col[0], std::max(-1.0f, best)) << "trial " << trial << " column " << j;
      ASSERT_NEAR(col[1], soft / z, 1e-5) << "trial " << trial << " column " << j;
      ASSERT_FLOAT_EQ(col[5], n > 1 ? float(arg) / float(n - 1) : 0.5f) << "trial " << trial << " column " << j;
    }
    const SoftAlignVerifier f2;
    const double want_f2 = (f2.score(map) + f2.score(SimilarityMap(m, n, transposed))) / 2;
    ASSERT_NEAR(f.pair[14], want_f2, 1e-5) << "trial " << trial;
  }
}

TEST(TokenTable, AgreesWithTheTablesItMerges) {
  const auto idf = small_idf();
  const Lexicon lex(Words{{"closed", "open"}, {"decrease", "increase"}});
  const TokenTable table(idf, lex);
  std::vector<uint32_t> tokens = ids_of({0, 1, 2, 3});
  for (const char* piece : {"\u2581open", "Open", "closed", "\u2581increased", "\u2581shut", "7", "\u25812024", "##12",
                            "12345", "never seen"})
    tokens.push_back(token_identity(piece));
  for (uint32_t t : tokens) {
    const auto info = table.info(t);
    EXPECT_FLOAT_EQ(info.idf, idf.normalized_idf(t)) << t;
    EXPECT_EQ(info.word, lex.word_of(t)) << t;
    EXPECT_EQ(info.number, lex.is_number(t)) << t;
    EXPECT_EQ(info.negator, lex.is_negator(t)) << t;
  }
  EXPECT_TRUE(table.info(token_identity("\u25812024")).number);
  EXPECT_FALSE(table.info(token_identity("12345")).number);
  EXPECT_FALSE(table.info(token_identity("\u2581four")).number);  // no number words in this lexicon
  const Lexicon words(Words{}, LexiconWords::english());
  const TokenTable with_words(idf, words);
  EXPECT_TRUE(with_words.info(token_identity("\u2581four")).number);
  EXPECT_TRUE(with_words.info(token_identity("\u25817")).number);
  EXPECT_TRUE(with_words.info(token_identity("\u2581Never")).negator);
  EXPECT_FALSE(with_words.info(token_identity("\u2581now")).negator);
  EXPECT_NE(table.info(token_identity("Open")).word, Lexicon::kNoWord);
  EXPECT_EQ(table.info(token_identity("\u2581shut")).word, Lexicon::kNoWord);
  // An empty table answers like empty tables.
  const TokenTable none;
  EXPECT_EQ(none.info(token_identity("\u2581open")).word, Lexicon::kNoWord);
}

TEST(PooledComparison, ProductsThenDistancesOfTheUnitVectors) {
  const std::vector<float> a = {3, 0, 4}, b = {0, 2, 0}, c = {6, 0, 8};
  const auto ab = pooled_comparison(a, b), ba = pooled_comparison(b, a);
  ASSERT_EQ(ab.size(), 6u);
  EXPECT_EQ(ab, ba);  // symmetric
  const auto ac = pooled_comparison(a, c);  // the same direction: products sum to the cosine, distances are 0
  EXPECT_NEAR(ac[0] + ac[1] + ac[2], 1.0f, 1e-6);
  EXPECT_NEAR(ac[3] + ac[4] + ac[5], 0.0f, 1e-6);
  EXPECT_NEAR(ab[0] + ab[1] + ab[2], cosine(a, b), 1e-6);
  EXPECT_NEAR(ab[3], 0.6f, 1e-6);  // |0.6 - 0|
  EXPECT_NEAR(ab[4], 1.0f, 1e-6);
  EXPECT_TRUE(pooled_comparison({}, {}).empty());
  EXPECT_TRUE(pooled_comparison(a, std::vector<float>(3, 0.0f)).empty());  // a zero vector has no direction
  EXPECT_THROW(pooled_comparison(a, std::vector<float>(2, 1.0f)), ConfigError);
}

// A pooled head reads the two pooled vectors dimension by dimension: its file
// is version 7 with the head in its config, scores survive a save and load,
// the pooled vectors change the score, unknown vectors still score, and
// vectors of another dimension are refused, naming both.
TEST(AlignmentVerifier, PooledHeadSurvivesASaveAndLoadAndChecksTheDimension) {
  AlignmentConfig c;
  c.hidden = 8, c.mlp = 8, c.token_embedding = 0, c.pooled_head = 3, c.pooled_dim = 8;
  auto v = AlignmentVerifier::untrained(c, small_idf(), 9);
  {
    auto& net = v->impl().net;
    torch::NoGradGuard no_grad;
    net->pooled_in->weight.normal_(0, 1.0);  // so the vectors visibly matter
  }
  v->mark_trained("test fixture");
  const size_t dim = 8;
  auto qa = one_hot({1, 2, 3}, dim), qb = one_hot({3, 2, 1}, dim);
  auto ia = ids_of({1, 2, 3}), ib = ids_of({3, 2, 1});
  std::vector<float> pa = {1, 0, 0, 0, 1, 0, 0, 0}, pb = {0, 1, 0, 0, 1, 0, 0, 0}, pc = {1, 0, 0, 0, 0.9f, 0, 0, 0.1f};
  TextTokens a{qa, ia, pa}, b{qb, ib, pb}, b2{qb, ib, pc}, unknown{qb, ib, {}};
  const TextTokens cands[] = {b, b2, unknown};
  const auto before = score_texts(*v, a, cands, dim);
  EXPECT_NE(before[0], before[1]);
  for (float p : before) EXPECT_TRUE(std::isfinite(p));
  const auto path = temp_path("head.valn");
  v->save(path);
  EXPECT_EQ(SectionFile(path, "VALN", 7).version(), 7u);
  auto w = AlignmentVerifier::load(path);
  EXPECT_EQ(w->config().pooled_head, 3u);
  EXPECT_EQ(w->config().pooled_dim, 8u);
  EXPECT_EQ(w->parameter_count(), v->parameter_count());
  const auto after = score_texts(*w, a, cands, dim);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_FLOAT_EQ(before[i], after[i]);
  // Vectors of another dimension: the error names both.
  const std::vector<float> short_a(4, 1.0f), short_b(4, 0.5f);
  const auto map = SimilarityMap::compute(qa, qb, dim);
  PairContext ctx{ia, ib, 0.5f, short_a, short_b};
  try {
    w->score_pairs(std::span<const SimilarityMap>(&map, 1), std::span<const PairContext>(&ctx, 1));
    FAIL() << "pooled vectors of another dimension were scored";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("trained on 8"), std::string::npos) << e.what();
  }
  // A head needs the pooled input and a dimension.
  AlignmentConfig bad = c;
  bad.inputs = {"map", "identity"};
  EXPECT_THROW(AlignmentVerifier::untrained(bad, small_idf(), 1), ConfigError);
  bad = c;
  bad.pooled_dim = 0;
  EXPECT_THROW(AlignmentVerifier::untrained(bad, small_idf(), 1), ConfigError);
}

// A form the tokenizer splits ("disable" as "▁dis able") is seen only through
// its spelling: the run of pieces is the word, on its first piece, and the
// pieces after it are no words of their own ("able" is not "disable").
TEST(Lexicon, SpelledFormsAreSeenAcrossTheirPieces) {
  const Words pairs{{"enable", "disable"}, {"able", "unable"}};
  const LexiconSpellings spellings{{"disable", {"\u2581dis", "able"}},
                                   {"disabled", {"\u2581dis", "able", "d"}},
                                   {"Disable", {"\u2581Dis", "able"}},
                                   {"notlisted", {"\u2581not", "listed"}}};
  Lexicon plain(pairs), spelled(pairs, {}, spellings);
  EXPECT_TRUE(spelled.starts_spelling(token_identity("\u2581dis")));
  EXPECT_FALSE(spelled.starts_spelling(token_identity("\u2581not")));  // not a listed form: never matched
  EXPECT_FALSE(plain.starts_spelling(token_identity("\u2581dis")));
  const auto ids = piece_ids({"\u2581dis", "able", "d", "\u2581dis", "able", "\u2581dis", "\u2581Dis", "able"});
  const auto disabled = spelled.spelled_at(ids, 0);  // the longest spelling wins
  EXPECT_EQ(disabled.length, 3u);
  EXPECT_TRUE(spelled.antonym_words(disabled.word, spelled.word_of(token_identity("\u2581enabled"))));
  EXPECT_FALSE(spelled.antonym_words(disabled.word, spelled.word_of(token_identity("\u2581enable"))));
  const auto disable = spelled.spelled_at(ids, 3);
  EXPECT_EQ(disable.length, 2u);
  EXPECT_TRUE(spelled.antonym_words(disable.word, spelled.word_of(token_identity("\u2581enable"))));
  EXPECT_EQ(spelled.spelled_at(ids, 5).length, 0u);  // "▁dis" then "▁Dis": no spelling
  EXPECT_EQ(spelled.spelled_at(ids, 6).length, 2u);  // the capitalized spelling
  EXPECT_EQ(spelled.spelled_at(ids, 8).length, 0u);  // past the end
  // Forms come once each, lower-case, for a tokenizer to spell.
  const auto forms = spelled.antonym_forms();
  EXPECT_EQ(std::set<std::string>(forms.begin(), forms.end()).size(), forms.size());
  EXPECT_NE(std::find(forms.begin(), forms.end(), "disabling"), forms.end());
  EXPECT_THROW(Lexicon(pairs, {}, LexiconSpellings{{"disable", {"\u2581disable"}}}), ConfigError);
  EXPECT_THROW(Lexicon(pairs, {}, LexiconSpellings{{"disable", {"\u2581dis", "a ble"}}}), ConfigError);  // unwritable
  EXPECT_THROW(Lexicon(pairs, {}, LexiconSpellings{{"dis\table", {"\u2581dis", "able"}}}), ConfigError);
  EXPECT_EQ(spelled.spellings(), spellings);  // kept as given, in order

  // "How do I enable it" against "How do I disable it", the map one-hot.
  const size_t dim = 8;
  auto map = SimilarityMap::compute(one_hot({0, 1, 2, 3, 5}, dim), one_hot({0, 1, 2, 4, 6, 5}, dim), dim);
  auto ia = piece_ids({"\u2581How", "\u2581do", "\u2581I", "\u2581enable", "\u2581it"});
  auto ib = piece_ids({"\u2581How", "\u2581do", "\u2581I", "\u2581dis", "able", "\u2581it"});
  auto token = [&](const DirectionFeatures& d, size_t i, size_t k) { return d.tokens[i * kTokenFeatures + k]; };
  const auto seen = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), spelled);
  EXPECT_FLOAT_EQ(token(seen.forward, 3, 14), 1.0f);   // "enable" faces "disable"
  EXPECT_FLOAT_EQ(token(seen.backward, 3, 14), 1.0f);  // on the spelling's first piece
  EXPECT_FLOAT_EQ(token(seen.backward, 4, 14), 0.0f);  // "able" is part of it, no word alone
  EXPECT_FLOAT_EQ(seen.pair[18], 0.5f);
  // The texts differ by the opposite alone: "able" goes with "\u2581dis", a minimal flip.
  EXPECT_EQ(seen.backward.flipped[3], DirectionFeatures::kFlippedAntonym);
  EXPECT_EQ(seen.backward.flipped[4], DirectionFeatures::kFlippedSpelling);
  EXPECT_EQ(seen.backward.flipped[5], 0);
  EXPECT_TRUE(minimal_flip(seen));
  const auto unseen = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), plain);
  EXPECT_FLOAT_EQ(unseen.pair[18], 0.0f);
  EXPECT_FALSE(minimal_flip(unseen));
  // A piece after the spelling that the other text lacks is a change of its own.
  auto map_more = SimilarityMap::compute(one_hot({0, 1, 2, 3, 5}, dim), one_hot({0, 1, 2, 4, 6, 7, 5}, dim), dim);
  auto ib_more = piece_ids({"\u2581How", "\u2581do", "\u2581I", "\u2581dis", "able", "\u2581all", "\u2581it"});
  EXPECT_FALSE(minimal_flip(alignment_features(map_more, PairContext{ia, ib_more, 0.9f}, small_idf(), spelled)));
}

// Thousands of spellings, many sharing their first two pieces: each is found
// at its own length, and a run no spelling starts with is not.
TEST(Lexicon, EverySpellingIsFoundAmongThousands) {
  Words pairs;
  LexiconSpellings spellings;
  auto first = [](int k) { return "\u2581w" + std::to_string(k % 50); };
  for (int k = 0; k < 3000; ++k) {
    const std::string w = "w" + std::to_string(k), v = "v" + std::to_string(k);
    pairs.emplace_back(w, "anti" + w);
    // "w<k>" spelled "▁w<k % 50> x <k>": 50 first pieces, each shared by 60 spellings;
    // every third k also "v<k>", spelled one piece longer: "▁w<k % 50> x <k> z".
    spellings.push_back({w, {first(k), "x", std::to_string(k)}});
    if (k % 3 == 0) pairs.emplace_back(v, "anti" + v), spellings.push_back({v, {first(k), "x", std::to_string(k), "z"}});
  }
  const Lexicon lex(pairs, {}, spellings);
  auto opposite = [&](int k, const char* letter) {
    return lex.word_of(token_identity("anti" + std::string(letter) + std::to_string(k)));
  };
  for (int k = 0; k < 3000; ++k) {
    const auto ids = piece_ids({first(k), "x", std::to_string(k), "\u2581tail"});
    const auto run = lex.spelled_at(ids, 0);
    ASSERT_EQ(run.length, 3u) << k;
    EXPECT_TRUE(lex.antonym_words(run.word, opposite(k, "w"))) << k;
    EXPECT_EQ(lex.spelled_at(ids, 1).length, 0u);
    const auto longer = lex.spelled_at(piece_ids({first(k), "x", std::to_string(k), "z"}), 0);
    ASSERT_EQ(longer.length, k % 3 == 0 ? 4u : 3u) << k;  // the longest spelling that matches
    EXPECT_TRUE(lex.antonym_words(longer.word, opposite(k, k % 3 == 0 ? "v" : "w"))) << k;
  }
  EXPECT_EQ(lex.spelled_at(piece_ids({"\u2581w1", "y", "1"}), 0).length, 0u);
  EXPECT_EQ(lex.spelled_at(piece_ids({"\u2581w1", "x", "2"}), 0).length, 0u);  // another spelling's rest
}

// A number word the tokenizer splits ("sixty" as "▁six ty") is that number:
// against "sixteen" ("▁six teen") or "six" it is a changed number, though the
// first pieces match; spelled the same in both texts it is matched.
TEST(AlignmentFeatures, SpelledNumberWordsAreTheirOwnNumbers) {
  LexiconWords numbers;
  numbers.numbers = {"six", "sixty", "sixteen"};
  const LexiconSpellings spellings{{"sixty", {"\u2581six", "ty"}}, {"sixteen", {"\u2581six", "teen"}}};
  const Lexicon spelled(Words{}, numbers, spellings), plain(Words{}, numbers);
  EXPECT_EQ(spelled.spelled_at(piece_ids({"\u2581six", "ty"}), 0).number, Lexicon::number_identity("sixty"));
  EXPECT_EQ(spelled.spelled_at(piece_ids({"\u2581six", "ty"}), 0).word, Lexicon::kNoWord);
  const size_t dim = 8;
  auto token = [&](const DirectionFeatures& d, size_t i, size_t k) { return d.tokens[i * kTokenFeatures + k]; };
  // "take sixteen tablets" against "take sixty tablets", the map one-hot.
  auto map = SimilarityMap::compute(one_hot({0, 1, 2, 3}, dim), one_hot({0, 1, 4, 3}, dim), dim);
  auto ia = piece_ids({"\u2581take", "\u2581six", "teen", "\u2581tablets"});
  auto ib = piece_ids({"\u2581take", "\u2581six", "ty", "\u2581tablets"});
  const auto seen = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), spelled);
  EXPECT_FLOAT_EQ(token(seen.forward, 1, 13), 1.0f);   // "sixteen" has no match
  EXPECT_FLOAT_EQ(token(seen.backward, 1, 13), 1.0f);  // nor "sixty"
  EXPECT_FLOAT_EQ(token(seen.forward, 2, 13), 0.0f);   // "teen" is part of it
  EXPECT_FLOAT_EQ(seen.pair[17], 0.5f);
  const auto unseen = alignment_features(map, PairContext{ia, ib, 0.9f}, small_idf(), plain);
  EXPECT_FLOAT_EQ(unseen.pair[17], 0.0f);  // without spellings "▁six" meets "▁six"
  // The same number word in both texts, and a bare "six" against "sixty".
  auto same = SimilarityMap::compute(one_hot({0, 1, 4, 3}, dim), one_hot({0, 1, 4, 3}, dim), dim);
  EXPECT_FLOAT_EQ(alignment_features(same, PairContext{ib, ib, 0.9f}, small_idf(), spelled).pair[17], 0.0f);
  auto six = piece_ids({"\u2581take", "\u2581six", "\u2581tablets"});
  auto bare = SimilarityMap::compute(one_hot({0, 1, 3}, dim), one_hot({0, 1, 4, 3}, dim), dim);
  const auto against_six = alignment_features(bare, PairContext{six, ib, 0.9f}, small_idf(), spelled);
  EXPECT_FLOAT_EQ(token(against_six.forward, 1, 13), 1.0f);
  EXPECT_FLOAT_EQ(token(against_six.backward, 1, 13), 1.0f);
}

// The features of two texts given as pieces, the map one-hot (one slot per
// distinct piece), the lexicon read in whole words through `whole_words`
// (null: not).
static AlignmentFeatures piece_features(const std::vector<std::string>& a, const std::vector<std::string>& b,
                                        const Lexicon& lexicon, const text::SurfaceSpellings* whole_words) {
  const size_t dim = 16;
  std::map<std::string, int> slot;
  std::vector<int> ta, tb;
  for (const auto& p : a) ta.push_back(slot.emplace(p, int(slot.size())).first->second);
  for (const auto& p : b) tb.push_back(slot.emplace(p, int(slot.size())).first->second);
  const auto map = SimilarityMap::compute(one_hot(ta, dim), one_hot(tb, dim), dim);
  return alignment_features(map, PairContext{piece_ids(a), piece_ids(b), 0.9f}, small_idf(), lexicon, nullptr,
                            whole_words);
}

// With whole_words a word of the lexicon counts only where the text holds it
// whole: "\u2581under" of "undermining" is no "under", "\u2581not" of
// "notable" and "not" of "knot" no negators; an inflection after a word
// ("\u2581hot ter") and a negator split in pieces ("\u2581Can not") still count.
TEST(AlignmentFeatures, WholeWordsKeepTheLexiconToWordsTheTextHoldsWhole) {
  text::SurfaceSpellings spellings;
  const std::vector<std::string> vocabulary = {
      "<unk>",      "\u2581the",  "\u2581plan", "\u2581is", "\u2581under", "min",       "ing",        "\u2581over",
      "\u2581it",  "\u2581hot",  "ter",         "\u2581cold", "er",          "\u2581not", "able",        "\u2581remarkable",
      "\u2581I",   "\u2581Can",  "not",         "\u2581can", "\u2581go",    "\u2581k",   "\u2581tied", "\u2581a",
      "\u2581knot", "\u2581(",   ")",          "under"};
  spellings.add_sentencepiece(vocabulary, 1);
  const Lexicon lexicon(Words{{"under", "over"}, {"hot", "cold"}}, LexiconWords::english());
  // Pair feature 18: polarity flips (an antonym facing its partner, or a negator more).
  auto flips = [&](const std::vector<std::string>& a, const std::vector<std::string>& b, bool whole) {
    return piece_features(a, b, lexicon, whole ? &spellings : nullptr).pair[18];
  };
  const std::vector<std::string> undermining = {"\u2581the", "\u2581plan", "\u2581is", "\u2581under", "min", "ing",
                                                "\u2581it"};
  const std::vector<std::string> over = {"\u2581the", "\u2581plan", "\u2581is", "\u2581over", "\u2581it"};
  EXPECT_GT(flips(undermining, over, false), 0.0f);  // read as "under" / "over"
  EXPECT_FLOAT_EQ(flips(undermining, over, true), 0.0f);
  const std::vector<std::string> under = {"\u2581the", "\u2581plan", "\u2581is", "\u2581under", "\u2581it"};
  EXPECT_GT(flips(under, over, true), 0.0f);  // the word itself
  const std::vector<std::string> bracketed = {"\u2581the", "\u2581plan", "\u2581(", "under", ")"};
  EXPECT_GT(flips(bracketed, over, true), 0.0f);  // after a bracket "under" starts its word
  EXPECT_GT(flips({"\u2581it", "\u2581is", "\u2581hot", "ter"}, {"\u2581it", "\u2581is", "\u2581cold", "er"}, true),
            0.0f);  // inflections
  EXPECT_GT(flips({"\u2581it", "\u2581is", "\u2581not", "able"}, {"\u2581it", "\u2581is", "\u2581remarkable"}, false),
            0.0f);
  EXPECT_FLOAT_EQ(
      flips({"\u2581it", "\u2581is", "\u2581not", "able"}, {"\u2581it", "\u2581is", "\u2581remarkable"}, true), 0.0f);
  EXPECT_FLOAT_EQ(flips({"\u2581I", "\u2581tied", "\u2581a", "\u2581k", "not"}, {"\u2581I", "\u2581tied", "\u2581a",
                                                                                  "\u2581knot"},
                        true),
                  0.0f);
  EXPECT_GT(flips({"\u2581I", "\u2581Can", "not", "\u2581go"}, {"\u2581I", "\u2581can", "\u2581go"}, true), 0.0f);
  // Pieces of no registered vocabulary are read as without it.
  EXPECT_GT(flips({"\u2581x", "\u2581not", "y"}, {"\u2581x", "z"}, true), 0.0f);
}

// With whole words, a comparative facing its antonym's of the same degree is
// a minimal flip ("bigger" / "smaller"), while no network input moves: the
// lexicon holds no such forms.
TEST(AlignmentFeatures, ComparativesOfOppositesAreMinimalFlipsWithWholeWords) {
  text::SurfaceSpellings spellings;
  const std::vector<std::string> vocabulary = {"<unk>",           "\u2581is",       "\u2581the",     "\u2581bigger",
                                               "\u2581smaller",  "\u2581larger",   "\u2581box",     "\u2581heavier",
                                               "\u2581smallest", "\u2581hot",      "ter",            "\u2581cold",
                                               "er",              "\u2581today",    "\u2581safer",   "\u2581riskier",
                                               "\u2581never",    "\u2581water"};
  spellings.add_sentencepiece(vocabulary, 1);
  const Lexicon lexicon(Words{{"big", "small"}, {"hot", "cold"}, {"safe", "risky"}, {"heavy", "light"}},
                        LexiconWords::english());
  auto features = [&](const std::vector<std::string>& a, const std::vector<std::string>& b, bool whole) {
    return piece_features(a, b, lexicon, whole ? &spellings : nullptr);
  };
  const std::vector<std::string> bigger = {"\u2581is", "\u2581the", "\u2581bigger", "\u2581box", "\u2581heavier"};
  const std::vector<std::string> smaller = {"\u2581is", "\u2581the", "\u2581smaller", "\u2581box", "\u2581heavier"};
  const auto with = features(bigger, smaller, true), without = features(bigger, smaller, false);
  EXPECT_TRUE(minimal_flip(with, 1.0f));
  EXPECT_FALSE(minimal_flip(without, 1.0f));
  EXPECT_EQ(with.forward.tokens, without.forward.tokens);  // the network reads the same
  EXPECT_EQ(with.pair, without.pair);
  // Pieces of one comparative flip together; superlative against comparative, or a synonym, is no flip.
  EXPECT_TRUE(minimal_flip(features({"\u2581today", "\u2581is", "\u2581hot", "ter"},
                                    {"\u2581today", "\u2581is", "\u2581cold", "er"}, true),
                           1.0f));
  EXPECT_TRUE(minimal_flip(features({"\u2581is", "\u2581safer"}, {"\u2581is", "\u2581riskier"}, true), 1.0f));
  const std::vector<std::string> smallest = {"\u2581is", "\u2581the", "\u2581smallest", "\u2581box", "\u2581heavier"};
  const std::vector<std::string> larger = {"\u2581is", "\u2581the", "\u2581larger", "\u2581box", "\u2581heavier"};
  EXPECT_FALSE(minimal_flip(features(bigger, smallest, true), 1.0f));
  EXPECT_FALSE(minimal_flip(features(bigger, larger, true), 1.0f));
  EXPECT_FALSE(minimal_flip(features({"\u2581is", "\u2581never"}, {"\u2581is", "\u2581water"}, true), 1.0f));
}

// With whole words a day shift facing another of its group is a minimal
// flip that the network does not read: "today" / "tomorrow" (also spelled in
// pieces, "\u2581Tom or row"), "during" / "after"; not "today" / "today", not
// across groups, and not inside a longer word ("\u2581after wards").
TEST(AlignmentFeatures, DayShiftsAreMinimalFlipsWithWholeWords) {
  text::SurfaceSpellings spellings;
  const std::vector<std::string> vocabulary = {"<unk>",          "\u2581is",    "\u2581it",  "\u2581open",
                                               "\u2581today",  "\u2581tomorrow", "\u2581Tom", "or",
                                               "row",            "\u2581Yesterday", "\u2581during", "\u2581after",
                                               "wards",          "\u2581eat",   "\u2581now"};
  spellings.add_sentencepiece(vocabulary, 1);
  const Lexicon lexicon(Words{{"open", "closed"}}, LexiconWords::english());
  auto features = [&](const std::vector<std::string>& a, const std::vector<std::string>& b, bool whole) {
    return piece_features(a, b, lexicon, whole ? &spellings : nullptr);
  };
  const std::vector<std::string> today = {"\u2581is", "\u2581it", "\u2581open", "\u2581today"};
  const std::vector<std::string> tomorrow = {"\u2581is", "\u2581it", "\u2581open", "\u2581tomorrow"};
  const auto with = features(today, tomorrow, true), without = features(today, tomorrow, false);
  EXPECT_TRUE(minimal_flip(with, 1.0f));
  EXPECT_FALSE(minimal_flip(without, 1.0f));
  EXPECT_EQ(with.forward.tokens, without.forward.tokens);  // the network reads the same
  EXPECT_EQ(with.pair, without.pair);
  EXPECT_TRUE(minimal_flip(features({"\u2581Tom", "or", "row", "\u2581it", "\u2581is", "\u2581open"},
                                    {"\u2581Yesterday", "\u2581it", "\u2581is", "\u2581open"}, true),
                           1.0f));
  EXPECT_TRUE(minimal_flip(features({"\u2581eat", "\u2581during", "\u2581it"}, {"\u2581eat", "\u2581after", "\u2581it"},
                                    true),
                           1.0f));
  EXPECT_FALSE(minimal_flip(features(today, today, true), 1.0f));
  EXPECT_FALSE(minimal_flip(features({"\u2581eat", "\u2581during", "\u2581it"}, {"\u2581eat", "\u2581today", "\u2581it"},
                                     true),
                            1.0f));
  EXPECT_FALSE(minimal_flip(features({"\u2581eat", "\u2581during", "\u2581it"},
                                     {"\u2581eat", "\u2581after", "wards", "\u2581it"}, true),
                            1.0f));
}

// The same holds for flip_only_opposites() ("lacks" / "has", "everyone" /
// "someone"), and an extra negating adverb ("hardly", spelled "\u2581hard ly")
// is an extra negator for minimal_flip, also never a network input.
TEST(AlignmentFeatures, OutcomeWordsAndNegatingAdverbsAreMinimalFlipsWithWholeWords) {
  text::SurfaceSpellings spellings;
  const std::vector<std::string> vocabulary = {"<unk>",          "\u2581it",     "\u2581lack", "s",
                                               "\u2581has",     "\u2581water",  "\u2581she",  "\u2581could",
                                               "\u2581hard",    "ly",            "\u2581see",  "\u2581not",
                                               "\u2581everyone", "\u2581someone", "\u2581came", "\u2581barely"};
  spellings.add_sentencepiece(vocabulary, 1);
  const Lexicon lexicon(Words{{"open", "closed"}}, LexiconWords::english());
  auto features = [&](const std::vector<std::string>& a, const std::vector<std::string>& b, bool whole) {
    return piece_features(a, b, lexicon, whole ? &spellings : nullptr);
  };
  const std::vector<std::string> lacks = {"\u2581it", "\u2581lack", "s", "\u2581water"};
  const std::vector<std::string> has = {"\u2581it", "\u2581has", "\u2581water"};
  EXPECT_TRUE(minimal_flip(features(lacks, has, true), 1.0f));
  EXPECT_FALSE(minimal_flip(features(lacks, has, false), 1.0f));
  EXPECT_TRUE(minimal_flip(features({"\u2581everyone", "\u2581came"}, {"\u2581someone", "\u2581came"}, true), 1.0f));
  const std::vector<std::string> sees = {"\u2581she", "\u2581could", "\u2581see"};
  const std::vector<std::string> hardly = {"\u2581she", "\u2581could", "\u2581hard", "ly", "\u2581see"};
  const auto with = features(sees, hardly, true), without = features(sees, hardly, false);
  EXPECT_TRUE(minimal_flip(with, 1.0f));
  EXPECT_FALSE(minimal_flip(without, 1.0f));
  EXPECT_EQ(with.backward.tokens, without.backward.tokens);  // the network reads the same
  EXPECT_EQ(with.pair, without.pair);
  // Two negations of one kind or another: no flip; "hardly" / "barely" no change at all.
  EXPECT_FALSE(minimal_flip(features({"\u2581she", "\u2581could", "\u2581not", "\u2581see"}, hardly, true), 1.0f));
  EXPECT_FALSE(minimal_flip(features({"\u2581she", "\u2581could", "\u2581barely", "\u2581see"}, hardly, true), 1.0f));
}

// What a user asks a program to do against its reverse is a flip-only
// opposite too: "create" / "delete", "log in" / "log out" (the "to" / "of"
// after it read here as common words); "create" / "make" is none.
TEST(AlignmentFeatures, ProgramOperationsAndTheirReversesAreMinimalFlipsWithWholeWords) {
  text::SurfaceSpellings spellings;
  const std::vector<std::string> vocabulary = {"<unk>",         "▁how",  "▁do",     "▁i",
                                               "▁create",  "▁delete", "▁make", "▁an",
                                               "▁account", "▁log",  "▁in",     "▁out",
                                               "▁to",      "▁of"};
  spellings.add_sentencepiece(vocabulary, 1);
  const Lexicon lexicon(Words{{"open", "closed"}}, LexiconWords::english());
  auto flip = [&](const std::vector<std::string>& a, const std::vector<std::string>& b) {
    return minimal_flip(piece_features(a, b, lexicon, &spellings), 1e9f);  // every unmatched word common
  };
  const std::vector<std::string> create = {"▁how", "▁do", "▁i", "▁create", "▁an", "▁account"};
  const std::vector<std::string> remove = {"▁how", "▁do", "▁i", "▁delete", "▁an", "▁account"};
  const std::vector<std::string> make = {"▁how", "▁do", "▁i", "▁make", "▁an", "▁account"};
  EXPECT_TRUE(flip(create, remove));
  EXPECT_TRUE(flip(remove, create));
  EXPECT_FALSE(flip(create, make));
  EXPECT_TRUE(flip({"▁log", "▁in", "▁to", "▁account"}, {"▁log", "▁out", "▁of", "▁account"}));
}

// With whole words a negator that the other text holds only as a piece of a
// longer word ("\u2581not" of "\u2581not able") has no exact match: it is
// the extra negator of the pair (feature 14, pair feature 18).
TEST(AlignmentFeatures, ANegatorMetOnlyInsideALongerWordIsUnmatched) {
  text::SurfaceSpellings spellings;
  const std::vector<std::string> vocabulary = {"<unk>", "\u2581it", "\u2581was", "\u2581a", "\u2581not", "able",
                                               "\u2581success"};
  spellings.add_sentencepiece(vocabulary, 1);
  const Lexicon lexicon(Words{{"open", "closed"}}, LexiconWords::english());
  const std::vector<std::string> notable = {"\u2581it", "\u2581was", "\u2581a", "\u2581not", "able", "\u2581success"};
  const std::vector<std::string> negated = {"\u2581it", "\u2581was", "\u2581not", "\u2581a", "\u2581success"};
  const auto whole = piece_features(negated, notable, lexicon, &spellings);
  const auto pieces = piece_features(negated, notable, lexicon, nullptr);
  EXPECT_EQ(whole.forward.tokens[2 * kTokenFeatures + 2], 0.0f);  // "not" of "not a": no exact match
  EXPECT_EQ(whole.forward.flipped[2], DirectionFeatures::kFlippedNegator);
  EXPECT_GT(whole.pair[18], 0.0f);
  EXPECT_EQ(pieces.forward.tokens[2 * kTokenFeatures + 2], 1.0f);  // read in pieces, both are negators
  EXPECT_EQ(pieces.pair[18], 0.0f);
  // Where both texts hold the negator whole, it still matches.
  const auto same = piece_features(negated, negated, lexicon, &spellings);
  EXPECT_EQ(same.forward.tokens[2 * kTokenFeatures + 2], 1.0f);
  EXPECT_EQ(same.pair[18], 0.0f);
}

TEST(AlignmentVerifier, WholeWordsSurviveASaveAndLoad) {
  AlignmentConfig c;
  c.hidden = 4, c.mlp = 4, c.buckets = 16;
  auto v = AlignmentVerifier::untrained(c, small_idf(), 1, Lexicon(Words{{"enable", "disable"}}, LexiconWords::english()));
  v->mark_trained("test");
  const auto plain = temp_path("plain.valn"), whole = temp_path("whole.valn");
  v->save(plain);
  EXPECT_LT(SectionFile(plain, "VALN", 16).version(), 16u);
  v->set_whole_words(true);
  v->save(whole);
  EXPECT_EQ(SectionFile(whole, "VALN", 16).version(), 16u);
  EXPECT_FALSE(AlignmentVerifier::load(plain)->config().whole_words);
  EXPECT_TRUE(AlignmentVerifier::load(whole)->config().whole_words);
  AlignmentConfig no_lexicon = c;
  no_lexicon.inputs = {"map", "identity", "pooled"};
  auto bare = AlignmentVerifier::untrained(no_lexicon, small_idf(), 1);
  EXPECT_THROW(bare->set_whole_words(true), ConfigError);
  EXPECT_NO_THROW(bare->set_whole_words(false));
}

TEST(AlignmentVerifier, SpellingsSurviveASaveAndLoad) {
  AlignmentConfig c;
  c.hidden = 4, c.mlp = 4, c.buckets = 16;
  auto v = AlignmentVerifier::untrained(c, small_idf(), 1, Lexicon(Words{{"enable", "disable"}}, LexiconWords::english()));
  v->mark_trained("test");
  v->set_spellings({{"disable", {"\u2581dis", "able"}}, {"Disable", {"\u2581Dis", "able"}}});
  EXPECT_EQ(v->add_antonyms({{"lock", "unlock"}}), 1u);  // spellings stay when pairs are added
  ASSERT_EQ(v->lexicon().spellings().size(), 2u);
  const auto path = temp_path("s.valn");
  v->save(path);
  EXPECT_EQ(SectionFile(path, "VALN", 8).version(), 8u);
  auto w = AlignmentVerifier::load(path);
  EXPECT_EQ(w->lexicon().spellings(), v->lexicon().spellings());
  EXPECT_TRUE(w->lexicon().starts_spelling(token_identity("\u2581Dis")));
  // A LEXS row with one piece, or an empty piece, names its line.
  for (const std::string lines : {"disable\t\u2581dis able\nunlock\t\u2581unlock\n", "disable\t\u2581dis able\nx\ta  b\n"})
    expect_bad_word_list(path, 8, {"CONF", "IDFT", "LEXA", "LEXW", "PNAM", "PDAT"}, "LEXS", lines);
  AlignmentConfig no_lexicon = c;
  no_lexicon.inputs = {"map", "identity", "pooled"};
  auto bare = AlignmentVerifier::untrained(no_lexicon, small_idf(), 1);
  EXPECT_THROW(bare->set_spellings({{"disable", {"\u2581dis", "able"}}}), ConfigError);
}
