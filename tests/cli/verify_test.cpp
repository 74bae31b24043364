// End-to-end tests of `verity verify` with the pretrained USE-lite model and
// the default verifier: verdicts on texts and on a file of pairs, the two
// modes agreeing, and bad input named by file and line.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_verity.hpp"

namespace {
namespace fs = std::filesystem;

using verity_test::Result;
using verity_test::run;

class Verify : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!verity_test::have_use_lite()) {
      const char* require = std::getenv("VERITY_REQUIRE_MODELS");
      if (require && std::string(require) == "1") FAIL() << "missing the converted USE-lite model";
      GTEST_SKIP() << "no converted USE-lite model (scripts/setup_models.sh)";
    }
    dir_ = fs::temp_directory_path() / ("verity_verify_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  static std::vector<nlohmann::json> read_jsonl(const fs::path& p) {
    std::vector<nlohmann::json> out;
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  fs::path dir_;
};

constexpr const char* kTexts =
    "verify --query 'Is port 6379 closed by default?' --candidate 'Is port 6379 open by default?' "
    "--candidate 'By default, is port 6379 closed?'";

TEST_F(Verify, TextsGetCalibratedVerdictsInCandidateOrder) {
  auto r = run(std::string(kTexts) + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // exactly one JSON value on stdout
  EXPECT_EQ(j["query"], "Is port 6379 closed by default?");
  ASSERT_TRUE(j["threshold"].is_number());
  const double threshold = j["threshold"];
  EXPECT_GT(threshold, 0.0);
  EXPECT_LT(threshold, 1.0);
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& flip = j["results"][0];
  const auto& reworded = j["results"][1];
  EXPECT_EQ(flip["candidate"], "Is port 6379 open by default?");
  EXPECT_EQ(flip["verdict"], "near-miss");
  EXPECT_LT(flip["score"].get<double>(), threshold);
  EXPECT_EQ(reworded["candidate"], "By default, is port 6379 closed?");
  EXPECT_EQ(reworded["verdict"], "match");
  EXPECT_GE(reworded["score"].get<double>(), threshold);
  EXPECT_NE(j["pipeline"].get<std::string>().find("threshold="), std::string::npos);
}

// The default's verdict on each candidate against the query, in order.
std::vector<std::string> verdicts(const std::string& query, const std::vector<std::string>& candidates) {
  std::string command = "verify --query '" + query + "' --json --quiet";
  for (const auto& c : candidates) command += " --candidate '" + c + "'";
  auto r = run(command);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> out;
  if (r.status != 0) return out;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& result : j.at("results")) out.push_back(result.at("verdict"));
  return out;
}

// A relation or a frequency changed for another that is no opposite is
// refused; the same one in other words is served (the default's spatial
// relation and time changes).
TEST_F(Verify, ChangedSpatialRelationOrFrequencyIsANearMiss) {
  using V = std::vector<std::string>;
  EXPECT_EQ(verdicts("The keys are inside the drawer.",
                     {"The keys are behind the drawer.", "The keys are beside the drawer.", "The keys are in the drawer."}),
            (V{"near-miss", "near-miss", "match"}));
  EXPECT_EQ(verdicts("How do I pay my taxes monthly?",
                     {"How do I pay my taxes yearly?", "How do I pay my taxes every month?"}),
            (V{"near-miss", "match"}));
}

// The default reads its word lists in whole words: the "\u2581not" USE-lite
// writes at the start of "notable" is no negation, the "not" of "cannot"
// written "Cannot" ("\u2581Can not") still is.
TEST_F(Verify, AWordListedInsideALongerWordIsNoNegation) {
  using V = std::vector<std::string>;
  EXPECT_EQ(verdicts("It was a notable success for the team.",
                     {"It was a remarkable success for the team.", "It was not a notable success for the team."}),
            (V{"match", "near-miss"}));
  EXPECT_EQ(verdicts("You can go home now.", {"You Cannot go home now."}), (V{"near-miss"}));
}

// A comparative of an opposite is a near-miss when nothing else changed.
TEST_F(Verify, AComparativeOfAnOppositeIsANearMiss) {
  using V = std::vector<std::string>;
  EXPECT_EQ(verdicts("Is the bigger box heavier?", {"Is the smaller box heavier?", "Is the larger box heavier?"}),
            (V{"near-miss", "match"}));
  EXPECT_EQ(verdicts("What is the hottest month in Spain?", {"What is the coldest month in Spain?"}), (V{"near-miss"}));
}

