// verity cache ... and verity cache-eval through the binary (models/use-lite;
// required when VERITY_REQUIRE_MODELS is set, skipped otherwise).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../cache/cache_fixture.hpp"
#include "run_verity.hpp"

using json = nlohmann::json;
using verity_test::run;

namespace {
class CacheCli : public verity_test::CacheFixture {
 protected:
  std::string flags() const { return " --db " + db() + " --encoder use-lite:" + verity_test::use_lite_dir() + " --verifier f1 "; }
  static std::string fixture(const char* name) {
    return std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/cache/" + name;
  }
};
}  // namespace

TEST_F(CacheCli, PutLookupRemoveClearStats) {
  auto put = run("cache put" + flags() + "--prompt 'What is the capital of France?' --response Paris --json");
  ASSERT_EQ(put.status, 0) << put.err;
  auto p = json::parse(put.out);
  EXPECT_EQ(p["replaced"], false);
  EXPECT_EQ(p["namespace"], "default");  // the HTTP API's object
  auto look = run("cache lookup" + flags() + "--prompt 'What is the capital of France?' --json");
  ASSERT_EQ(look.status, 0) << look.err;
  auto l = json::parse(look.out);
  EXPECT_EQ(l["hit"], true);
  EXPECT_EQ(l["id"], p["id"]);
  EXPECT_EQ(l["response"], "Paris");
  EXPECT_EQ(l["namespace"], "default");
  auto miss = run("cache lookup" + flags() + "--prompt 'Capital of France' --min-probability 1 --json");
  EXPECT_EQ(json::parse(miss.out)["hit"], false);
  // --namespace is the namespace of the lines that name none (the file's third).
  auto bulk = run("cache put" + flags() + "--jsonl " + fixture("put.jsonl") + " --namespace ops --json");
  ASSERT_EQ(bulk.status, 0) << bulk.err;
  EXPECT_EQ(json::parse(bulk.out)["puts"], 3);
  auto stats = json::parse(run("cache stats" + flags() + "--json").out);
  EXPECT_EQ(stats["entries"], 4);
  EXPECT_EQ(stats["namespaces"]["docs"]["entries"], 2);
  EXPECT_EQ(stats["namespaces"]["ops"]["entries"], 1);
  EXPECT_EQ(stats["threshold_source"], "fallback");
  auto removed = run("cache remove" + flags() + "--id " + std::to_string(p["id"].get<int64_t>()) + " --json");
  EXPECT_EQ(removed.status, 0) << removed.err;
  EXPECT_EQ(run("cache remove" + flags() + "--id " + std::to_string(p["id"].get<int64_t>())).status, 1);
  auto cleared = json::parse(run("cache clear" + flags() + "--namespace docs --json").out);
  EXPECT_EQ(cleared["removed"], 2);
  // A lookup on a missing database is a usage error naming the file.
  auto missing = run("cache lookup --db " + (dir_ / "none.sqlite").string() + " --prompt x");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("none.sqlite"), std::string::npos);
}

