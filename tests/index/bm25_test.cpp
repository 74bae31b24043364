#include "index/bm25.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"

using namespace verity;
using namespace verity::index;

namespace {

// Keeps the build progress lines out of the test log.
class QuietEnvironment : public ::testing::Environment {
  void SetUp() override { set_quiet(true); }
};
const auto* const kQuiet = ::testing::AddGlobalTestEnvironment(new QuietEnvironment);

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("verity_bm25_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// Toy corpus: N = 4, lengths 3, 2, 4, 1 -> avgdl = 2.5.
const std::vector<std::string> kIds{"d0", "d1", "d2", "d3"};
const std::vector<std::string> kTexts{"apple banana apple", "banana cherry",
                                      "cherry cherry cherry date", "elderberry"};

Bm25Index toy(Bm25Params params = {}, int threads = 1) {
  return Bm25Index::build(kIds, kTexts, text::Analyzer::from_spec("standard"), params, threads);
}

// Seeded random corpus over a small vocabulary (lots of shared terms and ties).
struct RandomCorpus {
  std::vector<std::string> ids, texts, queries;
};
RandomCorpus random_corpus(size_t docs, size_t queries, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> vocab;
  for (int i = 0; i < 60; ++i) vocab.push_back("w" + std::to_string(i * 7919 % 1000));
  std::uniform_int_distribution<size_t> word(0, vocab.size() - 1), len(0, 30), qlen(1, 6);
  RandomCorpus c;
  auto sentence = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += vocab[word(rng) % (1 + word(rng))] + " ";
    return s;
  };
  for (size_t d = 0; d < docs; ++d) {
    c.ids.push_back("doc-" + std::to_string(d));
    c.texts.push_back(sentence(len(rng)));
  }
  for (size_t q = 0; q < queries; ++q) c.queries.push_back(sentence(qlen(rng)));
  return c;
}

void expect_same_hits(const std::vector<Hit>& a, const std::vector<Hit>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].doc, b[i].doc) << "rank " << i;
    EXPECT_EQ(std::memcmp(&a[i].score, &b[i].score, sizeof(float)), 0) << "rank " << i;
  }
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string load_error(const std::string& path) {
  try {
    Bm25Index::load(path);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Bm25, Statistics) {
  auto idx = toy();
  EXPECT_EQ(idx.num_docs(), 4u);
  EXPECT_EQ(idx.num_terms(), 5u);
  EXPECT_EQ(idx.num_postings(), 7u);
  EXPECT_EQ(idx.total_length(), 10u);
  EXPECT_DOUBLE_EQ(idx.avgdl(), 2.5);
  EXPECT_EQ(idx.df("apple"), 1u);
  EXPECT_EQ(idx.df("banana"), 2u);
  EXPECT_EQ(idx.df("cherry"), 2u);
  EXPECT_EQ(idx.df("missing"), 0u);
  EXPECT_NEAR(idx.idf("apple"), 1.203973, 1e-6);  // ln(1 + 3.5/1.5)
  EXPECT_NEAR(idx.idf("banana"), 0.693147, 1e-6);  // ln 2
  EXPECT_NEAR(idx.idf("missing"), std::log(1 + 4.5 / 0.5), 1e-12);
  EXPECT_EQ(idx.doc_length(2), 4u);
  EXPECT_EQ(idx.doc_id(3), "d3");
  EXPECT_THROW(idx.doc_id(4), std::out_of_range);
  EXPECT_EQ(idx.query_terms("Cherry, DATE!"), (std::vector<std::string>{"cherry", "date"}));
  auto cherry = idx.term_id("cherry");
  ASSERT_TRUE(cherry.has_value());
  EXPECT_EQ(idx.term(*cherry), "cherry");
  auto p = idx.postings(*cherry);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].doc, 1u);
  EXPECT_EQ(p[0].tf, 1u);
  EXPECT_EQ(p[1].doc, 2u);
  EXPECT_EQ(p[1].tf, 3u);
  for (uint32_t t = 1; t < idx.num_terms(); ++t) EXPECT_LT(idx.term(t - 1), idx.term(t));
}

