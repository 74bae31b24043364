// The /cache endpoints: the socket-free handlers with every class of bad request,
// the routes of a cache-only server, and the verity binary killed with SIGKILL
// after acknowledged puts. Needs models/use-lite (required if VERITY_REQUIRE_MODELS).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "../cache/cache_fixture.hpp"
#include "cache/cache.hpp"
#include "search/text_verifier.hpp"
#include "serve/cache_handlers.hpp"
#include "serve/server.hpp"

using namespace verity;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
using CacheServeTest = verity_test::CacheFixture;
using verity_test::use_lite_dir;

json body_of(const serve::Reply& r) { return json::parse(r.body); }

struct Case {
  std::string endpoint, body;
  int status;
  std::string message;
};
}  // namespace

TEST_F(CacheServeTest, HandlersAnswerEveryRequestWithJson) {
  cache::Cache c(db(), options());
  serve::CacheLimits limits{20};
  auto put = body_of(serve::cache_put(c, limits, R"({"prompt": "What is 2+2?", "response": "4", "metadata": {"m": 1}})"));
  ASSERT_TRUE(put["id"].is_number_integer()) << put.dump();
  EXPECT_EQ(put["replaced"], false);
  EXPECT_EQ(put["namespace"], "default");
  auto again = body_of(serve::cache_put(c, limits, R"({"prompt": "What is 2+2?", "response": "four"})"));
  EXPECT_EQ(again["id"], put["id"]);
  EXPECT_EQ(again["replaced"], true);

  auto hit = body_of(serve::cache_lookup(c, limits, R"({"prompt": "What is 2+2?"})"));
  EXPECT_EQ(hit["hit"], true);
  EXPECT_EQ(hit["id"], put["id"]);
  EXPECT_EQ(hit["response"], "four");
  EXPECT_EQ(hit["prompt"], "What is 2+2?");
  EXPECT_EQ(hit["probability"], 1.0);
  EXPECT_EQ(hit["similarity"], 1.0);
  EXPECT_TRUE(hit["latency_ms"]["total"].is_number());
  auto miss = body_of(serve::cache_lookup(c, limits, R"({"prompt": "Capital of Peru?", "min_probability": 1})"));
  EXPECT_EQ(miss["hit"], false);
  for (const char* k : {"id", "response", "prompt"}) EXPECT_TRUE(miss[k].is_null()) << k;
  EXPECT_EQ(miss["best"]["id"], put["id"]);
  auto other = body_of(serve::cache_lookup(c, limits, R"({"prompt": "What is 2+2?", "namespace": "x"})"));
  EXPECT_EQ(other["hit"], false);
  EXPECT_EQ(other["namespace"], "x");
  EXPECT_EQ(hit["namespace"], "default");
  EXPECT_EQ(other["reason"], "empty");

  const std::vector<Case> bad = {
      {"put", "", 400, "empty body"},
      {"put", "{\"prompt\": ", 400, "malformed JSON at byte"},
      {"put", "[]", 400, "expected a JSON object"},
      {"put", R"({"response": "r"})", 400, "missing field 'prompt'"},
      {"put", R"({"prompt": "p"})", 400, "missing field 'response'"},
      {"put", R"({"prompt": 3, "response": "r"})", 400, "'prompt' must be a string, got number"},
      {"put", R"({"prompt": "", "response": "r"})", 400, "must not be empty"},
      {"put", R"({"prompt": " \t ", "response": "r"})", 400, "'prompt' holds no letter, number or symbol"},
      {"lookup", R"({"prompt": "?!"})", 400, "'prompt' holds no letter, number or symbol"},
      {"put", R"({"prompt": "p", "response": "r", "metadata": [1]})", 400, "'metadata' must be a JSON object"},
      {"put", R"({"prompt": "p", "response": "r", "ttl_s": 0})", 400, "'ttl_s' must be in (0"},
      {"put", R"({"prompt": "p", "response": "r", "ttl_s": "5"})", 400, "'ttl_s' must be a number"},
      {"put", R"({"prompt": "p", "response": "r", "namespace": ""})", 400, "'namespace' must not be empty"},
      {"put", R"({"prompt": "p", "response": "r", "extra": 1})", 400, "unknown field 'extra'"},
      {"put", R"({"prompt": "ééééééééééééééééééééé", "response": "r"})", 422, "21 characters, the limit is 20"},
      {"lookup", R"({"prompt": "p", "min_probability": 1.5})", 400, "'min_probability' must be in [0, 1]"},
      {"lookup", R"({"prompt": "p", "min_probability": true})", 400, "must be a number"},
      {"lookup", R"({"prompt": "p", "response": "r"})", 400, "unknown field 'response'"},
      {"lookup", "{\"prompt\": \"p\", \"namespace\": \"" + std::string(300, 'n') + "\"}", 422, "the limit is 256"},
      {"clear", R"({"namespace": 1})", 400, "'namespace' must be a string"},
      {"remove", "abc", 400, "is not a positive integer"},
      {"remove", "", 400, "is not a positive integer"},
      {"remove", "99999", 404, "no cache entry with id 99999"},
  };
  for (const auto& t : bad) {
    SCOPED_TRACE(t.endpoint + " " + t.body.substr(0, 80));
    serve::Reply r = t.endpoint == "put"      ? serve::cache_put(c, limits, t.body)
                            : t.endpoint == "lookup" ? serve::cache_lookup(c, limits, t.body)
                            : t.endpoint == "clear"  ? serve::cache_clear(c, t.body)
                                                     : serve::cache_remove(c, t.body);
    EXPECT_EQ(r.status, t.status) << r.body;
    auto j = body_of(r);
    ASSERT_TRUE(j["error"].is_string()) << r.body;
    EXPECT_NE(j["error"].get<std::string>().find(t.message), std::string::npos) << j["error"];
  }
  auto removed = body_of(serve::cache_remove(c, std::to_string(put["id"].get<int64_t>())));
  EXPECT_EQ(removed["removed"], true);
  EXPECT_EQ(body_of(serve::cache_stats(c))["entries"], 0);
  EXPECT_EQ(body_of(serve::cache_clear(c, "{}"))["removed"], 0);
}

