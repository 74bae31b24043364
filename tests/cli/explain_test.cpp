// End-to-end tests of `verity explain` with the pretrained USE-lite model.
#include <gtest/gtest.h>

#include "run_verity.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {
namespace fs = std::filesystem;

using verity_test::Result;
using verity_test::run;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class Explain : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path model = fs::path(VERITY_SOURCE_DIR) / "models" / "use-lite" / "verity.json";
    const char* require = std::getenv("VERITY_REQUIRE_MODELS");
    if (!fs::exists(model)) {
      if (require && std::string(require) == "1") FAIL() << "missing " << model;
      GTEST_SKIP() << "no converted USE-lite model at " << model << " (scripts/setup_models.sh)";
    }
    dir_ = fs::temp_directory_path() / ("verity_explain_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

constexpr const char* kRoleSwap =
    "--query 'the dog bit the man' --doc 'the man bit the dog' --encoder use-lite";

TEST_F(Explain, RoleSwapWritesSvgAndConsistentJson) {
  const auto out = dir_ / "map.svg";
  auto r = run(std::string("explain ") + kRoleSwap + " --out " + out.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // exactly one JSON value on stdout
  EXPECT_EQ(j["out"], out.string());
  EXPECT_EQ(j["cropped"], false);
  const auto svg = read_all(out);
  EXPECT_TRUE(svg.starts_with("<?xml")) << svg.substr(0, 40);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));

  const auto& map = j["map"];
  const auto& qt = j["query_tokens"];
  const auto& dt = j["doc_tokens"];
  ASSERT_GE(qt.size(), 5u);  // at least one piece per word
  ASSERT_EQ(map.size(), qt.size());
  ASSERT_EQ(map[0].size(), dt.size());
  EXPECT_EQ(j["query_token_count"], qt.size());
  size_t cells = 0;
  for (const auto& row : map) cells += row.size();
  auto svg_cells = [&] {
    size_t n = 0;
    for (auto at = svg.find("<rect class=\"cell\""); at != std::string::npos;
         at = svg.find("<rect class=\"cell\"", at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(svg_cells(), cells);

  // The scores are the verifiers' formulas applied to the printed map.
  double sum = 0, maxsim = 0, lo = 1, hi = -1;
  for (const auto& row : map) {
    double best = -2;
    for (double v : row) {
      EXPECT_GE(v, -1.0 - 1e-6);
      EXPECT_LE(v, 1.0 + 1e-6);
      sum += v;
      best = std::max(best, v);
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
    maxsim += best;
  }
  const auto& s = j["scores"];
  ASSERT_EQ(s.size(), 3u);
  const double f0 = s["f0"], f1 = s["f1"], f2 = s["f2"];
  EXPECT_NEAR(f0, sum / double(cells), 1e-5);
  EXPECT_NEAR(f1, maxsim / double(map.size()), 1e-5);
  EXPECT_LE(f0, f1);
  EXPECT_GE(f2, lo - 1e-6);
  EXPECT_LE(f2, hi + 1e-6);
  // Every query word also occurs in the document, so MaxSim finds a close match for each.
  EXPECT_GT(f1, 0.5);
  EXPECT_LE(f1, 1.0 + 1e-6);
}

TEST_F(Explain, PngAndVerifierSelection) {
  const auto out = dir_ / "map.png";
  auto r = run(std::string("explain ") + kRoleSwap + " --out " + out.string() +
               " --verifier f1,f2:lambda=0,tau=0.05 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "png");
  EXPECT_EQ(j["scores"].size(), 2u);
  EXPECT_TRUE(j["scores"].contains("f1"));
  EXPECT_TRUE(j["scores"].contains("f2:lambda=0,tau=0.05"));
  EXPECT_EQ(read_all(out).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));

  // Without --json the scores are printed one per line.
  r = run(std::string("explain --quiet ") + kRoleSwap + " --out " + (dir_ / "b.svg").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("f0"), std::string::npos);
  EXPECT_NE(r.out.find("f2"), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(Explain, UsageErrorsExitTwoAndWriteNothing) {
  const auto bad = dir_ / "map.jpg";
  auto r = run(std::string("explain ") + kRoleSwap + " --out " + bad.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(".svg or .png"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(bad));

  r = run("explain --doc 'the man bit the dog' --out " + (dir_ / "x.svg").string());
  EXPECT_EQ(r.status, 2) << "missing --query";
  EXPECT_NE(r.err.find("--query"), std::string::npos) << r.err;

  r = run(std::string("explain ") + kRoleSwap + " --out " + (dir_ / "x.svg").string() +
          " --verifier f9");
  EXPECT_EQ(r.status, 2) << "unknown verifier";
  EXPECT_NE(r.err.find("f9"), std::string::npos) << r.err;

  r = run(std::string("explain ") + kRoleSwap + " --out " + (dir_ / "x.svg").string() +
          " --verifier f1,f1");
  EXPECT_EQ(r.status, 2) << "duplicate verifier";
  EXPECT_FALSE(fs::exists(dir_ / "x.svg"));
}

// For F5 the JSON says what its network alone gave and which calibration rule
// moved the score: the surface floor raises a case variant, the flip cap
// lowers a negation, the name cap a swapped name or kind, the transposition cap two
// words trading places; other verifiers get no trace.
TEST_F(Explain, CalibrationTraceNamesTheRuleThatMovedTheScore) {
  auto trace = [&](const std::string& query, const std::string& doc, const std::string& verifiers) {
    auto r = run("explain --query '" + query + "' --doc '" + doc + "' --encoder use-lite --verifier " + verifiers +
                 " --out " + (dir_ / "t.svg").string() + " --json --quiet");
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  auto j = trace("What is Machine Learning?", "What is machine learning?", "default,f1");
  const auto& raised = j["calibration_trace"]["default"];
  EXPECT_EQ(raised["applied"], nlohmann::json::array({"surface_floor"}));
  EXPECT_EQ(raised["surface_match"], true);
  EXPECT_LT(raised["network_probability"].get<double>(), j["scores"]["default"].get<double>());
  EXPECT_FALSE(j["calibration_trace"].contains("f1"));
  j = trace("Open the port before you start.", "Never open the port before you start.", "default");
  const auto& capped = j["calibration_trace"]["default"];
  EXPECT_EQ(capped["applied"], nlohmann::json::array({"flip_cap"}));
  EXPECT_EQ(capped["minimal_flip"], true);
  EXPECT_GT(capped["network_probability"].get<double>(), j["scores"]["default"].get<double>());
  j = trace("How do I install Python on Windows?", "How do I install Java on Windows?", "default");
  const auto& named = j["calibration_trace"]["default"];
  EXPECT_EQ(named["applied"], nlohmann::json::array({"name_cap"}));
  EXPECT_EQ(named["name_swap"], true);
  EXPECT_EQ(j["verdicts"]["default"], "near-miss");
  EXPECT_GT(named["network_probability"].get<double>(), j["scores"]["default"].get<double>());
  j = trace("What are the side effects of aspirin?", "What are the side effects of ibuprofen?", "default");
  const auto& kind = j["calibration_trace"]["default"];
  EXPECT_EQ(kind["applied"], nlohmann::json::array({"name_cap"}));
  EXPECT_EQ(kind["kind_swap"], true);
  EXPECT_EQ(kind["name_swap"], false);
  EXPECT_EQ(j["verdicts"]["default"], "near-miss");
  EXPECT_GT(kind["network_probability"].get<double>(), 0.5);  // the network alone served it
  j = trace("flights from Boston to Denver", "flights from Denver to Boston", "default");
  const auto& transposed = j["calibration_trace"]["default"];
  EXPECT_EQ(transposed["applied"], nlohmann::json::array({"transposition_cap"}));
  EXPECT_EQ(transposed["transposition"], true);
  EXPECT_EQ(j["verdicts"]["default"], "near-miss");
  EXPECT_GT(transposed["network_probability"].get<double>(), 0.5);  // the network alone served it
  j = trace("the dog bit the man", "the man bit the dog", "default");
  EXPECT_EQ(j["calibration_trace"]["default"]["transposition"], true);
  EXPECT_EQ(j["calibration_trace"]["default"]["identity_signal"], true);  // a reordering
  j = trace("Should I learn Python or Java first?", "Should I learn Java or Python first?", "default");
  EXPECT_EQ(j["calibration_trace"]["default"]["applied"], nlohmann::json::array());
  EXPECT_EQ(j["calibration_trace"]["default"]["transposition"], false);  // a coordination
  // Without --json the moved score is said in words after the scores.
  auto r = run("explain --query 'What is Machine Learning?' --doc 'What is machine learning?' --encoder use-lite "
               "--verifier default --out " + (dir_ / "t.svg").string() + " --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("raised as the same text on the surface"), std::string::npos) << r.out;
  r = run("explain --query 'How do I install Python on Windows?' --doc 'How do I install Java on Windows?' "
          "--encoder use-lite --verifier default --out " + (dir_ / "t.svg").string() + " --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("capped as a swapped name"), std::string::npos) << r.out;
  r = run("explain --query 'flights from Boston to Denver' --doc 'flights from Denver to Boston' "
          "--encoder use-lite --verifier default --out " + (dir_ / "t.svg").string() + " --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("capped as a transposition"), std::string::npos) << r.out;
}

}  // namespace