TEST(Bm25, ScoresMatchHandComputation) {
  auto idx = toy();
  // d0: apple tf=2, dl=3: 1.203973 * 2*1.9 / (2 + 0.9*(0.6 + 0.4*3/2.5)) = 1.539400
  //     banana tf=1:      0.693147 * 1.9   / (1 + 0.972)                  = 0.667840
  // d1: banana tf=1, dl=2: 0.693147 * 1.9 / (1 + 0.9*(0.6 + 0.4*2/2.5))  = 0.720448
  auto hits = idx.search("apple banana", 10);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].doc, 0u);
  EXPECT_NEAR(hits[0].score, 2.207240, 2e-5);
  EXPECT_EQ(hits[1].doc, 1u);
  EXPECT_NEAR(hits[1].score, 0.720448, 2e-5);

  // Overriding k1=1.2, b=0.75 at search time equals building with them.
  Bm25Params p{1.2, 0.75};
  auto over = idx.search("apple banana", 10, p);
  ASSERT_EQ(over.size(), 2u);
  EXPECT_NEAR(over[0].score, 2.208026, 2e-5);
  EXPECT_NEAR(over[1].score, 0.754913, 2e-5);
  expect_same_hits(over, toy(p).search("apple banana", 10));

  // A repeated query term counts twice (Lucene BooleanQuery semantics).
  auto twice = idx.search("banana banana", 10);
  ASSERT_EQ(twice.size(), 2u);
  EXPECT_EQ(twice[0].doc, 1u);
  EXPECT_NEAR(twice[0].score, 2 * 0.720448, 4e-5);
}

TEST(Bm25, TieBreakingKAndEmptyQueries) {
  std::vector<std::string> ids{"a", "b", "c", "d", "e"};
  std::vector<std::string> texts{"x other", "y", "x other", "x other", "x"};
  auto idx = Bm25Index::build(ids, texts, text::Analyzer::from_spec("standard"));
  auto hits = idx.search("x", 10);  // d4 is shortest, then three equal docs
  ASSERT_EQ(hits.size(), 4u);
  EXPECT_EQ(hits[0].doc, 4u);
  EXPECT_EQ(hits[1].doc, 0u);
  EXPECT_EQ(hits[2].doc, 2u);
  EXPECT_EQ(hits[3].doc, 3u);
  EXPECT_EQ(hits[1].score, hits[3].score);
  auto top2 = idx.search("x", 2);  // the partial-selection path keeps the same order
  ASSERT_EQ(top2.size(), 2u);
  EXPECT_EQ(top2[0].doc, 4u);
  EXPECT_EQ(top2[1].doc, 0u);
  EXPECT_EQ(idx.search("x", 0).size(), 0u);
  EXPECT_TRUE(idx.search("", 10).empty());
  EXPECT_TRUE(idx.search("?!", 10).empty());
  EXPECT_TRUE(idx.search("unknown words", 10).empty());
}

TEST(Bm25, StopwordOnlyQueryIsEmpty) {
  auto idx = Bm25Index::build(kIds, kTexts, text::Analyzer());
  EXPECT_TRUE(idx.search("the of and", 10).empty());
  EXPECT_EQ(idx.analyzer().spec(), text::Analyzer().spec());
}

TEST(Bm25, BatchEqualsSingleAndBuildIgnoresThreads) {
  auto c = random_corpus(700, 120, 42);
  text::Analyzer analyzer = text::Analyzer::from_spec("standard");
  auto one = Bm25Index::build(c.ids, c.texts, analyzer, {}, 1);
  auto three = Bm25Index::build(c.ids, c.texts, analyzer, {}, 3);
  auto p1 = temp_path("t1.vbm"), p3 = temp_path("t3.vbm");
  one.save(p1);
  three.save(p3);
  EXPECT_EQ(read_bytes(p1), read_bytes(p3));
  std::filesystem::remove(p1);
  std::filesystem::remove(p3);

  for (int threads : {1, 2, 4}) {
    auto batch = one.search_batch(c.queries, 15, threads);
    ASSERT_EQ(batch.size(), c.queries.size());
    for (size_t q = 0; q < c.queries.size(); ++q) expect_same_hits(batch[q], one.search(c.queries[q], 15));
  }
  size_t nonempty = 0;
  for (const auto& q : c.queries) nonempty += !one.search(q, 15).empty();
  EXPECT_GT(nonempty, c.queries.size() / 2);  // the comparison above is not vacuous
}

