#pragma once
// Private to src/serve (includes nlohmann/json): the JSON conventions every endpoint
// shares, so that each endpoint's errors look alike. An endpoint body is
//   return answer([&] { json request = parse_body(body); ...; return json_response; });
// HttpError carries its status; ConfigError (a bad stage1/verifier value, a part the
// index lacks) is a 400; anything else is a logged 500.
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "serve/endpoint.hpp"

namespace verity::serve::detail {

using json = nlohmann::json;

inline constexpr int kBadRequest = 400, kUnprocessable = 422, kInternalError = 500;

// A request that cannot be served as sent: answered with `status` and {"error": message}.
struct HttpError : Error {
  HttpError(int status, const std::string& message) : Error(message), status(status) {}
  int status;
};

// The body as a JSON object; 400 naming the byte offset when it is not one.
json parse_body(std::string_view body);
// Field readers: a wrong type is a 400 naming the field and the type received.
// A missing or null field returns *fallback, or is a 400 when fallback is null.
std::string string_field(const json& body, const char* field, const std::string* fallback);
// 400 naming the first field not in `allowed`, listing the valid ones.
void check_fields(const json& body, std::initializer_list<const char*> allowed);
// JSON text of j; invalid UTF-8 in strings is replaced, never thrown.
std::string dump(const json& j);
Reply error_reply(int status, std::string_view message);

// Runs fn (returning the 200 body as json) and turns every failure into a Reply.
Reply answer_with(const std::function<json()>& fn);
template <typename Fn>
Reply answer(Fn&& fn) {
  return answer_with(std::function<json()>(std::forward<Fn>(fn)));
}

}  // namespace verity::serve::detail
