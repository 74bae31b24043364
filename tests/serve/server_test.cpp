// verity serve over loopback: the in-process Server through httplib::Client, and the
// verity binary for startup and SIGTERM. The BM25 part needs no models; hybrid search
// and verification use models/use-lite when converted (required if VERITY_REQUIRE_MODELS).
#include "serve/server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/log.hpp"
#include "data/beir.hpp"
#include "search/index_builder.hpp"
#include "search/pipeline.hpp"

using namespace verity;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
const std::string kFixture = std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/tiny_beir";
const std::vector<std::string> kQueries = {"where did the cat sit", "measles vaccine mortality",
                                           "spring flooding of rivers", "dogs and cats",
                                           "query with no relevant documents"};

std::string model_dir() {
  if (const char* v = std::getenv("VERITY_MODEL_DIR"); v && *v) return std::string(v) + "/use-lite";
  return std::string(VERITY_SOURCE_DIR) + "/models/use-lite";
}

// A Server on 127.0.0.1 with a free port, served from a background thread.
class Running {
 public:
  Running(const std::string& index_dir, serve::ServerOptions o) {
    o.host = "127.0.0.1";
    o.port = 0;
    server_ = std::make_unique<serve::Server>(index_dir, o);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->run(); });
  }
  ~Running() { stop(); }
  void stop() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30);
    c.set_tcp_nodelay(true);  // the client writes headers and body separately
    c.set_keep_alive(true);
    return c;
  }
  int port() const { return port_; }
  serve::Server& server() { return *server_; }

 private:
  std::unique_ptr<serve::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

struct Reply {
  int status = 0;
  json body;
  std::string allow;
};

Reply post(httplib::Client& c, const std::string& path, const std::string& body) {
  auto r = c.Post(path.c_str(), body, "application/json");
  if (!r) return {-1, json(), ""};
  return {r->status, json::parse(r->body), r->get_header_value("Allow")};
}
Reply post(httplib::Client& c, const std::string& path, const json& body) { return post(c, path, body.dump()); }
Reply get(httplib::Client& c, const std::string& path) {
  auto r = c.Get(path.c_str());
  if (!r) return {-1, json(), ""};
  return {r->status, json::parse(r->body), r->get_header_value("Allow")};
}

class ServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_quiet(true);
    root_ = (fs::temp_directory_path() / ("verity_serve_" + std::to_string(::getpid()))).string();
    auto corpus = data::load_corpus(kFixture + "/corpus.jsonl");
    search::IndexBuildOptions o;  // BM25 only: no encoder, no dense or token parts
    search::build_index(corpus, root_ + "/bm25", o);
    if (fs::exists(model_dir() + "/verity.json")) {
      o.dense = o.tokens = true;
      o.encoder = "use-lite:" + model_dir();
      search::build_index(corpus, root_ + "/full", o);
      o.dense = false;  // records an encoder but has no dense part
      search::build_index(corpus, root_ + "/tokens", o);
      have_models_ = true;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  void require_models() {
    if (have_models_) return;
    if (std::getenv("VERITY_REQUIRE_MODELS")) FAIL() << "models/use-lite missing";
    GTEST_SKIP() << "models/use-lite not converted (scripts/setup_models.sh)";
  }
  static std::string bm25_dir() { return root_ + "/bm25"; }
  static std::string full_dir() { return root_ + "/full"; }
  static inline std::string root_;
  static inline bool have_models_ = false;
};

TEST_F(ServeTest, HealthReportsTheIndex) {
  Running s(bm25_dir(), {});
  auto c = s.client();
  auto r = get(c, "/health");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["status"], "ok");
  EXPECT_EQ(r.body["docs"], 5);
  EXPECT_EQ(r.body["parts"], json({"bm25", "docs"}));
  EXPECT_GE(r.body["uptime_s"].get<double>(), 0.0);
  EXPECT_EQ(c.Head("/health")->status, 200);
}

