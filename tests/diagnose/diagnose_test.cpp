#include "diagnose/diagnose.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/crc32c.hpp"
#include "core/io.hpp"

namespace verity::diagnose {
namespace {
namespace fs = std::filesystem;

// Deterministic stand-in for a frozen encoder: hashed bag of words, dim 16.
class HashEncoder : public encode::Encoder {
 public:
  std::string spec() const override { return "test-hash"; }
  size_t dim() const override { return 16; }
  encode::Encoded encode(std::span<const std::string> texts, const encode::EncodeOptions&) const override {
    ++calls;
    encode::Encoded e;
    e.batch = texts.size();
    e.dim = 16;
    e.pooled.assign(e.batch * 16, 0.0f);
    for (size_t b = 0; b < texts.size(); ++b) {
      std::string word;
      auto flush = [&] {
        if (word.empty()) return;
        uint64_t h = fnv1a64(word.data(), word.size());
        e.pooled[b * 16 + h % 16] += 1.0f;
        e.pooled[b * 16 + (h >> 8) % 16] += 0.5f;
        word.clear();
      };
      for (char c : texts[b]) c == ' ' ? flush() : word.push_back(c);
      flush();
      e.pooled[b * 16 + 15] += 0.25f;  // no zero vectors
    }
    return e;
  }
  mutable size_t calls = 0;
};

data::Triple triple(std::string q, std::string p, std::string n) {
  data::Triple t;
  t.query = std::move(q);
  t.positive = std::move(p);
  t.negative = std::move(n);
  return t;
}

const std::vector<std::string> kWords = {"cell", "gene", "protein", "tumor", "virus", "drug", "mouse",
                                         "brain", "heart", "blood", "liver", "lung", "bone", "skin"};

// A source whose negatives share `overlap` of the query's words.
SourceInput make_source(const std::string& name, size_t n, size_t overlap, uint64_t seed) {
  SourceInput s;
  s.name = name;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, kWords.size() - 1);
  for (size_t i = 0; i < n; ++i) {
    std::string q, p, neg;
    for (size_t k = 0; k < 4; ++k) {
      std::string w = kWords[pick(rng)];
      q += w + " ";
      p += w + " ";
      neg += (k < overlap ? w : kWords[pick(rng)]) + " ";
    }
    p += kWords[pick(rng)];
    neg += kWords[pick(rng)];
    s.triples.push_back(triple(q, p, neg));
  }
  return s;
}

struct Fixture {
  IdfTable idf;
  text::Analyzer analyzer;
  HashEncoder encoder;
  std::vector<std::string> corpus;
  Fixture() {
    std::mt19937_64 rng(3);
    std::uniform_int_distribution<size_t> pick(0, kWords.size() - 1);
    for (int i = 0; i < 40; ++i) corpus.push_back(kWords[pick(rng)] + " " + kWords[pick(rng)]);
    idf = IdfTable::build(corpus, analyzer);
  }
  // Three distinct sources, or (alike) three draws from one generator.
  std::vector<SourceInput> sources(bool alike) {
    if (alike)
      return {make_source("lexical", 60, 1, 1), make_source("mixed", 60, 1, 2), make_source("semantic", 60, 1, 3)};
    return {make_source("lexical", 60, 3, 1), make_source("mixed", 60, 2, 2), make_source("semantic", 60, 0, 3)};
  }
  Diagnoser run(DiagnoseOptions opt = {}, bool alike = false) {
    Diagnoser d(opt);
    LexicalScorer lex(idf, analyzer);
    EmbeddingCache cache(encoder, "");
    d.run(sources(alike), lex, cache, corpus);
    return d;
  }
};

TransferTable transfer3() { return {{"lexical", "mixed", "semantic"}, {0.1, 0.2, 0.3}}; }

TEST(Diagnoser, SingleTripleMatchesTheFormulas) {
  Fixture f;
  DiagnoseOptions opt;
  opt.mnrl_batch = 1;
  Diagnoser d(opt);
  LexicalScorer lex(f.idf, f.analyzer);
  EmbeddingCache cache(f.encoder, "");
  SourceInput s{"one", {triple("cell gene protein", "cell gene protein tumor", "cell virus drug")}, 0, {}};
  d.run({s}, lex, cache, f.corpus);
  const auto& st = d.reports()[0].stats;
  ASSERT_EQ(st.count, 1u);
  double qp = st.cos_qp.mean, qn = st.cos_qn.mean;
  EXPECT_NEAR(st.margin.mean, qp - qn, 1e-12);
  EXPECT_NEAR(st.rho.mean, 1 / (1 + std::exp(-(qp - qn) / opt.tau)), 1e-12);
  EXPECT_NEAR(st.eta.mean, 1 / (1 + std::exp(-(qn - d.s0()) / opt.tau)), 1e-12);
  EXPECT_NEAR(st.w.mean, st.rho.mean * st.eta.mean * st.lexical_residuality.mean, 1e-12);
  // Batch of one: softmax over {own positive, own negative}.
  EXPECT_NEAR(st.mnrl_loss, std::log1p(std::exp(20 * (qn - qp))), 1e-9);
  // One direction: log det = log(1 + gamma * w).
  EXPECT_NEAR(st.eci_sem, std::log1p(st.w.mean), 1e-9);
  EXPECT_NEAR(st.lexical_residuality.mean, 1 - (f.idf.idf("cell")) /
              (f.idf.idf("cell") + f.idf.idf("gene") + f.idf.idf("protein")), 1e-12);
}

TEST(Diagnoser, SourcesDifferInResiduality) {
  Fixture f;
  auto d = f.run();
  ASSERT_EQ(d.reports().size(), 3u);
  const auto& r = d.reports();
  EXPECT_LT(r[0].stats.lexical_residuality.mean, r[1].stats.lexical_residuality.mean);
  EXPECT_LT(r[1].stats.lexical_residuality.mean, r[2].stats.lexical_residuality.mean);
  for (const auto& s : r) {
    EXPECT_EQ(s.stats.count, 60u);
    EXPECT_LE(s.stats.eci_sem, s.stats.eci_sem_linear);
    EXPECT_GT(s.stats.eci_sem, 0);
    EXPECT_GE(s.stats.ambiguity_rate, 0);
    EXPECT_GT(s.stats.mnrl_loss, 0);
  }
}

TEST(Diagnoser, BootstrapIsSeededAndThreadIndependent) {
  Fixture f;
  DiagnoseOptions one;
  one.threads = 1;
  DiagnoseOptions two = one;
  two.threads = 2;
  DiagnoseOptions other = one;
  other.seed = 99;
  // Alike sources: the replicates' orderings vary, so the CIs depend on the seed.
  auto a = f.run(one, true).agreement(transfer3(), 50);
  auto b = f.run(two, true).agreement(transfer3(), 50);
  auto c = f.run(other, true).agreement(transfer3(), 50);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  bool any_difference = false;
  for (size_t k = 0; k < a.rows.size(); ++k) {
    EXPECT_EQ(a.rows[k].kendall.low, b.rows[k].kendall.low) << a.rows[k].diagnostic;
    EXPECT_EQ(a.rows[k].spearman.high, b.rows[k].spearman.high) << a.rows[k].diagnostic;
    any_difference |= a.rows[k].kendall.low != c.rows[k].kendall.low ||
                      a.rows[k].kendall.high != c.rows[k].kendall.high ||
                      a.rows[k].spearman.low != c.rows[k].spearman.low;
  }
  EXPECT_TRUE(any_difference);
  for (const auto& row : a.rows) EXPECT_LE(row.kendall.low, row.kendall.high) << row.diagnostic;
  // Distinct sources: residuality orders them exactly as the transfer does, in every replicate.
  auto distinct = f.run(one).agreement(transfer3(), 50);
  EXPECT_EQ(distinct.rows[0].diagnostic, "lexical_residuality");
  EXPECT_DOUBLE_EQ(distinct.rows[0].kendall.value, 1.0);
  EXPECT_DOUBLE_EQ(distinct.rows[0].kendall.low, 1.0);
  EXPECT_DOUBLE_EQ(distinct.rows[0].spearman.high, 1.0);
}

TEST(Diagnoser, AgreementNeedsTwoCommonSources) {
  Fixture f;
  auto d = f.run();
  TransferTable t{{"lexical", "nope"}, {1, 2}};
  EXPECT_THROW(d.agreement(t, 10), ConfigError);
  TransferTable two{{"semantic", "lexical", "absent"}, {1, 2, 3}};
  auto a = d.agreement(two, 10);
  EXPECT_EQ(a.sources, (std::vector<std::string>{"semantic", "lexical"}));
  EXPECT_EQ(a.unmatched, (std::vector<std::string>{"absent", "mixed"}));
}

TEST(Diagnoser, MatchedSamplesAreDeterministic) {
  Fixture f;
  auto d = f.run();
  std::vector<size_t> bins = {5, 10};
  auto m1 = d.matched(transfer3(), bins, 20);
  auto m2 = d.matched(transfer3(), bins, 20);
  ASSERT_EQ(m1.resolutions.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_GT(m1.resolutions[r].mean_matched_count[0], 0);
    for (size_t k = 0; k < m1.resolutions[r].rows.size(); ++k) {
      EXPECT_EQ(m1.resolutions[r].rows[k].mean_kendall, m2.resolutions[r].rows[k].mean_kendall);
      EXPECT_NE(m1.resolutions[r].rows[k].diagnostic, "lexical_residuality");
    }
  }
}

TEST(Diagnoser, SkippedTriplesAreCounted) {
  auto dir = fs::temp_directory_path() / ("dg_skip_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "mined.jsonl").string();
  write_file_atomic(path,
                    "{\"query\":\"cell gene\",\"positive\":\"cell gene tumor\",\"negative\":\"virus\"}\n"
                    "{\"query\":\"cell gene\",\"positive\":\"cell gene tumor\"}\n"
                    "{\"query\":\"cell gene\",\"positive\":\"  \",\"negative\":\"virus\"}\n"
                    "{\"query\":\"heart\",\"positive\":\"heart blood\",\"negative\":\"lung\"}\n");
  std::vector<data::TripleFile> files = {data::read_triples(path, {.skip_invalid = true})};
  auto sources = group_sources(files);
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].name, "mined");  // no "source" field: the file name
  EXPECT_EQ(sources[0].triples.size(), 2u);
  EXPECT_EQ(sources[0].skipped, 2u);
  Fixture f;
  Diagnoser d;
  LexicalScorer lex(f.idf, f.analyzer);
  EmbeddingCache cache(f.encoder, "");
  d.run(sources, lex, cache, f.corpus);
  EXPECT_EQ(d.reports()[0].skipped, 2u);
  EXPECT_EQ(d.reports()[0].skipped_by_reason.size(), 2u);
  fs::remove_all(dir);
}

