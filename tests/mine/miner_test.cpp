#include "mine/miner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../cli/run_verity.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "data/beir.hpp"
#include "index/bm25.hpp"
#include "text/analyzer.hpp"

namespace fs = std::filesystem;
using namespace verity;
using mine::Candidate;
using mine::MineOptions;
using mine::RemovalCounts;

namespace {

const std::string kTiny = std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/tiny_beir";
// 8 short documents with overlapping words, so BM25 retrieves non-relevant ones.
const std::string kMini = std::string(VERITY_SOURCE_DIR) + "/tests/mine/fixtures/mini_beir";

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("verity_mine_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::string str(const std::string& name = "") const { return (path / name).string(); }
};

std::vector<Candidate> scored(std::vector<double> scores) {
  std::vector<Candidate> out;
  for (size_t i = 0; i < scores.size(); ++i) {
    Candidate c;
    c.doc = int64_t(i);
    c.rank = int64_t(i + 1);
    c.score = scores[i];
    out.push_back(c);
  }
  return out;
}

std::vector<double> scores_of(const std::vector<Candidate>& v) {
  std::vector<double> out;
  for (const auto& c : v) out.push_back(c.score);
  return out;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

TEST(MineFilters, LabelledPositivesAndRangeWindow) {
  MineOptions o;
  o.range_min = 2;
  o.range_max = 4;
  RemovalCounts removed;
  // docs 0..5 at ranks 1..6; doc 2 is labelled relevant.
  auto kept = mine::filter_candidates(scored({9, 8, 7, 6, 5, 4}), {2}, {}, 10.0, o, removed);
  std::vector<int64_t> docs;
  for (const auto& c : kept) docs.push_back(c.doc);
  EXPECT_EQ(docs, (std::vector<int64_t>{1, 3}));  // rank 1 and ranks 5, 6 out of the window
  EXPECT_EQ(removed.labelled_positive, 1u);
  EXPECT_EQ(removed.range, 3u);
}

TEST(MineFilters, LabelledTextCandidatesAreRemoved) {
  MineOptions o;
  RemovalCounts removed;
  Candidate a, b;
  a.text = "the positive passage";
  b.text = "another passage";
  auto kept = mine::filter_candidates({a, b}, {}, {"the positive passage"}, 1.0, o, removed);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].text, "another passage");
  EXPECT_EQ(removed.labelled_positive, 1u);
}

TEST(MineFilters, AbsoluteMarginKeepsScoresAtMostPositiveMinusMargin) {
  MineOptions o;
  o.absolute_margin = 3.0;  // positive 10: keep score <= 7
  RemovalCounts removed;
  auto kept = mine::filter_candidates(scored({10, 8, 7.0001, 7, 6.5, -1}), {}, {}, 10.0, o, removed);
  EXPECT_EQ(scores_of(kept), (std::vector<double>{7, 6.5, -1}));
  EXPECT_EQ(removed.absolute_margin, 3u);
  EXPECT_EQ(removed.relative_margin + removed.max_score + removed.range, 0u);
}

TEST(MineFilters, RelativeMarginKeepsScoresAtMostPositiveTimesOneMinusMargin) {
  MineOptions o;
  o.relative_margin = 0.25;  // positive 8: keep score <= 6
  RemovalCounts removed;
  auto kept = mine::filter_candidates(scored({7, 6.01, 6, 2}), {}, {}, 8.0, o, removed);
  EXPECT_EQ(scores_of(kept), (std::vector<double>{6, 2}));
  EXPECT_EQ(removed.relative_margin, 2u);
}

TEST(MineFilters, MaxScoreAndFilterOrder) {
  MineOptions o;
  o.absolute_margin = 1.0;  // positive 10: keep <= 9
  o.max_score = 5.0;
  RemovalCounts removed;
  auto kept = mine::filter_candidates(scored({9.5, 9, 6, 5, 1}), {}, {}, 10.0, o, removed);
  EXPECT_EQ(scores_of(kept), (std::vector<double>{5, 1}));
  EXPECT_EQ(removed.absolute_margin, 1u);  // 9.5: the first failing filter counts it
  EXPECT_EQ(removed.max_score, 2u);        // 9 and 6
}

