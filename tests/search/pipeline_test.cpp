// The two-stage pipeline on the tiny fixture corpus with the pretrained USE-lite.
#include "search/pipeline.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "encode/registry.hpp"
#include "index/doc_store.hpp"
#include "index/index_dir.hpp"
#include "search/index_builder.hpp"
#include "verify/similarity_map.hpp"
#include "verify/verifier.hpp"
#include "../support/tiny_glove.hpp"

using namespace verity;
namespace fs = std::filesystem;

namespace {
std::string model_dir() {
  if (const char* v = std::getenv("VERITY_MODEL_DIR"); v && *v) return std::string(v) + "/use-lite";
  return std::string(VERITY_SOURCE_DIR) + "/models/use-lite";
}

class PipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(model_dir() + "/verity.json")) return;
    set_quiet(true);
    dir_ = (fs::temp_directory_path() / ("verity_pipeline_" + std::to_string(::getpid()))).string();
    auto corpus = data::load_corpus(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/tiny_beir/corpus.jsonl");
    search::IndexBuildOptions o;
    o.dense = o.tokens = true;
    o.encoder = "use-lite:" + model_dir();
    search::build_index(corpus, dir_, o);
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (dir_.empty()) {
      if (std::getenv("VERITY_REQUIRE_MODELS")) FAIL() << "models/use-lite missing";
      GTEST_SKIP() << "models/use-lite not converted (scripts/setup_models.sh)";
    }
  }
  static search::Pipeline open(search::PipelineOptions o) { return search::Pipeline(dir_, o); }
  static inline std::string dir_;
};

TEST(PipelineOptionsTest, UnreadOptionsFollowTheModesThatRun) {
  auto groups = [](const search::PipelineOptions& o, bool per_request) {
    std::vector<std::string> out;
    for (const auto& u : search::unread_options(o, per_request)) {
      std::string g = std::string(u.setting) + "=" + u.value + ":";
      for (const char* name : u.options) g += std::string(" ") + name;
      out.push_back(g);
    }
    return out;
  };
  search::PipelineOptions o;  // bm25, weighted fusion, no verifier, weighted combine
  EXPECT_EQ(groups(o, false), (std::vector<std::string>{"stage1=hybrid: fusion rrf_k dense_weight", "fusion=rrf: rrf_k",
                                                         "verifier=: combine verifier_weight penalty_beta penalty_tau",
                                                         "combine=penalty: penalty_beta penalty_tau"}));
  // A server's requests pick stage 1 and the verifier: only the fusion and combine modes decide.
  EXPECT_EQ(groups(o, true), (std::vector<std::string>{"fusion=rrf: rrf_k", "combine=penalty: penalty_beta penalty_tau"}));
  o.stage1 = "hybrid", o.fusion = "rrf", o.verifier = "f1", o.combine = "penalty";
  EXPECT_EQ(groups(o, false), (std::vector<std::string>{"fusion=weighted: dense_weight", "combine=weighted: verifier_weight"}));
}

TEST_F(PipelineTest, Stage1Variants) {
  for (const char* s1 : {"bm25", "dense", "hybrid"}) {
    search::PipelineOptions o;
    o.stage1 = s1;
    auto hits = open(o).search("measles vaccine mortality", 3);
    ASSERT_FALSE(hits.empty()) << s1;
    EXPECT_EQ(hits.front().id, "d3") << s1;
    EXPECT_LE(hits.size(), 3u);
    for (size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].score, hits[i].score) << s1;
  }
}