TEST_F(CacheServeTest, ACacheOnlyServerRoutesTheCacheEndpoints) {
  serve::ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.cache_db = db();
  o.cache = options();
  serve::Server server("", o);
  int port = server.bind();
  std::thread t([&] { server.run(); });
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30);
  auto r = c.Post("/cache/put", R"({"prompt": "Is port 6379 open by default?", "response": "yes", "ttl_s": 60})",
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  int64_t id = json::parse(r->body)["id"];
  r = c.Post("/cache/lookup", R"({"prompt": "Is port 6379 open by default?"})", "application/json");
  EXPECT_EQ(json::parse(r->body)["id"], id);
  r = c.Get("/cache/stats");
  const auto stats = json::parse(r->body);
  EXPECT_EQ(stats["entries"], 1);
  r = c.Get("/health");
  const auto health = json::parse(r->body)["cache"];
  EXPECT_EQ(health["entries"], 1);
  EXPECT_EQ(health["verifier"], stats["verifier"]);  // what decides a hit, without an index too
  EXPECT_FALSE(health["verifier"].get<std::string>().empty());
  EXPECT_EQ(health["threshold"], stats["threshold"]);
  r = c.Get("/cache/lookup");
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  r = c.Get("/cache/entries/1");
  EXPECT_EQ(r->status, 405);
  r = c.Post("/search", R"({"query": "x"})", "application/json");
  EXPECT_EQ(r->status, 404);  // no index: no /search
  EXPECT_NE(json::parse(r->body)["error"].get<std::string>().find("POST /cache/lookup"), std::string::npos);
  // /verify needs no index: the cache's encoder and verifier score the texts.
  const std::vector<std::string> candidates = {"Is port 6379 closed by default?", "Is redis port 6379 open?"};
  r = c.Post("/verify", json{{"query", "Is port 6379 open by default?"}, {"candidates", candidates}}.dump(),
             "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  search::TextVerifierOptions oracle_options;
  oracle_options.verifier = options().verifier, oracle_options.encoder = options().encoder;
  search::TextVerifier oracle(oracle_options);
  auto expected = oracle.verify("Is port 6379 open by default?", candidates);
  auto verified = json::parse(r->body);
  ASSERT_EQ(verified["results"].size(), candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i)
    EXPECT_NEAR(verified["results"][i]["score"].get<double>(), expected[i].score, 1e-9) << i;
  EXPECT_EQ(verified["pipeline"], oracle.describe());
  r = c.Delete(("/cache/entries/" + std::to_string(id)).c_str());
  EXPECT_EQ(r->status, 200) << r->body;
  r = c.Post("/cache/clear", R"({"namespace": "default"})", "application/json");
  EXPECT_EQ(json::parse(r->body)["removed"], 0);
  // curl -d sends a form content type; the body is JSON all the same, and only
  // --max-body bounds it (httplib alone would cap a form body at 8 KiB).
  const std::string long_answer(20000, 'a');
  r = c.Post("/cache/put", R"({"prompt": "A long answer?", "response": ")" + long_answer + R"("})",
             "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = c.Post("/cache/lookup", R"({"prompt": "A long answer?"})", "application/x-www-form-urlencoded");
  EXPECT_EQ(json::parse(r->body)["response"], long_answer);
  server.stop();
  t.join();
}

namespace {
// Starts `verity serve --cache DB --port 0 --json`; returns the pid and sets port. With
// `plain_flags`, the encoder and verifier come as --encoder/--verifier, which a server without
// an index gives to its cache.
pid_t start_server(const std::string& db, int& port, bool plain_flags = false) {
  int out[2];
  if (pipe(out) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    std::string enc = "use-lite:" + use_lite_dir();
    execl(VERITY_BINARY, VERITY_BINARY, "serve", "--cache", db.c_str(), plain_flags ? "--encoder" : "--cache-encoder",
          enc.c_str(), plain_flags ? "--verifier" : "--cache-verifier", "f1", "--port", "0", "--json", "--quiet",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char ch;
  while (read(out[0], &ch, 1) == 1 && ch != '}') line += ch;
  close(out[0]);
  port = line.empty() ? 0 : json::parse(line + "}")["port"].get<int>();
  return pid;
}
}  // namespace

TEST_F(CacheServeTest, AcknowledgedPutsSurviveSigkill) {
  constexpr int kPuts = 40;
  std::vector<int64_t> ids;
  int port = 0;
  pid_t pid = start_server(db(), port);
  ASSERT_GT(port, 0);
  {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30);
    for (int i = 0; i < kPuts; ++i) {
      json body = {{"prompt", "durable prompt " + std::to_string(i)}, {"response", "answer " + std::to_string(i)},
                   {"namespace", i % 2 ? "odd" : "even"}};
      auto r = c.Post("/cache/put", body.dump(), "application/json");
      ASSERT_TRUE(r && r->status == 200);
      ids.push_back(json::parse(r->body)["id"]);
    }
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wstatus));

  pid = start_server(db(), port, true);
  ASSERT_GT(port, 0);
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30);
  auto stats = c.Get("/cache/stats");
  ASSERT_TRUE(stats && stats->status == 200);
  EXPECT_EQ(json::parse(stats->body)["verifier"], "f1") << stats->body;
  for (int i = 0; i < kPuts; ++i) {
    json body = {{"prompt", "durable prompt " + std::to_string(i)}, {"namespace", i % 2 ? "odd" : "even"}};
    auto r = c.Post("/cache/lookup", body.dump(), "application/json");
    ASSERT_TRUE(r && r->status == 200);
    auto j = json::parse(r->body);
    EXPECT_EQ(j["hit"], true) << i;
    EXPECT_EQ(j["id"], ids[i]);
    EXPECT_EQ(j["response"], "answer " + std::to_string(i));
  }
  EXPECT_EQ(json::parse(c.Get("/cache/stats")->body)["entries"], kPuts);
  kill(pid, SIGTERM);
  waitpid(pid, &wstatus, 0);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
}

TEST_F(CacheServeTest, ADamagedDatabaseStopsStartupWithAClearError) {
  {
    std::ofstream f(db(), std::ios::binary);
    f << "this is not a database" << std::string(8192, '\x7f');
  }
  std::string err = (dir_ / "err.txt").string();
  std::string cmd = std::string(VERITY_BINARY) + " serve --cache " + db() + " --cache-encoder use-lite:" + use_lite_dir() +
                    " --port 0 2>" + err;
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc)) << "the server crashed";
  EXPECT_EQ(WEXITSTATUS(rc), 1);
  std::ifstream in(err);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(db()), std::string::npos) << text;
  EXPECT_NE(text.find("damaged"), std::string::npos) << text;
}