TEST(MineSampling, TopIsRankOrderRandomIsSeededPermutation) {
  auto top = mine::sampling_order(6, "top", 7, "q\td");
  EXPECT_EQ(top, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
  auto a = mine::sampling_order(20, "random", 1, "q1\td1");
  auto b = mine::sampling_order(20, "random", 1, "q1\td1");
  auto c = mine::sampling_order(20, "random", 2, "q1\td1");
  auto d = mine::sampling_order(20, "random", 1, "q2\td1");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
}

TEST(MineScores, SummaryStatistics) {
  auto s = mine::summarize_scores({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(1.25));
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.q50, 2.5);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_EQ(mine::summarize_scores({}).count, 0u);
}

TEST(MineScores, Bm25TextScoreEqualsIndexScoreForCorpusDocuments) {
  auto ds = data::load_beir(kMini, "train");
  std::vector<std::string> ids, texts;
  for (size_t i = 0; i < ds.corpus.size(); ++i) {
    ids.push_back(ds.corpus.docs[i].id);
    texts.push_back(ds.corpus.indexed_text(i));
  }
  auto idx = index::Bm25Index::build(ids, texts, text::Analyzer::from_spec("english"));
  for (const auto& q : ds.queries) {
    auto terms = idx.query_terms(q.text);
    auto hits = idx.search(q.text, idx.num_docs());
    for (const auto& h : hits)
      EXPECT_NEAR(mine::bm25_text_score(idx, terms, texts[h.doc]), h.score, 1e-4) << q.id << " " << h.doc;
    // A document sharing no term scores 0 and is not retrieved.
    for (size_t d = 0; d < texts.size(); ++d) {
      bool hit = std::any_of(hits.begin(), hits.end(), [&](auto& h) { return h.doc == d; });
      if (!hit) {
        EXPECT_EQ(mine::bm25_text_score(idx, terms, texts[d]), 0.0);
      }
    }
  }
}

TEST(MineBm25, NegativesAreTopNonRelevantBm25DocumentsInTheWindow) {
  TempDir tmp;
  auto ds = data::load_beir(kMini, "train");
  MineOptions o;
  o.cache_dir = tmp.str("cache");
  o.num_negatives = 2;
  auto r = mine::mine(ds, o);
  EXPECT_EQ(r.queries, 3u);  // q4 has only a grade-0 row
  EXPECT_EQ(r.pairs, 4u);     // q1-d1, q2-d2, q2-d5, q3-d8
  EXPECT_EQ(r.triples.size(), 2u + 2u + 2u + 1u);
  ASSERT_EQ(r.positive_scores.size(), 4u);
  EXPECT_EQ(r.negative_scores.size(), r.triples.size());

  // Oracle: the BM25 ranking of each query with the relevant documents removed.
  auto idx = index::Bm25Index::load(r.index_dir + "/bm25.vbm");
  std::map<std::string, std::vector<std::string>> expected;  // query text -> negatives, in order
  size_t expected_labelled = 0;
  for (const auto& q : ds.queries) {
    auto it = ds.qrels.find(q.id);
    std::set<std::string> relevant;
    for (const auto& [d, g] : it->second)
      if (g > 0) relevant.insert(d);
    if (relevant.empty()) continue;
    std::vector<std::string> negs;
    size_t labelled = 0;
    for (const auto& h : idx.search(q.text, 100)) {
      if (relevant.count(std::string(idx.doc_id(h.doc)))) {
        ++labelled;
        continue;
      }
      if (negs.size() < 2) negs.push_back(ds.corpus.indexed_text(h.doc));
    }
    expected_labelled += labelled * relevant.size();
    expected[q.text] = negs;
  }
  EXPECT_EQ(r.removed.labelled_positive, expected_labelled);
  std::map<std::string, std::vector<std::string>> by_pair;
  for (const auto& t : r.triples) {
    EXPECT_EQ(t.source, "bm25");
    ASSERT_TRUE(t.rank && t.score);
    EXPECT_GE(*t.rank, 1);
    EXPECT_NE(t.negative, t.positive);
    by_pair[t.query + "\n" + t.positive].push_back(t.negative);
  }
  for (const auto& [key, negs] : by_pair) {
    auto query = key.substr(0, key.find('\n'));
    EXPECT_EQ(negs, expected[query]) << query;
  }
}

TEST(MineBm25, RangeWindowAndMarginsOnRealRanks) {
  TempDir tmp;
  auto ds = data::load_beir(kMini, "train");
  MineOptions o;
  o.cache_dir = tmp.str("cache");
  o.range_min = 2;
  o.range_max = 3;
  o.num_negatives = 5;
  auto r = mine::mine(ds, o);
  for (const auto& t : r.triples) {
    EXPECT_GE(*t.rank, 2);
    EXPECT_LE(*t.rank, 3);
  }
  o.range_min = 1;
  o.range_max = 100;
  o.max_score = 0.0;  // every retrieved document scores > 0
  auto none = mine::mine(ds, o);
  EXPECT_TRUE(none.triples.empty());
  EXPECT_EQ(none.pairs_without_negative, none.pairs);
  EXPECT_GT(none.removed.max_score, 0u);
}

TEST(MineBm25, RandomSamplingIsDeterministicInTheSeed) {
  TempDir tmp;
  auto ds = data::load_beir(kMini, "train");
  MineOptions o;
  o.cache_dir = tmp.str("cache");
  o.num_negatives = 1;
  o.sampling = "random";
  auto text = [](const mine::MineResult& r) {
    std::string s;
    for (const auto& t : r.triples) s += t.negative + "|";
    return s;
  };
  auto a = mine::mine(ds, o), b = mine::mine(ds, o);
  EXPECT_EQ(text(a), text(b));
  std::set<std::string> variants;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    o.seed = seed;
    variants.insert(text(mine::mine(ds, o)));
  }
  EXPECT_GT(variants.size(), 1u);  // q1 has 5 non-relevant matches: the seed matters
}

