#pragma once
// Where one HTTP/1.1 request ends in the bytes a connection has sent so far, so the
// server's event loop can collect whole requests without holding a worker thread
// (a slow client then costs a buffer, not a worker). It reads only what framing
// needs: the end of the header block, Content-Length, Transfer-Encoding: chunked
// and Expect: 100-continue; httplib parses the complete request afterwards.
// Ambiguous framing (Content-Length with Transfer-Encoding, two different lengths,
// a non-chunked transfer coding) is refused, so no two readers can disagree about
// where a request ends.
#include <cstddef>
#include <string>
#include <string_view>

namespace verity::serve {

struct FramingLimits {
  size_t max_header_bytes = 16 * 1024;  // request line + headers + blank line
  size_t max_body_bytes = 64 * 1024;    // decoded body (sum of chunk sizes when chunked)
};

struct Framing {
  enum class State {
    kIncomplete,  // more bytes needed; header_end > 0 once the headers are complete
    kComplete,    // one request occupies bytes [0, length)
    kRejected,    // answer `status` with `reason` and close the connection
  };
  State state = State::kIncomplete;
  size_t length = 0;      // kComplete: bytes of this request (headers + body)
  size_t header_end = 0;  // bytes of the header block incl. the blank line; 0 = not complete yet
  bool expect_continue = false;  // the client waits for "100 Continue" before sending the body
  // The Expect header line [begin, end) (its CRLF included), for removal once the
  // server has answered it; empty when absent.
  size_t expect_begin = 0, expect_end = 0;
  int status = 0;  // kRejected: 400, 413, 431 or 501
  std::string reason;
};

// Frames the request that starts at bytes[0]. Never reads past bytes.size().
Framing frame_request(std::string_view bytes, const FramingLimits& limits);

}  // namespace verity::serve