TEST(Bm25, MatchesBruteForceScoring) {
  auto c = random_corpus(200, 40, 7);
  auto idx = Bm25Index::build(c.ids, c.texts, text::Analyzer::from_spec("standard"));
  // Oracle: score every document straight from the analyzed texts, in double.
  std::vector<std::vector<std::string>> docs;
  for (const auto& t : c.texts) docs.push_back(idx.query_terms(t));
  for (const auto& q : c.queries) {
    auto terms = idx.query_terms(q);
    std::vector<double> expected(docs.size(), 0.0);
    for (size_t d = 0; d < docs.size(); ++d)
      for (const auto& t : terms) {
        double tf = double(std::count(docs[d].begin(), docs[d].end(), t));
        if (tf == 0) continue;
        double norm = 0.9 * (1 - 0.4 + 0.4 * double(docs[d].size()) / idx.avgdl());
        expected[d] += idx.idf(t) * tf * 1.9 / (tf + norm);
      }
    auto hits = idx.search(q, docs.size());
    size_t matching = std::count_if(expected.begin(), expected.end(), [](double s) { return s > 0; });
    ASSERT_EQ(hits.size(), matching) << q;
    for (const auto& h : hits) EXPECT_NEAR(h.score, expected[h.doc], 1e-4 * expected[h.doc]);
    for (size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].score, hits[i].score);
  }
}