TEST(MineFile, NegativesPassThroughAndErrorsNameFileAndLine) {
  TempDir tmp;
  auto ds = data::load_beir(kTiny, "test");
  MineOptions o;
  o.cache_dir = tmp.str("cache");
  o.num_negatives = 10;
  const std::string good = tmp.str("llm.jsonl");
  write_text(good,
             "{\"query\": \"q2\", \"negative\": \"Measles vaccination increases mortality.\", \"type\": \"llm\"}\n"
             "{\"query\": \"where did the cat sit\", \"negative\": \"The dog sat on the mat.\"}\n"
             "{\"query\": \"q1\", \"negative\": \"Cats The cat sat on the warm mat near the window.\"}\n"
             "{\"query\": \"free text query\", \"positive\": \"p\", \"negative\": \"n\"}\n");
  o.source = "file:" + good;
  auto r = mine::mine(ds, o);
  // q2: 1 pair; q1 (by text): 2 pairs (d1, d5); the d1 text line is labelled
  // positive for both q1 pairs; the free-text line is its own pair.
  EXPECT_EQ(r.removed.labelled_positive, 2u);
  ASSERT_EQ(r.triples.size(), 4u);
  EXPECT_EQ(r.pairs, 4u);
  for (const auto& t : r.triples) EXPECT_EQ(t.source, "llm.jsonl");
  size_t llm = 0;
  for (const auto& t : r.triples) llm += t.type == "llm" && t.negative == "Measles vaccination increases mortality.";
  EXPECT_EQ(llm, 1u);

  auto expect_error = [&](const std::string& content, const std::string& needle) {
    const std::string bad = tmp.str("bad.jsonl");
    write_text(bad, content);
    o.source = "file:" + bad;
    try {
      mine::mine(ds, o);
      ADD_FAILURE() << "no error for " << content;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const std::string bad = tmp.str("bad.jsonl");
  expect_error("{\"query\": \"q1\", \"negative\": \"x\"}\n{\"query\": \"nope\", \"negative\": \"x\"}\n",
               bad + ":2: field \"query\"");
  expect_error("{\"query\": \"q1\"}\n", bad + ":1: missing field \"negative\"");
  expect_error("{\"query\": \"q1\", \"negative\": \"x\"}\n{not json\n", bad + ":2: invalid JSON");
  expect_error("{\"query\": \"q1\", \"negative\": 3}\n", bad + ":1: field \"negative\"");
  expect_error("{\"query\": \"q4\", \"negative\": \"x\"}\n", bad + ":1: query 'q4' has no relevant document");
}

TEST(MineGenerated, NegativesAreEditedPositivesWithTheirType) {
  TempDir tmp;
  const std::string dir = tmp.str("gen");
  fs::create_directories(dir + "/qrels");
  write_text(dir + "/corpus.jsonl",
             "{\"_id\": \"d1\", \"title\": \"\", \"text\": \"The committee approved the new budget in March. "
             "The cat is sitting on the mat.\"}\n"
             "{\"_id\": \"d2\", \"title\": \"\", \"text\": \"Rivers flood the valley every spring.\"}\n");
  write_text(dir + "/queries.jsonl", "{\"_id\": \"q1\", \"text\": \"who approved the budget\"}\n");
  write_text(dir + "/qrels/train.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n");
  auto ds = data::load_beir(dir, "train");
  MineOptions o;
  o.cache_dir = tmp.str("cache");
  o.source = "generated";
  o.generators = {"negation"};
  o.num_negatives = 3;
  auto r = mine::mine(ds, o);
  ASSERT_EQ(r.triples.size(), 1u);
  const auto& t = r.triples[0];
  EXPECT_EQ(t.type, "negation");
  EXPECT_EQ(t.source, "generated");
  EXPECT_FALSE(t.rank.has_value());
  EXPECT_NE(t.negative, t.positive);
  // Exactly one of the two sentences was edited; the other is kept verbatim.
  bool first_kept = t.negative.find("The committee approved the new budget in March.") != std::string::npos;
  bool second_kept = t.negative.find("The cat is sitting on the mat.") != std::string::npos;
  EXPECT_NE(first_kept, second_kept);
}

TEST(MineFalseNegativeFilter, ThresholdDecidesWhatIsDropped) {
  if (!fs::exists(std::string(VERITY_SOURCE_DIR) + "/models/use-lite")) GTEST_SKIP() << "use-lite not converted";
  TempDir tmp;
  auto ds = data::load_beir(kMini, "train");
  MineOptions o;
  o.cache_dir = tmp.str("cache");
  o.num_negatives = 2;
  auto plain = mine::mine(ds, o);
  o.filter_verifier = "f1";
  o.filter_threshold = 1e9;  // nothing reaches it
  auto loose = mine::mine(ds, o);
  EXPECT_EQ(loose.triples.size(), plain.triples.size());
  EXPECT_EQ(loose.removed.false_negative_filter, 0u);
  o.filter_threshold = -1e9;  // everything reaches it
  auto strict = mine::mine(ds, o);
  EXPECT_TRUE(strict.triples.empty());
  EXPECT_EQ(strict.removed.false_negative_filter, plain.triples.size() + plain.unsampled);
  EXPECT_EQ(strict.filter_positive_scores.size(), strict.pairs);
  EXPECT_EQ(strict.filter_candidate_scores.size(), strict.removed.false_negative_filter);
}

TEST(MineCli, JsonReportAndOutputFile) {
  TempDir tmp;
  const std::string out = tmp.str("mined.jsonl");
  auto res = verity_test::run("mine --dataset " + kMini + " --split train --source bm25 --num-negatives 2 --cache-dir " +
                              tmp.str("cache") + " --out " + out + " --json");
  ASSERT_EQ(res.status, 0) << res.err;
  auto j = nlohmann::json::parse(res.out);
  for (const char* key : {"triples", "queries", "removed", "scores", "source"}) EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key :
       {"labelled_positive", "range", "absolute_margin", "relative_margin", "max_score", "false_negative_filter"})
    EXPECT_TRUE(j["removed"].contains(key)) << key;
  for (const char* side : {"positive", "negative"})
    for (const char* key : {"count", "mean", "std", "min", "q50", "max"})
      EXPECT_TRUE(j["scores"][side].contains(key)) << side << "." << key;
  EXPECT_EQ(j["source"], "bm25");
  EXPECT_EQ(j["queries"], 3);
  auto file = data::read_triples(out);
  EXPECT_EQ(file.triples.size(), j["triples"].get<size_t>());
  EXPECT_EQ(j["scores"]["negative"]["count"].get<size_t>(), file.triples.size());
  EXPECT_NE(res.err.find("positive"), std::string::npos);  // the statistics table on stderr

  auto bad = verity_test::run("mine --dataset " + kMini + " --split train --source nope --out " + out);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--source"), std::string::npos) << bad.err;
}