TEST_F(PipelineTest, RrfFusionFollowsItsFormula) {
  search::PipelineOptions o;
  o.stage1 = "hybrid";
  o.fusion = "rrf";
  o.rrf_k = 60;
  auto hybrid = open(o).search("dogs and cats", 5);
  o.stage1 = "bm25";
  auto lexical = open(o).search("dogs and cats", 5);
  o.stage1 = "dense";
  auto dense = open(o).search("dogs and cats", 5);
  auto rank_in = [](const std::vector<search::SearchHit>& list, const std::string& id) -> double {
    for (size_t r = 0; r < list.size(); ++r)
      if (list[r].id == id) return 1.0 / (60.0 + double(r + 1));
    return 0.0;
  };
  for (const auto& h : hybrid)
    EXPECT_NEAR(h.score, rank_in(lexical, h.id) + rank_in(dense, h.id), 1e-12) << h.id;
}

TEST_F(PipelineTest, VerifierRerankAndVerdicts) {
  search::PipelineOptions o;
  o.stage1 = "hybrid";
  o.verifier = "f1";
  o.combine = "rerank";
  o.reject_below = 0.5;
  auto p = open(o);
  auto hits = p.search("the cat sat on the mat", 5);
  ASSERT_FALSE(hits.empty());
  // Rerank: the final score is the verifier score, in descending order.
  for (size_t i = 0; i < hits.size(); ++i) {
    ASSERT_TRUE(hits[i].verifier_score.has_value());
    EXPECT_DOUBLE_EQ(hits[i].score, *hits[i].verifier_score);
    EXPECT_EQ(hits[i].verdict, *hits[i].verifier_score >= 0.5 ? "match" : "near-miss");
    if (i) EXPECT_GE(hits[i - 1].score, hits[i].score);
  }
  // The stored token vectors (fp16) give the same F1 as maps built from a fresh encoding.
  auto enc = encode::make_encoder("use-lite:" + model_dir());
  encode::EncodeOptions eo;
  std::vector<std::string> texts{"the cat sat on the mat",
                                 data::load_corpus(std::string(VERITY_SOURCE_DIR) +
                                                   "/tests/fixtures/tiny_beir/corpus.jsonl")
                                     .indexed_text(p.docs().find(hits[0].id))};
  auto e = enc->encode(texts, eo);
  auto rows = [&](size_t b) {
    std::vector<float> out;
    for (size_t t = 0; t < e.max_tokens; ++t)
      if (e.mask[b * e.max_tokens + t]) {
        auto r = e.token_row(b, t);
        out.insert(out.end(), r.begin(), r.end());
      }
    return out;
  };
  auto map = verify::SimilarityMap::compute(rows(0), rows(1), e.dim);
  EXPECT_NEAR(*hits[0].verifier_score, verify::make_verifier("f1")->score(map), 2e-3);
}

TEST_F(PipelineTest, VerifyCandidatesAndCombineModes) {
  search::PipelineOptions o;
  o.verifier = "f1";
  o.reject_below = 0.99;
  auto p = open(o);
  std::vector<std::string> cands{"the dog bit the man", "stock markets fell sharply"};
  auto v = p.verify("the dog bit the man", cands);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NEAR(v[0].score, 1.0, 1e-4);  // identical text: every query token finds itself
  EXPECT_EQ(v[0].verdict, "match");
  EXPECT_LT(v[1].score, v[0].score);
  for (const char* combine : {"weighted", "penalty"}) {
    o.combine = combine;
    auto hits = open(o).search("river floods in spring", 4);
    ASSERT_FALSE(hits.empty()) << combine;
    for (size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].score, hits[i].score);
  }
}