// A changed day or phase of an event is a near-miss when nothing else
// changed ("Tomorrow" is "\u2581Tom or row" to USE-lite), and a negation
// where the other text holds "not" only inside "notable" is one too.
TEST_F(Verify, AChangedDayAndANegationBesideNotableAreNearMisses) {
  using V = std::vector<std::string>;
  EXPECT_EQ(verdicts("What is the weather today?", {"What is the weather tomorrow?", "How is the weather today?"}),
            (V{"near-miss", "match"}));
  EXPECT_EQ(verdicts("Should I drink water during a workout?", {"Should I drink water after a workout?"}),
            (V{"near-miss"}));
  EXPECT_EQ(verdicts("Tomorrow the store will close at noon.", {"Yesterday the store will close at noon."}),
            (V{"near-miss"}));
  EXPECT_EQ(verdicts("It was a notable success for the team.", {"It was not a success for the team."}),
            (V{"near-miss"}));
}

// An outcome or stance turned over, or a negating adverb added, is a
// near-miss when nothing else changed.
TEST_F(Verify, AnOutcomeTurnedOverAndANegatingAdverbAreNearMisses) {
  using V = std::vector<std::string>;
  EXPECT_EQ(verdicts("The company has enough money to pay its staff.",
                     {"The company lacks enough money to pay its staff.", "The company has sufficient money to pay its staff."}),
            (V{"near-miss", "match"}));
  EXPECT_EQ(verdicts("The patient agreed to take the medication.", {"The patient refused to take the medication."}),
            (V{"near-miss"}));
  EXPECT_EQ(verdicts("The museum is open every day except Monday.",
                     {"The museum is open every day including Monday.", "The museum is open every day but Monday."}),
            (V{"near-miss", "match"}));
  EXPECT_EQ(verdicts("She could see the road in the fog.",
                     {"She could hardly see the road in the fog.", "She could see the road through the fog."}),
            (V{"near-miss", "match"}));
}

TEST_F(Verify, PlainOutputIsOneLinePerCandidate) {
  auto r = run(std::string(kTexts) + " --quiet");
  // A candidate's own tab or line break does not split its line.
  auto broken =
      run("verify --query 'Is port 6379 closed?' --candidate \"$(printf 'Is port 6379\\nclosed?\\tReally?')\" --quiet");
  ASSERT_EQ(broken.status, 0) << broken.err;
  EXPECT_EQ(std::count(broken.out.begin(), broken.out.end(), '\n'), 1) << broken.out;
  EXPECT_TRUE(broken.out.ends_with("\tIs port 6379 closed? Really?\n")) << broken.out;
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);) got.push_back(line);
  ASSERT_EQ(got.size(), 2u) << r.out;
  EXPECT_TRUE(got[0].starts_with("near-miss\t")) << got[0];
  EXPECT_TRUE(got[0].ends_with("\tIs port 6379 open by default?")) << got[0];
  EXPECT_TRUE(got[1].starts_with("match\t")) << got[1];
}

TEST_F(Verify, RejectBelowOverridesTheThresholdAndRawScoresGetNone) {
  auto all = run(std::string(kTexts) + " --reject-below 0 --json --quiet");
  ASSERT_EQ(all.status, 0) << all.err;
  const auto j = nlohmann::json::parse(all.out);
  EXPECT_EQ(j["threshold"], 0.0);
  for (const auto& v : j["results"]) EXPECT_EQ(v["verdict"], "match");

  auto raw = run(std::string(kTexts) + " --verifier f1 --json --quiet");
  ASSERT_EQ(raw.status, 0) << raw.err;
  const auto f1 = nlohmann::json::parse(raw.out);
  EXPECT_TRUE(f1["threshold"].is_null());
  for (const auto& v : f1["results"]) EXPECT_TRUE(v["verdict"].is_null()) << v;
}