TEST(Bm25, BuildErrors) {
  auto a = text::Analyzer::from_spec("standard");
  std::vector<std::string> two{"x", "y"}, one{"x"};
  EXPECT_THROW(Bm25Index::build(two, one, a), ConfigError);
  std::vector<std::string> dup{"x", "x"};
  EXPECT_THROW(Bm25Index::build(dup, two, a), ConfigError);
  std::vector<std::string> empty_id{"x", ""};
  EXPECT_THROW(Bm25Index::build(empty_id, two, a), ConfigError);
  EXPECT_THROW(Bm25Index::build(two, two, a, Bm25Params{-1, 0.4}), ConfigError);
  EXPECT_THROW(Bm25Index::build(two, two, a, Bm25Params{0.9, 1.5}), ConfigError);
  std::vector<std::string> bad{"fine", "bro\xC3ken"};
  try {
    Bm25Index::build(two, bad, a, {}, 2);
    FAIL() << "invalid UTF-8 accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("document 'y' (#1)"), std::string::npos) << e.what();
  }
  auto idx = toy();
  EXPECT_THROW(idx.search("apple", 10, Bm25Params{0.9, -0.1}), ConfigError);
}

TEST(Bm25, EmptyCorpus) {
  std::vector<std::string> none;
  auto idx = Bm25Index::build(none, none, text::Analyzer());
  EXPECT_EQ(idx.num_docs(), 0u);
  EXPECT_TRUE(idx.search("anything", 10).empty());
  auto path = temp_path("empty.vbm");
  idx.save(path);
  EXPECT_EQ(Bm25Index::load(path).num_docs(), 0u);
  std::filesystem::remove(path);
}

TEST(Bm25, SaveLoadRoundTrip) {
  auto c = random_corpus(300, 50, 3);
  auto built = Bm25Index::build(c.ids, c.texts, text::Analyzer::from_spec("english:stem=english"),
                                Bm25Params{1.1, 0.6}, 2);
  auto path = temp_path("roundtrip.vbm");
  built.save(path);
  auto loaded = Bm25Index::load(path);
  EXPECT_EQ(loaded.num_docs(), built.num_docs());
  EXPECT_EQ(loaded.num_terms(), built.num_terms());
  EXPECT_EQ(loaded.num_postings(), built.num_postings());
  EXPECT_EQ(loaded.avgdl(), built.avgdl());
  EXPECT_EQ(loaded.params().k1, 1.1);
  EXPECT_EQ(loaded.params().b, 0.6);
  EXPECT_EQ(loaded.analyzer().spec(), built.analyzer().spec());
  for (uint32_t d = 0; d < built.num_docs(); ++d) {
    EXPECT_EQ(loaded.doc_id(d), built.doc_id(d));
    EXPECT_EQ(loaded.doc_length(d), built.doc_length(d));
  }
  for (uint32_t t = 0; t < built.num_terms(); ++t) {
    ASSERT_EQ(loaded.term(t), built.term(t));
    EXPECT_EQ(loaded.df(built.term(t)), built.df(built.term(t)));
  }
  for (const auto& q : c.queries) expect_same_hits(loaded.search(q, 20), built.search(q, 20));
  // Moving keeps the mapping alive.
  Bm25Index moved = std::move(loaded);
  EXPECT_EQ(moved.doc_id(0), "doc-0");
  std::filesystem::remove(path);
}

TEST(Bm25, DamagedFilesAreFormatErrors) {
  auto path = temp_path("damaged.vbm");
  auto idx = toy();
  idx.save(path);
  const std::string good = read_bytes(path);

  for (size_t cut : {good.size() - 1, good.size() - 20, good.size() / 2, size_t(12)}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(good.data(), std::streamsize(cut));
    auto msg = load_error(path);
    EXPECT_NE(msg.find(path), std::string::npos) << "cut " << cut << ": " << msg;
  }

  std::string corrupt = good;
  corrupt[corrupt.size() - 100] ^= 0x20;  // inside the last data section
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(corrupt.data(), std::streamsize(corrupt.size()));
  EXPECT_NE(load_error(path).find("checksum mismatch"), std::string::npos) << load_error(path);

  std::string magic = good;
  std::memcpy(magic.data(), "VBM9", 4);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(magic.data(), std::streamsize(magic.size()));
  EXPECT_NE(load_error(path).find("bad magic"), std::string::npos);

  std::string version = good;
  version[4] = 2;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(version.data(), std::streamsize(version.size()));
  EXPECT_NE(load_error(path).find("unsupported format version 2"), std::string::npos);
  std::filesystem::remove(path);
}

// Files with valid checksums but inconsistent contents (a buggy writer).
TEST(Bm25, InconsistentSectionsAreFormatErrors) {
  auto src = temp_path("consistent.vbm"), path = temp_path("inconsistent.vbm");
  toy().save(src);
  const std::vector<std::string> tags{"PARM", "ANLZ", "DIDO", "DIDS", "DLEN",
                                      "TRMO", "TRMS", "POFF", "POST"};
  // Rewrites src with one section replaced.
  auto rewrite = [&](const std::string& tag, std::string payload) {
    SectionFile in(src, "VBM2", 1);
    SectionWriter out(path, "VBM2", 1);
    for (const auto& t : tags) {
      auto s = in.section(t);
      if (t == tag) out.add(t, payload.data(), payload.size());
      else out.add(t, s.data(), s.size());
    }
    out.commit();
  };
  auto section = [&](const std::string& tag) {
    SectionFile in(src, "VBM2", 1);
    auto s = in.section(tag);
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  };

  std::string post = section("POST");
  uint32_t bad_doc = 9;
  std::memcpy(post.data(), &bad_doc, 4);
  rewrite("POST", post);
  EXPECT_NE(load_error(path).find("posting 0 of term 'apple' is invalid"), std::string::npos)
      << load_error(path);

  std::string dlen = section("DLEN");
  rewrite("DLEN", dlen.substr(4));
  EXPECT_NE(load_error(path).find("'DLEN' has 3 lengths"), std::string::npos) << load_error(path);

  std::string trms = section("TRMS");
  std::swap(trms[0], trms[5]);  // "apple" + "banana" -> "bpplea" + "anana": unsorted
  rewrite("TRMS", trms);
  EXPECT_NE(load_error(path).find("not sorted"), std::string::npos) << load_error(path);

  std::string anlz = section("ANLZ");
  anlz.replace(4, 8, "klingon:");
  rewrite("ANLZ", anlz);
  EXPECT_NE(load_error(path).find("stored analyzer spec"), std::string::npos) << load_error(path);

  std::string dlen_changed = section("DLEN");
  dlen_changed[0] = 7;
  rewrite("DLEN", dlen_changed);
  EXPECT_NE(load_error(path).find("lengths sum to"), std::string::npos) << load_error(path);

  std::filesystem::remove(src);
  std::filesystem::remove(path);
}