TEST_F(ServeTest, SearchMatchesThePipeline) {
  Running s(bm25_dir(), {});
  auto c = s.client();
  search::Pipeline oracle(bm25_dir(), {});
  for (const auto& q : kQueries) {
    auto r = post(c, "/search", json{{"query", q}, {"k", 3}});
    ASSERT_EQ(r.status, 200) << q << ": " << r.body.dump();
    auto expected = oracle.search(q, 3);
    const auto& results = r.body["results"];
    ASSERT_EQ(results.size(), expected.size()) << q;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(results[i]["rank"], i + 1);
      EXPECT_EQ(results[i]["id"], expected[i].id) << q;
      EXPECT_DOUBLE_EQ(results[i]["score"].get<double>(), expected[i].score) << q;
      EXPECT_FALSE(results[i].contains("verifier_score"));
    }
    EXPECT_EQ(r.body["query"], q);
    EXPECT_EQ(r.body["pipeline"], oracle.describe());
    for (const char* stage : {"encode", "stage1", "stage2", "total"})
      EXPECT_TRUE(r.body["latency_ms"][stage].is_number()) << stage;
  }
  auto r = post(c, "/search", json{{"query", "measles vaccine mortality"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["results"][0]["id"], "d3");
  EXPECT_EQ(r.body["results"][0]["title"], "Vaccines");
}

TEST_F(ServeTest, QueryLengthCountsCharactersNotBytes) {
  serve::ServerOptions o;
  o.max_query_chars = 10;
  Running s(bm25_dir(), o);
  auto c = s.client();
  EXPECT_EQ(post(c, "/search", json{{"query", "éééééééééé"}}).status, 200);  // 10 chars, 20 bytes
  auto r = post(c, "/search", json{{"query", "ééééééééééé"}});
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body["error"].get<std::string>().find("11 characters, the limit is 10"), std::string::npos);
}

struct BadRequest {
  std::string method, path, body;
  int status;
  std::string message;  // a substring of the error
};

TEST_F(ServeTest, EveryErrorClassIsJsonWithAClearMessage) {
  serve::ServerOptions o;
  o.max_k = 20;
  o.max_candidates = 4;
  o.max_body_bytes = 4096;
  o.pipeline.candidates = 15;
  Running s(bm25_dir(), o);
  auto c = s.client();
  const std::vector<BadRequest> cases = {
      {"POST", "/search", "{\"query\": ", 400, "malformed JSON at byte"},
      {"POST", "/search", "", 400, "empty body"},
      {"POST", "/search", "[1, 2]", 400, "expected a JSON object, got array"},
      {"POST", "/search", "{}", 400, "missing field 'query'"},
      {"POST", "/search", R"({"query": 5})", 400, "'query' must be a string, got number"},
      {"POST", "/search", R"({"query": ""})", 400, "must not be empty"},
      {"POST", "/search", R"({"query": "   "})", 400, "'query' holds no letter, number or symbol"},
      {"POST", "/verify", R"({"query": " . ", "candidates": ["a dog"]})", 400, "'query' holds no letter"},
      {"POST", "/search", R"({"query": "cat", "k": "3"})", 400, "'k' must be an integer, got string"},
      {"POST", "/search", R"({"query": "cat", "k": 2.5})", 400, "'k' must be an integer"},
      {"POST", "/search", R"({"query": "cat", "k": 0})", 400, "'k' must be at least 1"},
      {"POST", "/search", R"({"query": "cat", "k": 1e999})", 400, "malformed JSON"},  // was a 500
      {"POST", "/search", R"({"query": "cat", "k": 21})", 422, "the limit is 20 (--max-k)"},
      {"POST", "/search", R"({"query": "cat", "k": 16})", 422, "above the server's --candidates 15"},
      {"POST", "/search", R"({"query": "cat", "kk": 3})", 400, "unknown field 'kk'"},
      {"POST", "/search", R"({"query": "cat", "stage1": "magic"})", 400, "unknown stage1 'magic'"},
      {"POST", "/search", R"({"query": "cat", "stage1": 1})", 400, "'stage1' must be a string"},
      {"POST", "/search", R"({"query": "cat", "stage1": "dense"})", 400, "records no encoder"},
      {"POST", "/search", R"({"query": "cat", "verifier": "f9"})", 400, "'f9' is not available"},
      {"POST", "/search", R"({"query": "cat", "verifier": "f3:/etc/passwd"})", 400, "not available"},
      {"POST", "/search", R"({"query": "cat", "verifier": "f1"})", 400, "records no encoder"},
      {"POST", "/search", "{\"query\": \"" + std::string(5000, 'a') + "\"}", 413, "too large"},
      {"POST", "/verify", R"({"query": "cat"})", 400, "missing field 'candidates'"},
      {"POST", "/verify", R"({"query": "cat", "candidates": "a dog"})", 400, "must be an array"},
      {"POST", "/verify", R"({"query": "cat", "candidates": ["ok", 7]})", 400, "candidates[1] must be a string"},
      {"POST", "/verify", R"({"query": "cat", "candidates": ["1","2","3","4","5"]})", 422,
       "5 entries, the limit is 4"},
      {"POST", "/verify", R"({"query": "cat", "candidates": ["a dog"]})", 400, "needs a verifier"},
      {"GET", "/nowhere", "", 404, "no such endpoint: GET /nowhere"},
      {"GET", "/search", "", 405, "method GET not allowed on /search"},
      {"POST", "/health", "{}", 405, "method POST not allowed on /health"},
  };
  for (const auto& t : cases) {
    auto r = t.method == "GET" ? get(c, t.path) : post(c, t.path, t.body);
    SCOPED_TRACE(t.method + " " + t.path + " " + t.body.substr(0, 80));
    EXPECT_EQ(r.status, t.status) << r.body.dump();
    ASSERT_TRUE(r.body.is_object() && r.body["error"].is_string()) << r.body.dump();
    EXPECT_NE(r.body["error"].get<std::string>().find(t.message), std::string::npos)
        << "error was: " << r.body["error"];
    if (t.status == 405) {
      EXPECT_FALSE(r.allow.empty());
    }
  }
  // The server is still healthy after every bad request.
  EXPECT_EQ(get(c, "/health").status, 200);
}