TEST_F(CacheCli, CacheEvalReportsEveryScorerAndWritesThePlot) {
  std::string svg = (dir_ / "curve.svg").string();
  auto r = run("cache-eval --pairs " + fixture("pairs.jsonl") + " --triples " + fixture("triples.jsonl") +
               " --scorer cosine --scorer f1 --protocol pairs --encoder use-lite:" + verity_test::use_lite_dir() +
               " --verifier f1 --work-dir " + dir_.string() + " --plot " + svg + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = json::parse(r.out);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["pairs"], 8);
  EXPECT_EQ(j["files"][1]["pairs"], 5);
  EXPECT_EQ(j["files"][0]["set_aside"], 0);
  EXPECT_TRUE(j["files"][0]["set_aside_lines"].is_array());
  for (const auto& f : j["files"]) {
    ASSERT_EQ(f["scorers"].size(), 2u);
    EXPECT_EQ(f["scorers"][0]["name"], "cosine");
    for (const char* key : {"0.9", "0.95"}) EXPECT_TRUE(f["scorers"][1]["at_precision"].contains(key)) << key;
    EXPECT_TRUE(f["scorers"][1].contains("hits_vs_cosine"));
    EXPECT_TRUE(f["speed"]["lookup_ms"]["p99"].is_number());
    EXPECT_GT(f["speed"]["puts_per_s"].get<double>(), 0.0);
  }
  EXPECT_TRUE(j["files"][1]["scorers"][1]["at_default_threshold"]["near_miss_served_by_type"].contains("role_swap"));
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 0.0);
  // Speed figures name the kernel path they ran on.
  const auto isa = j["hardware"]["kernel_isa"].get<std::string>();
  EXPECT_TRUE(isa == "avx512" || isa == "avx2" || isa == "portable") << isa;
  EXPECT_TRUE(j["hardware"]["bf16_maps"].is_boolean());
  // Which instructions made the bf16 products: named exactly when there are bf16 maps.
  const auto& products = j["hardware"]["bf16_products"];
  if (j["hardware"]["bf16_maps"].get<bool>()) {
    EXPECT_TRUE(products == "amx" || products == "avx512") << products;
  } else {
    EXPECT_TRUE(products.is_null()) << products;
  }
  // VERITY_KERNEL_ISA pins a slower path (bf16 maps, an AVX-512 path, go with it); a bad value is a usage error.
  // --verifier decides lookup(); named without a --scorer of its own, it is scored too.
  const std::string small = "cache-eval --pairs " + fixture("pairs.jsonl") + " --scorer cosine --protocol pairs --encoder use-lite:" +
                            verity_test::use_lite_dir() + " --verifier f1 --work-dir " + dir_.string() + " --json --quiet";
  auto pinned = run(small, "VERITY_KERNEL_ISA=portable");
  ASSERT_EQ(pinned.status, 0) << pinned.err;
  auto pj = json::parse(pinned.out);
  EXPECT_EQ(pj["hardware"]["kernel_isa"], "portable");
  EXPECT_EQ(pj["hardware"]["bf16_maps"], false);
  EXPECT_TRUE(pj["hardware"]["bf16_products"].is_null());
  ASSERT_EQ(pj["files"][0]["scorers"].size(), 2u);
  EXPECT_EQ(pj["files"][0]["scorers"][0]["name"], "cosine");
  EXPECT_EQ(pj["files"][0]["scorers"][1]["name"], "f1");
  EXPECT_EQ(pj["scorers"], json::array({"cosine", "f1"}));
  auto refused = run(small, "VERITY_KERNEL_ISA=sse9");
  EXPECT_NE(refused.status, 0);
  EXPECT_TRUE(refused.out.empty());
  EXPECT_NE(refused.err.find("VERITY_KERNEL_ISA='sse9'"), std::string::npos) << refused.err;
  std::ifstream in(svg);
  std::string head(4, ' ');
  in.read(head.data(), 4);
  EXPECT_EQ(head, "<svg");
  // No leftover database in the work directory.
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find("cache-eval."), std::string::npos) << e.path();
}

TEST_F(CacheCli, PutRefusesWhatTheHttpApiRefuses) {
  auto r = run("cache put" + flags() + "--prompt 'Is it open?' --json");  // no --response
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--response is required"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = run("cache put" + flags() + "--prompt '  ?  ' --response x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no letter, number or symbol"), std::string::npos) << r.err;
  std::ofstream(dir_ / "ttl.jsonl") << "{\"prompt\": \"a\", \"response\": \"r\"}\n"
                                    << "{\"prompt\": \"b\", \"response\": \"r\", \"ttl_s\": -3}\n";
  r = run("cache put" + flags() + "--jsonl " + (dir_ / "ttl.jsonl").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("ttl.jsonl:2: field 'ttl_s'"), std::string::npos) << r.err;
  r = run("cache put" + flags() + "--prompt a --response r --ttl -1");
  EXPECT_EQ(r.status, 2);
  EXPECT_LT(r.err.size(), 300u) << r.err;  // the range, not DBL_MAX's 300 digits
}

TEST_F(CacheCli, CacheEvalRejectsBadInput) {
  std::ofstream(dir_ / "bad.jsonl") << "{\"a\": \"x\", \"b\": \"y\", \"label\": 1}\n{\"a\": \"x\"}\n";
  auto r = run("cache-eval --pairs " + (dir_ / "bad.jsonl").string() + " --json");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.jsonl:2"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = run("cache-eval --pairs " + fixture("pairs.jsonl") + " --protocol sideways");
  EXPECT_EQ(r.status, 2);
  r = run("cache-eval --pairs " + fixture("pairs.jsonl") + " --scorer f9 --encoder use-lite:" +
          verity_test::use_lite_dir() + " --work-dir " + dir_.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("f9"), std::string::npos) << r.err;
}
