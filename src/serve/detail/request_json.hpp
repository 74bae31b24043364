#pragma once
// Private to src/serve (includes nlohmann/json): request parsing and the JSON
// conventions every endpoint shares, so that each endpoint's errors look alike.
// Socket-free, so handlers built on it are called (and fuzzed) directly. An
// endpoint body is
//   return answer([&] { json request = parse_body(body); ...; return json_response; });
// HttpError carries its status; ConfigError (a bad stage1/verifier value, a part the
// index lacks) is a 400; anything else (a damaged database, an I/O failure) is a
// logged 500, and the server stays up.
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "serve/endpoint.hpp"

namespace verity::serve::detail {

using json = nlohmann::json;

inline constexpr int kBadRequest = 400, kNotFound = 404, kUnprocessable = 422, kInternalError = 500;

// A request that cannot be served as sent: answered with `status` and {"error": message}.
struct HttpError : Error {
  HttpError(int status, const std::string& message) : Error(message), status(status) {}
  int status;
};

size_t utf8_code_points(std::string_view s);

// The body as a JSON object; 400 when empty, malformed (naming the byte offset) or
// not an object.
json parse_body(std::string_view body);

// A string field; missing or null gives *fallback, or a 400 when fallback is null.
// A wrong type is a 400 naming the field and the type received.
std::string string_field(const json& body, const char* field, const std::string* fallback);

// A required, non-empty string field of at most max_chars code points (a 422 above,
// naming --max-query-chars, the server option that sets the limit).
std::string text_field(const json& body, const char* field, size_t max_chars);

// 400 for a field outside `allowed`, listing the valid ones.
void check_fields(const json& body, std::initializer_list<const char*> allowed);

// Compact JSON; invalid UTF-8 in strings is replaced rather than thrown on.
std::string dump(const json& j);

// {"error": message} as text, and as a Reply with its status.
std::string error_body(std::string_view message);
Reply error_reply(int status, std::string_view message);

// Runs fn (returning the 200 body as json) and turns every failure into a Reply.
Reply answer_with(const std::function<json()>& fn);
template <typename Fn>
Reply answer(Fn&& fn) {
  return answer_with(std::function<json()>(std::forward<Fn>(fn)));
}

}  // namespace verity::serve::detail
