#pragma once
// What an HTTP endpoint is to the server: a plain function from the request body
// to a status and a JSON body. The socket side (src/serve/server.cpp) only routes
// requests to these, so endpoints are tested and fuzzed without sockets, and other
// modules add their own (Server's extra routes) in the same shape.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace verity::serve {

struct Reply {
  int status = 200;
  std::string body;  // JSON text; errors are {"error": message}
};

struct Route {
  std::string method;  // "GET" or "POST"; a GET route answers HEAD too
  std::string path;    // exact path, e.g. "/search"
  // Must not throw: every failure is a Reply (see detail/json_api.hpp's answer()).
  std::function<Reply(std::string_view body)> handle;
};

}  // namespace verity::serve