TEST_F(ServeTest, ConcurrentClientsGetTheSingleThreadedAnswers) {
  serve::ServerOptions o;
  o.threads = 8;
  Running s(bm25_dir(), o);
  std::vector<json> expected;
  {
    auto c = s.client();
    for (const auto& q : kQueries) expected.push_back(post(c, "/search", json{{"query", q}, {"k", 5}}).body["results"]);
  }
  constexpr int kClients = 8, kRequests = 25;
  std::atomic<int> ok{0}, mismatched{0}, failed{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t)
    clients.emplace_back([&, t] {
      auto c = s.client();
      c.set_keep_alive(t % 2 == 0);  // half the clients open a connection per request
      for (int i = 0; i < kRequests; ++i) {
        size_t qi = size_t(t + i) % kQueries.size();
        auto r = post(c, "/search", json{{"query", kQueries[qi]}, {"k", 5}});
        if (r.status != 200) {
          ++failed;
        } else if (r.body["results"] != expected[qi]) {
          ++mismatched;
        } else {
          ++ok;
        }
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, kClients * kRequests);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(mismatched, 0);
  EXPECT_GE(s.server().requests_served(), size_t(kClients * kRequests));
}

TEST_F(ServeTest, StopFinishesInFlightRequestsAndReturns) {
  Running s(bm25_dir(), {});
  const std::string body = R"({"query": "dogs and cats"})";
  json expected;
  {
    auto c = s.client();
    expected = post(c, "/search", body).body["results"];
    ASSERT_EQ(expected.size(), 3u);
  }
  std::atomic<bool> go{true};
  std::atomic<int> ok{0}, bad_status{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t)
    clients.emplace_back([&] {
      while (go) {
        auto c = s.client();  // a refused connection after stop() is expected; a 5xx is not
        auto r = c.Post("/search", body, "application/json");
        if (!r) continue;
        if (r->status == 200 && json::parse(r->body)["results"] == expected) {
          ++ok;
        } else {
          ++bad_status;
        }
      }
    });
  for (int i = 0; i < 10000 && ok < 20 && bad_status == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(ok, 20);
  auto t0 = std::chrono::steady_clock::now();
  s.stop();  // returns only once run() has returned
  double stop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  go = false;
  for (auto& t : clients) t.join();
  EXPECT_EQ(bad_status, 0);
  EXPECT_LT(stop_s, 5.0);
  httplib::Client after("127.0.0.1", s.port());
  EXPECT_FALSE(after.Get("/health")) << "still accepting after stop()";
}

TEST_F(ServeTest, StopBeforeRunMakesRunReturn) {
  serve::ServerOptions o;
  o.port = 0;
  serve::Server server(bm25_dir(), o);
  server.bind();
  server.stop();
  server.run();  // must not block
  SUCCEED();
}

TEST_F(ServeTest, BindFailureNamesTheAddress) {
  Running first(bm25_dir(), {});
  serve::ServerOptions o;
  o.port = first.port();
  serve::Server second(bm25_dir(), o);
  try {
    second.bind();
    FAIL() << "bound a port already in use";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(first.port())), std::string::npos)
        << e.what();
  }
}

TEST_F(ServeTest, BadOptionsFailAtStartup) {
  serve::ServerOptions o;
  o.max_k = 0;
  EXPECT_THROW(serve::Server(bm25_dir(), o), ConfigError);
  o = {};
  o.pipeline.stage1 = "dense";  // the index has no dense part
  EXPECT_THROW(serve::Server(bm25_dir(), o), ConfigError);
  EXPECT_THROW(serve::Server(root_ + "/missing", {}), Error);
}

// --- hostile and unusual clients (raw sockets) -------------------------------------

// A raw TCP connection to the server, for requests httplib's client will not send.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size());
  }
  // Reads until `stop` appears, the peer closes, or timeout_ms passes without data.
  std::string read_until(const std::string& stop, int timeout_ms = 10000) {
    std::string got;
    char buf[4096];
    while (got.find(stop) == std::string::npos) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) break;
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, size_t(n));
    }
    return got;
  }
  // Everything until the server closes the connection.
  std::string read_all(int timeout_ms = 10000) { return read_until(std::string(1, '\0'), timeout_ms); }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