TEST_F(PipelineTest, PrunedVerificationKeepsTheTopK) {
  // Candidates that cannot reach the top k are not verified; the top k (ids,
  // scores, verifier scores) is what verifying every candidate gives.
  for (const char* combine : {"weighted", "penalty"})
    for (const char* verifier : {"f1", "default"}) {
      search::PipelineOptions o;
      o.stage1 = "hybrid";
      o.verifier = verifier;
      o.combine = combine;
      o.verifier_weight = 0.3;
      o.candidates = 12;
      auto p = open(o);
      for (const char* query : {"measles vaccine mortality", "dogs and cats", "river floods in spring"}) {
        search::StageTimings all_t, top_t;
        const auto all = p.search(query, o.candidates, &all_t);
        const auto top = p.search(query, 2, &top_t);
        ASSERT_GE(all.size(), 2u) << query;
        ASSERT_EQ(top.size(), 2u) << query;
        EXPECT_EQ(all_t.verified, all.size());
        EXPECT_LE(top_t.verified, all_t.verified);
        EXPECT_GE(top_t.verified, 2u);
        for (size_t i = 0; i < 2; ++i) {
          EXPECT_EQ(top[i].id, all[i].id) << combine << " " << verifier << " " << query;
          // Equal up to float rounding: a batch of other maps sums in another order.
          EXPECT_NEAR(top[i].score, all[i].score, 1e-6);
          ASSERT_TRUE(top[i].verifier_score.has_value());
          EXPECT_NEAR(*top[i].verifier_score, *all[i].verifier_score, 1e-6);
        }
      }
    }
}

TEST_F(PipelineTest, ConfigErrors) {
  search::PipelineOptions o;
  o.stage1 = "sparse";
  EXPECT_THROW(open(o), ConfigError);
  o = {};
  o.reject_below = 0.5;  // verdicts need a verifier
  EXPECT_THROW(open(o), ConfigError);
  o = {};
  o.verifier = "f3";  // an untrained learned verifier is never a default
  EXPECT_THROW(open(o), ConfigError);
}

TEST_F(PipelineTest, IndexNamesItsEncoderPortablyAndRefusesAnother) {
  const auto m = index::read_index_manifest(dir_);
  EXPECT_FALSE(fs::path(m.corpus_path).is_absolute()) << m.corpus_path;
  // The model under the model root is recorded by name, so the index opens on another machine.
  const bool under_root = fs::weakly_canonical(model_dir()) == fs::weakly_canonical(encode::model_root() + "/use-lite");
  EXPECT_EQ(m.specs.at("encoder"), under_root ? "use-lite" : "use-lite:" + model_dir());
  EXPECT_EQ(m.specs.at("encoder_identity").rfind("use-lite:", 0), 0u) << m.specs.at("encoder_identity");

  // A moved copy opens; one whose record names other weights is refused, naming both.
  const auto moved = dir_ + "-moved";
  fs::remove_all(moved);
  fs::copy(dir_, moved, fs::copy_options::recursive);
  search::PipelineOptions o;
  o.stage1 = "hybrid";
  o.verifier = "default";
  o.encoder = "use-lite:" + model_dir();
  EXPECT_FALSE(search::Pipeline(moved, o).search("measles vaccine", 2).empty());
  auto text = read_file(moved + "/manifest.json");
  const auto at = text.find(m.specs.at("encoder_identity"));
  ASSERT_NE(at, std::string::npos);
  text.replace(at, m.specs.at("encoder_identity").size(), "use-lite:00000000");
  write_file_atomic(moved + "/manifest.json", text);
  try {
    search::Pipeline p(moved, o);
    FAIL() << "expected an error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("use-lite:00000000"), std::string::npos) << what;
    EXPECT_NE(what.find(m.specs.at("encoder_identity")), std::string::npos) << what;
  }
  o.stage1 = "bm25";
  o.verifier = "none";  // no vectors read, no encoder opened
  EXPECT_FALSE(search::Pipeline(moved, o).search("measles vaccine", 2).empty());
  fs::remove_all(moved);
}

