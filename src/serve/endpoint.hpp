#pragma once
// What an HTTP endpoint is to the server: a plain function from the request (its
// body, and the path parameter of a "/{id}" route) to a status and a JSON body. The
// socket side (src/serve/server.cpp) only routes requests to these, so endpoints are
// tested and fuzzed without sockets, and other modules add their own (Server's extra
// routes) in the same shape.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace verity::serve {

struct Reply {
  int status = 200;
  std::string body;  // JSON text; errors are {"error": message}
};

struct Request {
  std::string_view body;
  std::string_view param;  // the last path segment of a "/{id}" route; else empty
};

struct Route {
  std::string method;  // "GET", "POST" or "DELETE"; a GET route answers HEAD too
  // An exact path ("/search"), or one ending in "/{id}": any single non-empty
  // segment there, passed as Request::param ("/cache/entries/{id}").
  std::string path;
  // Must not throw: every failure is a Reply (see detail/request_json.hpp's answer()).
  std::function<Reply(const Request&)> handle;
};

}  // namespace verity::serve