TEST_F(Verify, FileModeKeepsFieldsAndScoresAsTheTextsMode) {
  const auto in = write("pairs.jsonl",
                        "{\"a\": \"Is port 6379 closed by default?\", \"b\": \"Is port 6379 open by default?\", "
                        "\"id\": \"p1\"}\n"
                        "\n"
                        "{\"a\": \"Is port 6379 closed by default?\", \"b\": \"By default, is port 6379 closed?\"}\n"
                        "{\"label\": 0, \"b\": \"the man bit the dog\", \"a\": \"the dog bit the man\"}\n");
  const auto out = dir_ / "scored.jsonl";
  auto r = run("verify --input " + in.string() + " --output " + out.string() + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["pairs"], 3);
  EXPECT_EQ(summary["matches"], 1);
  EXPECT_EQ(summary["near_misses"], 2);

  const auto rows = read_jsonl(out);
  ASSERT_EQ(rows.size(), 3u);
  {  // a line keeps its own key order, the score and verdict after it
    std::ifstream lines(out);
    std::string line;
    for (int i = 0; i < 3; ++i) std::getline(lines, line);
    EXPECT_TRUE(line.starts_with("{\"label\":0,\"b\":\"the man bit the dog\",\"a\":\"the dog bit the man\",\"score\":"))
        << line;
    EXPECT_TRUE(line.ends_with(",\"verdict\":\"near-miss\"}")) << line;
  }
  EXPECT_EQ(rows[0]["id"], "p1");
  EXPECT_EQ(rows[2]["label"], 0);
  EXPECT_EQ(rows[0]["verdict"], "near-miss");
  EXPECT_EQ(rows[1]["verdict"], "match");
  EXPECT_EQ(rows[2]["verdict"], "near-miss");

  // One pair at a time writes the same file as pairs scored side by side.
  const auto serial = dir_ / "serial.jsonl";
  auto one = run("verify --input " + in.string() + " --output " + serial.string() + " --threads 1 --quiet");
  ASSERT_EQ(one.status, 0) << one.err;
  const auto serial_rows = read_jsonl(serial);
  ASSERT_EQ(serial_rows.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(serial_rows[i]["verdict"], rows[i]["verdict"]) << i;
    EXPECT_NEAR(serial_rows[i]["score"].get<double>(), rows[i]["score"].get<double>(), 1e-6) << i;
  }

  auto texts = run(std::string(kTexts) + " --json --quiet");
  ASSERT_EQ(texts.status, 0) << texts.err;
  const auto j = nlohmann::json::parse(texts.out);
  EXPECT_NEAR(rows[0]["score"].get<double>(), j["results"][0]["score"].get<double>(), 1e-6);
  EXPECT_NEAR(rows[1]["score"].get<double>(), j["results"][1]["score"].get<double>(), 1e-6);
}

TEST_F(Verify, BadInputNamesFileAndLineAndWritesNothing) {
  const auto out = dir_ / "scored.jsonl";
  const auto missing = write("missing.jsonl", "{\"a\": \"x\", \"b\": \"y\"}\n{\"a\": \"x\"}\n");
  auto r = run("verify --input " + missing.string() + " --output " + out.string() + " --quiet");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("missing.jsonl:2: missing field 'b'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));

  const auto empty_query = write("empty.jsonl", "{\"a\": \"x\", \"b\": \"y\"}\n{\"a\": \" ?! \", \"b\": \"y\"}\n");
  r = run("verify --input " + empty_query.string() + " --output " + out.string() + " --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("empty.jsonl:2: field 'a'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));

  const auto scored = write("scored-in.jsonl", "{\"a\": \"x\", \"b\": \"y\", \"score\": 1}\n");
  r = run("verify --input " + scored.string() + " --output " + out.string() + " --quiet");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("scored-in.jsonl:1: field 'score'"), std::string::npos) << r.err;
}

TEST_F(Verify, CtrlCLeavesNoOutput) {
  std::string lines;
  for (int i = 0; i < 40000; ++i)
    lines += "{\"a\": \"Is port " + std::to_string(i) + " closed by default?\", \"b\": \"Is port " +
             std::to_string(i) + " open by default?\"}\n";
  const auto in = write("many.jsonl", lines);
  const auto out = dir_ / "scored.jsonl";
  const auto err = dir_ / "err.txt";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::execl(VERITY_BINARY, VERITY_BINARY, "verify", "--input", in.c_str(), "--output", out.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Interrupt once scoring has begun (its first log line), long before 40,000 pairs are done.
  bool started = false;
  for (int i = 0; i < 600 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream e(err);
    const std::string text((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
    started = text.find(" pairs from ") != std::string::npos;
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(started) << "verify never began scoring";
  ASSERT_TRUE(WIFEXITED(status)) << "killed by a signal instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_FALSE(fs::exists(out));
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find("scored.jsonl.tmp"), std::string::npos) << entry.path();
}

TEST_F(Verify, UsageErrorsExitTwo) {
  for (const char* args : {"verify", "verify --query 'a question'", "verify --candidate 'an answer'",
                           "verify --query 'q' --candidate 'c' --output x.jsonl", "verify --query '...' --candidate c"}) {
    auto r = run(std::string(args) + " --quiet");
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

}  // namespace