TEST_F(CacheServeTest, MutatedBodiesAlwaysGetAJsonAnswer) {
  cache::Cache c(db(), options());
  serve::CacheLimits limits{200};
  const std::vector<std::string> seeds = {
      R"({"prompt": "What is 2+2?", "response": "4", "namespace": "n", "metadata": {"a": [1, 2]}, "ttl_s": 5})",
      R"({"prompt": "What is 2+2?", "namespace": "n", "min_probability": 0.5})", R"({"namespace": "n"})"};
  std::mt19937 rng(42);
  for (int i = 0; i < 300; ++i) {
    std::string body = seeds[size_t(i) % seeds.size()];
    for (int edits = 1 + int(rng() % 4); edits-- > 0;) {
      size_t at = rng() % (body.size() + 1);
      switch (rng() % 3) {
        case 0: body.insert(at, 1, char(rng() % 256)); break;
        case 1: if (at < body.size()) body.erase(at, 1); break;
        default: if (at < body.size()) body[at] = "{}[]\",:0-e.\\ntu"[rng() % 15];
      }
    }
    for (auto r : {serve::cache_put(c, limits, body), serve::cache_lookup(c, limits, body),
                   serve::cache_clear(c, body), serve::cache_remove(c, body)}) {
      SCOPED_TRACE(body);
      ASSERT_TRUE(r.status == 200 || (r.status >= 400 && r.status < 500)) << r.status << " " << r.body;
      auto j = json::parse(r.body);  // always valid JSON
      EXPECT_EQ(j.contains("error"), r.status != 200);
    }
  }
}