TEST(TransferCsv, ParsesAndNamesTheBadLine) {
  auto dir = fs::temp_directory_path() / ("dg_csv_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string good = (dir / "good.csv").string(), bad = (dir / "bad.csv").string();
  write_file_atomic(good, "source,metric\nbm25,0.41\ndense,0.5\n");
  auto t = read_transfer_csv(good);
  EXPECT_EQ(t.sources, (std::vector<std::string>{"bm25", "dense"}));
  EXPECT_EQ(t.metric, (std::vector<double>{0.41, 0.5}));
  auto expect_error = [&](const std::string& text, const std::string& where) {
    write_file_atomic(bad, text);
    try {
      read_transfer_csv(bad);
      ADD_FAILURE() << "no error for " << text;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(bad + ":" + where), std::string::npos) << e.what();
    }
  };
  expect_error("source,metric\nbm25,0.4\ndense,abc\n", "3");
  expect_error("source,metric\nbm25,0.4,1\n", "2");
  expect_error("src,value\nbm25,0.4\n", "1");
  expect_error("source,metric\nbm25,0.4\nbm25,0.5\n", "3");
  fs::remove_all(dir);
}

TEST(EmbeddingCache, RoundTripsAndSurvivesDamage) {
  auto dir = fs::temp_directory_path() / ("dg_cache_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  HashEncoder enc;
  std::vector<std::string> texts = {"cell gene", "virus", "cell gene"};
  std::vector<float> first;
  std::string path;
  {
    EmbeddingCache c(enc, dir.string());
    first = c.embed(texts);
    EXPECT_EQ(c.encoded(), 2u);  // the repeated text is encoded once
    c.save();
    path = c.path();
  }
  ASSERT_TRUE(fs::exists(path));
  size_t calls = enc.calls;
  {
    EmbeddingCache c(enc, dir.string());
    EXPECT_EQ(c.embed(texts), first);
    EXPECT_EQ(c.encoded(), 0u);
    EXPECT_EQ(c.hits(), 3u);
  }
  EXPECT_EQ(enc.calls, calls + 1);  // only the fingerprint probe
  {  // a flipped byte: the crc fails, the cache is ignored and rebuilt
    std::string bytes = read_file(path);
    auto vecs = bytes.find("VECS");
    ASSERT_NE(vecs, std::string::npos);
    bytes[vecs + 64 + 3] ^= 0x55;  // inside the payload (it starts at the next 64-byte boundary)
    write_file_atomic(path, bytes);
    EmbeddingCache c(enc, dir.string());
    EXPECT_EQ(c.embed(texts), first);
    EXPECT_EQ(c.encoded(), 2u);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace verity::diagnose
