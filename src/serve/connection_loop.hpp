#pragma once
// The server's connection handling (Linux epoll): one thread owns every socket and
// collects whole requests; a fixed pool of workers only ever sees complete requests.
// A client that sends slowly, or never finishes, costs a buffer until its deadline,
// never a worker, so /health answers while slow clients are connected.
//
// Per connection:
//   reading   bytes are buffered until frame_request() finds one complete request;
//             the headers must arrive within header_timeout_s and the whole request
//             within read_timeout_s of its first byte, else 408 and close. A new or
//             idle keep-alive connection that sends nothing is closed after
//             idle_timeout_s.
//   queued    the request waits for or runs on a worker. If no response is ready
//             request_timeout_s after it was queued the client gets 503 and the
//             connection closes (a worker that is still busy finishes and its
//             answer is dropped; a queued request that expired is never run).
//   writing   the response is sent without blocking; a client that does not read
//             it within write_timeout_s is cut off.
// Beyond max_connections a new connection is answered 503 and closed. Connections
// closed by the server after an error are drained briefly first, so the client
// reads the answer instead of a reset.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "serve/request_framing.hpp"

namespace verity::serve {

struct LoopOptions {
  size_t threads = 16;
  size_t max_connections = 512;
  double header_timeout_s = 5;
  double read_timeout_s = 10;
  double idle_timeout_s = 5;
  double write_timeout_s = 10;
  double request_timeout_s = 30;
  size_t keep_alive_max_requests = 1000;  // then the connection is closed
  FramingLimits framing;
};

// Turns one complete request (exactly its bytes) into the complete HTTP response.
// `last`: the connection closes after this response (say so in it). Sets `close`
// when the request asked for that. Runs on worker threads; must not throw.
using RequestProcessor = std::function<std::string(std::string_view request, bool last, bool& close)>;

// An HTTP response with a JSON body, for answers the loop gives itself.
std::string http_response(int status, std::string_view json_body, bool close,
                          std::string_view extra_headers = "");

class ConnectionLoop {
 public:
  // Takes ownership of listen_fd (a bound, listening socket).
  ConnectionLoop(int listen_fd, LoopOptions options, RequestProcessor process);
  ~ConnectionLoop();
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  // Serves until stop(): then stops accepting, closes idle and half-received
  // connections, lets queued requests finish and their answers go out, and returns.
  void run();
  // Thread-safe and idempotent; run() returns soon after. Safe before run().
  void stop();

  size_t responses() const;    // answers produced, the loop's own included
  size_t connections() const;  // connections open now

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::serve