int status_of(const std::string& response) {
  return response.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(response.c_str() + 9) : -1;
}
std::string body_of(const std::string& response) {
  auto at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

TEST_F(ServeTest, SlowClientsDoNotHoldTheWorkers) {
  serve::ServerOptions o;
  o.threads = 2;
  Running s(bm25_dir(), o);
  // Four times as many clients as workers, each stuck in the middle of its headers.
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<RawClient>(s.port()));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: "));
  }
  auto c = s.client();
  c.set_read_timeout(5);  // a worker held by a slow client would block this for good
  auto r = get(c, "/health");
  EXPECT_EQ(r.status, 200);
  auto q = post(c, "/search", json{{"query", "dogs and cats"}});
  EXPECT_EQ(q.status, 200);
  EXPECT_GE(s.server().open_connections(), 8u);
}

TEST_F(ServeTest, IncompleteRequestsAreCutOffWith408) {
  serve::ServerOptions o;
  o.header_timeout_s = 0.2;
  o.read_timeout_s = 0.4;
  Running s(bm25_dir(), o);
  RawClient headers(s.port());
  ASSERT_TRUE(headers.send("GET /health HTTP/1.1\r\nHost: x"));
  auto reply = headers.read_all();
  EXPECT_EQ(status_of(reply), 408) << reply;
  EXPECT_NE(json::parse(body_of(reply))["error"].get<std::string>().find("headers not received"),
            std::string::npos);
  RawClient body(s.port());
  ASSERT_TRUE(body.send("POST /search HTTP/1.1\r\nContent-Length: 50\r\n\r\n{\"query\""));
  reply = body.read_all();
  EXPECT_EQ(status_of(reply), 408) << reply;
  EXPECT_NE(body_of(reply).find("request not received"), std::string::npos) << reply;
}

