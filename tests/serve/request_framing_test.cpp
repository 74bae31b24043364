// Request framing: where a request ends in the bytes received so far.
#include "serve/request_framing.hpp"

#include <gtest/gtest.h>

using namespace verity::serve;
using State = Framing::State;

namespace {
FramingLimits limits(size_t header = 1024, size_t body = 64) {
  FramingLimits l;
  l.max_header_bytes = header;
  l.max_body_bytes = body;
  return l;
}
}  // namespace

TEST(RequestFraming, ContentLengthBodies) {
  const std::string head = "POST /search HTTP/1.1\r\nHost: x\r\ncontent-length: 5\r\n\r\n";
  EXPECT_EQ(frame_request(head, limits()).state, State::kIncomplete);
  EXPECT_EQ(frame_request(head, limits()).header_end, head.size());
  EXPECT_EQ(frame_request(head + "abcd", limits()).state, State::kIncomplete);
  const auto f = frame_request(head + "abcdeGET / HTTP/1.1\r\n", limits());  // a pipelined request follows
  EXPECT_EQ(f.state, State::kComplete);
  EXPECT_EQ(f.length, head.size() + 5);
  const auto get = frame_request("GET /health HTTP/1.1\r\n\r\n", limits());
  EXPECT_EQ(get.state, State::kComplete);
  EXPECT_EQ(get.length, 24u);
}

TEST(RequestFraming, IncompleteHeadersWaitUntilTheLimit) {
  EXPECT_EQ(frame_request("GET / HTTP/1.1\r\nHost:", limits()).state, State::kIncomplete);
  EXPECT_EQ(frame_request("", limits()).state, State::kIncomplete);
  const auto big = frame_request("GET / HTTP/1.1\r\nX: " + std::string(2000, 'a'), limits());
  EXPECT_EQ(big.state, State::kRejected);
  EXPECT_EQ(big.status, 431);
}

TEST(RequestFraming, AmbiguousOrOversizeFramingIsRefused) {
  struct Case {
    std::string headers;
    int status;
  };
  const std::vector<Case> cases = {
      {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", 400},
      {"Content-Length: 5\r\nContent-Length: 6\r\n", 400},
      {"Content-Length: -1\r\n", 400},
      {"Content-Length: 5x\r\n", 400},
      {"Content-Length: 65\r\n", 413},
      {"Content-Length: 99999999999999999999999\r\n", 413},
      {"Transfer-Encoding: gzip, chunked\r\n", 501},
  };
  for (const auto& c : cases) {
    const auto f = frame_request("POST /search HTTP/1.1\r\n" + c.headers + "\r\n", limits());
    EXPECT_EQ(f.state, State::kRejected) << c.headers;
    EXPECT_EQ(f.status, c.status) << c.headers << f.reason;
    EXPECT_FALSE(f.reason.empty());
  }
  // The same length twice is fine.
  EXPECT_EQ(frame_request("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", limits()).state,
            State::kComplete);
}

TEST(RequestFraming, ChunkedBodies) {
  const std::string head = "POST /search HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string body = "4\r\nabcd\r\n3;ext=1\r\nefg\r\n0\r\n\r\n";
  for (size_t cut = 0; cut < body.size(); ++cut)
    EXPECT_EQ(frame_request(head + body.substr(0, cut), limits()).state, State::kIncomplete) << cut;
  const auto f = frame_request(head + body + "next", limits());
  EXPECT_EQ(f.state, State::kComplete);
  EXPECT_EQ(f.length, head.size() + body.size());
  // Trailers end with an empty line too.
  EXPECT_EQ(frame_request(head + "1\r\na\r\n0\r\nX-T: 1\r\n\r\n", limits()).state, State::kComplete);
  EXPECT_EQ(frame_request(head + "41\r\n", limits()).status, 413);  // 65 bytes > 64
  EXPECT_EQ(frame_request(head + "zz\r\n", limits()).status, 400);
  EXPECT_EQ(frame_request(head + "2\r\nabX\r\n", limits()).status, 400);  // data longer than its size
}

TEST(RequestFraming, ExpectContinueIsLocated) {
  const std::string head =
      "POST /verify HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  const auto f = frame_request(head, limits());
  EXPECT_EQ(f.state, State::kIncomplete);
  EXPECT_TRUE(f.expect_continue);
  EXPECT_EQ(head.substr(f.expect_begin, f.expect_end - f.expect_begin), "Expect: 100-continue\r\n");
  EXPECT_EQ(frame_request(head + "{}", limits()).state, State::kComplete);
}