TEST_F(PipelineTest, AutoIsTheTwoStageDefaultTheIndexAllows) {
  search::PipelineOptions o;
  o.stage1 = o.verifier = "auto";
  auto p = open(o);
  EXPECT_EQ(p.options().stage1, "hybrid");
  EXPECT_EQ(p.options().verifier, "default");  // trained on this index's encoder
  ASSERT_TRUE(p.verdict_threshold().has_value());
  auto hits = p.search("where did the cat sit", 3);
  ASSERT_FALSE(hits.empty());
  for (const auto& h : hits) {
    ASSERT_TRUE(h.verifier_score.has_value());
    EXPECT_EQ(h.verdict, *h.verifier_score >= *p.verdict_threshold() ? "match" : "near-miss");
  }
  auto named = o;
  named.stage1 = "hybrid";
  named.verifier = "default";
  EXPECT_EQ(open(named).describe(), p.describe());

  // Without a dense part or token vectors, auto falls back part by part.
  const auto manifest = index::read_index_manifest(dir_);
  auto bare = manifest;
  bare.parts.erase("dense");
  bare.parts.erase("tokens");
  auto resolved = search::resolve_auto_parts(bare, o);
  EXPECT_EQ(resolved.stage1, "bm25");
  EXPECT_EQ(resolved.verifier, "none");
  resolved = search::resolve_auto_parts(manifest, o);
  EXPECT_EQ(resolved.stage1, "hybrid");
  auto dense_only = manifest;  // no BM25 part: dense alone, not a hybrid that cannot open
  dense_only.parts.erase("bm25");
  EXPECT_EQ(search::resolve_auto_parts(dense_only, o).stage1, "dense");
  EXPECT_EQ(resolved.verifier, "auto") << "decided once the encoder is open";
  // Explicit settings pass unchanged.
  EXPECT_EQ(search::resolve_auto_parts(bare, named).verifier, "default");

  // Without the default verifier's file, auto falls back to F1; naming it is still an error.
  setenv("VERITY_DEFAULT_VERIFIER", (dir_ + "/no-such-verifier.valn").c_str(), 1);
  EXPECT_EQ(open(o).options().verifier, "f1");
  EXPECT_THROW(open(named), ConfigError);
  unsetenv("VERITY_DEFAULT_VERIFIER");
}

TEST(PipelineParts, AutoOnOtherEncodersAndBareIndexes) {
  auto root = (fs::temp_directory_path() / ("verity_auto_" + std::to_string(::getpid()))).string();
  set_quiet(true);
  auto corpus = data::load_corpus(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/tiny_beir/corpus.jsonl");
  search::build_index(corpus, root + "/bm25", {});  // BM25 only
  search::PipelineOptions o;
  o.stage1 = o.verifier = "auto";
  search::Pipeline bare(root + "/bm25", o);
  EXPECT_EQ(bare.options().stage1, "bm25");
  EXPECT_EQ(bare.options().verifier, "none");
  EXPECT_FALSE(bare.verdict_threshold().has_value());
  auto judged = o;
  judged.reject_below = 0.5;  // a verdict threshold with nothing to verify
  try {
    search::Pipeline p(root + "/bm25", judged);
    FAIL() << "expected an error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no token vectors"), std::string::npos) << e.what();
  }
  // Token vectors of an encoder the default verifier was not trained on: F1 reads any maps.
  search::IndexBuildOptions glove;
  glove.dense = glove.tokens = true;
  glove.encoder = "glove:" + verity_test::make_tiny_glove(root);
  search::build_index(corpus, root + "/glove-index", glove);
  search::Pipeline other(root + "/glove-index", o);
  EXPECT_EQ(other.options().stage1, "hybrid");
  EXPECT_EQ(other.options().verifier, "f1");
  EXPECT_FALSE(other.search("measles vaccine", 2).empty());
  fs::remove_all(root);
}

TEST(PipelineParts, MissingPartIsNamed) {
  auto dir = (fs::temp_directory_path() / ("verity_parts_" + std::to_string(::getpid()))).string();
  set_quiet(true);
  auto corpus = data::load_corpus(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/tiny_beir/corpus.jsonl");
  search::build_index(corpus, dir, {});  // BM25 only
  search::PipelineOptions o;
  o.stage1 = "dense";
  try {
    search::Pipeline p(dir, o);
    FAIL() << "expected an error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("encoder"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}
}  // namespace