TEST_F(ServeTest, ConnectionsBeyondTheCapGet503) {
  serve::ServerOptions o;
  o.max_connections = 3;
  Running s(bm25_dir(), o);
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 3; ++i) held.push_back(std::make_unique<RawClient>(s.port()));
  // The server sees the three before the fourth: wait until it has accepted them.
  for (int i = 0; i < 1000 && s.server().open_connections() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(s.server().open_connections(), 3u);
  RawClient extra(s.port());
  ASSERT_TRUE(extra.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto reply = extra.read_all();
  EXPECT_EQ(status_of(reply), 503) << reply;
  EXPECT_NE(reply.find("Retry-After: 1"), std::string::npos);
  EXPECT_NE(body_of(reply).find("3 connections are open"), std::string::npos) << reply;
  held.clear();  // freed slots serve again
  for (int i = 0; i < 1000 && s.server().open_connections() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto c = s.client();
  EXPECT_EQ(get(c, "/health").status, 200);
}

TEST_F(ServeTest, FramingPipeliningChunkedAndExpectContinue) {
  Running s(bm25_dir(), {});
  const std::string body = R"({"query": "dogs and cats", "k": 2})";
  const std::string search = "POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
                             "\r\n\r\n" + body;
  {  // two requests in one write: two answers, in order
    RawClient c(s.port());
    ASSERT_TRUE(c.send(search + "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    auto both = c.read_all();
    auto second = both.find("HTTP/1.1 200", 1);
    ASSERT_NE(second, std::string::npos) << both;
    EXPECT_EQ(status_of(both), 200);
    EXPECT_NE(both.find("\"results\""), std::string::npos);
    EXPECT_NE(both.find("\"uptime_s\"", second), std::string::npos);
  }
  {  // a chunked body
    RawClient c(s.port());
    ASSERT_TRUE(c.send("POST /search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                       std::string("5\r\n{\"que\r\n") + "1d\r\nry\": \"dogs and cats\", \"k\": 2}\r\n0\r\n\r\n"));
    auto reply = c.read_all();
    EXPECT_EQ(status_of(reply), 200) << reply;
  }
  {  // Expect: 100-continue gets its interim answer before the body is sent
    RawClient c(s.port());
    ASSERT_TRUE(c.send("POST /search HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n"
                       "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n"));
    auto interim = c.read_until("\r\n\r\n");
    EXPECT_EQ(status_of(interim), 100) << interim;
    ASSERT_TRUE(c.send(body));
    auto reply = c.read_all();
    EXPECT_EQ(status_of(reply), 200) << reply;
    EXPECT_EQ(reply.find("100 Continue"), std::string::npos) << "answered twice: " << reply;
  }
  for (const auto& [request, status] : std::vector<std::pair<std::string, int>>{
           {"POST /search HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
           {"POST /search HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", 413},
           {"POST /search HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
           {"GET /health HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n", 431},
           {"BREW /pot HTCPCP/1.0\r\n\r\n", 400}}) {
    RawClient c(s.port());
    ASSERT_TRUE(c.send(request));
    auto reply = c.read_all();
    EXPECT_EQ(status_of(reply), status) << request.substr(0, 60) << " -> " << reply;
    EXPECT_TRUE(json::parse(body_of(reply))["error"].is_string()) << reply;
  }
  auto c = s.client();
  EXPECT_EQ(get(c, "/health").status, 200);
}

TEST_F(ServeTest, ExtraRoutesAndTheRequestTimeLimit) {
  // A route that blocks until released stands in for a handler that runs too long.
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  std::vector<serve::Route> extra = {
      {"POST", "/echo", [](const serve::Request& r) { return serve::Reply{200, json{{"got", r.body}}.dump()}; }},
      {"GET", "/stuck", [&](const serve::Request&) {
         std::unique_lock lock(m);
         cv.wait(lock, [&] { return release; });
         return serve::Reply{200, "{}"};
       }}};
  serve::ServerOptions o;
  o.request_timeout_s = 0.3;
  auto server = std::make_unique<serve::Server>(bm25_dir(), o, extra);
  int port = server->bind();
  std::thread loop([&] { server->run(); });
  httplib::Client c("127.0.0.1", port);
  auto r = post(c, "/echo", std::string("{\"a\": 1}"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["got"], "{\"a\": 1}");
  r = get(c, "/echo");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.allow, "POST");
  r = get(c, "/nowhere");
  EXPECT_NE(r.body["error"].get<std::string>().find("POST /echo"), std::string::npos) << r.body;
  r = get(c, "/stuck");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body["error"].get<std::string>().find("not answered within 0.3 s"), std::string::npos) << r.body;
  EXPECT_EQ(get(c, "/health").status, 200);  // the other workers still serve
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  server->stop();
  loop.join();
  EXPECT_THROW(serve::Server(bm25_dir(), o, {{"GET", "/health", extra[0].handle}}), ConfigError);
}

// --- with models/use-lite ---------------------------------------------------------

TEST_F(ServeTest, HybridSearchAndVerificationWithModels) {
  require_models();
  serve::ServerOptions o;
  o.pipeline.verifier = "f1";
  o.pipeline.reject_below = 0.5;
  Running s(full_dir(), o);
  auto c = s.client();

  auto r = post(c, "/search", json{{"query", "measles vaccine mortality"}, {"k", 3}, {"stage1", "hybrid"}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  auto oracle_options = o.pipeline;
  oracle_options.stage1 = "hybrid";
  search::Pipeline oracle(full_dir(), oracle_options);
  auto expected = oracle.search("measles vaccine mortality", 3);
  ASSERT_EQ(r.body["results"].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& hit = r.body["results"][i];
    EXPECT_EQ(hit["id"], expected[i].id);
    EXPECT_NEAR(hit["verifier_score"].get<double>(), *expected[i].verifier_score, 1e-9);
    EXPECT_EQ(hit["verdict"], expected[i].verdict);
  }
  EXPECT_GT(r.body["latency_ms"]["encode"].get<double>(), 0.0);

  // The same server answers a bm25-only request without verification.
  r = post(c, "/search", json{{"query", "dogs and cats"}, {"verifier", "none"}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_FALSE(r.body["results"][0].contains("verifier_score"));

  std::vector<std::string> candidates = {"Measles vaccination reduces childhood mortality.",
                                         "The river floods the valley.", "Vaccines for measles lower deaths."};
  r = post(c, "/verify", json{{"query", "measles vaccine mortality"}, {"candidates", candidates}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  auto scores = oracle.verify("measles vaccine mortality", candidates);
  ASSERT_EQ(r.body["results"].size(), candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_NEAR(r.body["results"][i]["score"].get<double>(), scores[i].score, 1e-9) << i;
    EXPECT_EQ(r.body["results"][i]["verdict"], scores[i].verdict) << i;
  }
  EXPECT_GT(scores[0].score, scores[1].score);  // in candidate order, not sorted
  r = post(c, "/verify", json{{"query", "cat"}, {"candidates", json::array()}});
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.body["results"].empty());
}

TEST_F(ServeTest, VerifyNeedsNoTokenVectorsInTheIndex) {
  require_models();
  // A BM25-only index records no encoder: /verify encodes with use-lite, and "auto"
  // picks the default verifier for it as a pipeline would.
  serve::ServerOptions o;
  o.pipeline.stage1 = o.pipeline.verifier = "auto";
  Running s(bm25_dir(), o);
  auto c = s.client();
  EXPECT_EQ(get(c, "/health").body["default"], "stage1=bm25,verifier=none");
  const std::string query = "the dog bit the man";
  const std::vector<std::string> candidates = {"the man was bitten by the dog", "the man bit the dog"};
  auto r = post(c, "/verify", json{{"query", query}, {"candidates", candidates}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  search::TextVerifierOptions oracle_options;
  oracle_options.verifier = "default", oracle_options.encoder = "use-lite";
  search::TextVerifier oracle(oracle_options);
  EXPECT_EQ(r.body["pipeline"], oracle.describe());  // verifier=f5:...default.valn,encoder=use-lite:...,threshold=T
  auto expected = oracle.verify(query, candidates);
  ASSERT_EQ(r.body["results"].size(), candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_NEAR(r.body["results"][i]["score"].get<double>(), expected[i].score, 1e-9) << i;
    EXPECT_EQ(r.body["results"][i]["verdict"], expected[i].verdict) << i;
  }
  // A built-in verifier named by the request shares the encoder; uncalibrated, it gives no verdicts.
  r = post(c, "/verify", json{{"query", query}, {"candidates", candidates}, {"verifier", "f1"}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  oracle_options.verifier = "f1";
  search::TextVerifier f1_oracle(oracle_options);
  auto f1 = f1_oracle.verify(query, candidates);
  for (size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_NEAR(r.body["results"][i]["score"].get<double>(), f1[i].score, 1e-9) << i;
    EXPECT_FALSE(r.body["results"][i].contains("verdict")) << i;
  }
  r = post(c, "/verify", json{{"query", query}, {"candidates", candidates}, {"verifier", "f5:/x.valn"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["error"].get<std::string>().find("or 'auto'"), std::string::npos) << r.body.dump();
}

TEST_F(ServeTest, AutoServesTheTwoStageDefaultUnderItsResolvedNames) {
  require_models();
  serve::ServerOptions o;
  o.pipeline.stage1 = o.pipeline.verifier = "auto";
  Running s(full_dir(), o);
  auto c = s.client();
  auto health = get(c, "/health");
  ASSERT_EQ(health.status, 200);
  EXPECT_EQ(health.body["default"], "stage1=hybrid,verifier=default");
  // A request leaving them out and one naming what auto became get the same answer.
  auto left_out = post(c, "/search", json{{"query", "where did the cat sit"}, {"k", 3}});
  auto named = post(c, "/search", json{{"query", "where did the cat sit"}, {"k", 3}, {"stage1", "hybrid"},
                                       {"verifier", "default"}});
  ASSERT_EQ(left_out.status, 200) << left_out.body.dump();
  ASSERT_EQ(named.status, 200) << named.body.dump();
  auto without_timings = [](json j) {
    j.erase("latency_ms");
    return j;
  };
  EXPECT_EQ(without_timings(left_out.body), without_timings(named.body));
  EXPECT_NE(left_out.body["pipeline"].get<std::string>().find("verifier=default"), std::string::npos);
  for (const auto& hit : left_out.body["results"]) EXPECT_TRUE(hit.contains("verdict")) << hit.dump();
  // On a BM25-only index, auto is stage 1 alone.
  Running bare(bm25_dir(), o);
  auto bc = bare.client();
  EXPECT_EQ(get(bc, "/health").body["default"], "stage1=bm25,verifier=none");
}

TEST_F(ServeTest, APartMissingFromTheIndexIsNamed) {
  require_models();
  serve::ServerOptions o;
  o.pipeline.verifier = "f1";
  Running s(root_ + "/tokens", o);
  auto c = s.client();
  EXPECT_EQ(post(c, "/search", json{{"query", "cat"}}).status, 200);
  auto r = post(c, "/search", json{{"query", "cat"}, {"stage1", "hybrid"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["error"].get<std::string>().find("no 'dense' part"), std::string::npos) << r.body;
  // A failed open is not cached as success: the working pipelines still answer.
  EXPECT_EQ(post(c, "/search", json{{"query", "cat"}, {"verifier", "none"}}).status, 200);
}

TEST_F(ServeTest, StopWaitsForASlowInFlightVerification) {
  require_models();
  serve::ServerOptions o;
  o.pipeline.verifier = "f1";
  // What is tested is stop(), not the time limits: under a sanitizer on a
  // loaded machine the verification can take longer than the default 30 s.
  o.request_timeout_s = 1800;
  Running s(full_dir(), o);
  std::vector<std::string> candidates(64, std::string(400, 'x') + " measles vaccination mortality");
  json body = {{"query", "measles vaccine mortality"}, {"candidates", candidates}};
  int status = 0;
  std::thread client([&] {
    auto c = s.client();
    c.set_read_timeout(1800);
    auto r = c.Post("/verify", body.dump(), "application/json");
    status = r ? r->status : -1;
  });
  // Wait until the handler is running, then stop: the reply must still arrive.
  for (int i = 0; i < 5000; ++i) {
    auto h = httplib::Client("127.0.0.1", s.port()).Get("/health");
    if (h && json::parse(h->body)["in_flight"].get<int>() > 1) break;  // > 1: /health counts itself
    if (status != 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  s.stop();
  client.join();
  EXPECT_EQ(status, 200);
}

// --- the verity binary -------------------------------------------------------------

TEST_F(ServeTest, BinaryServesAndExitsZeroOnSigterm) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    std::string index = bm25_dir();
    execl(VERITY_BINARY, VERITY_BINARY, "serve", "--index", index.c_str(), "--port", "0", "--json",
          "--quiet", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char ch;
  while (read(out[0], &ch, 1) == 1 && ch != '}') line += ch;  // one JSON object
  close(out[0]);
  auto started = json::parse(line + "}");
  int port = started["port"];
  ASSERT_GT(port, 0);
  httplib::Client c("127.0.0.1", port);
  auto r = post(c, "/search", json{{"query", "measles vaccine mortality"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["results"][0]["id"], "d3");

  // SIGTERM while clients keep sending: the server drains and exits 0.
  std::atomic<bool> go{true};
  std::atomic<int> bad_status{0};
  std::thread load([&] {
    while (go) {
      httplib::Client lc("127.0.0.1", port);
      auto lr = lc.Post("/search", R"({"query": "dogs"})", "application/json");
      if (lr && lr->status != 200) ++bad_status;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  go = false;
  load.join();
  ASSERT_TRUE(WIFEXITED(wstatus)) << "killed by signal " << WTERMSIG(wstatus);
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
  EXPECT_EQ(bad_status, 0);
}

TEST_F(ServeTest, BinaryRejectsBadFlagsWithUsageExit) {
  std::string cmd = std::string(VERITY_BINARY) + " serve --index " + bm25_dir() +
                    " --port 0 --stage1 dense --quiet 2>/dev/null";
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);  // ConfigError: the index has no dense part
}

}  // namespace
