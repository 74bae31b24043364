#pragma once
// Request parsing shared by every endpoint: the JSON body, typed field
// readers and the HttpError that handlers turn into {"error": message}.
// Socket-free, so handlers built on it can be called (and fuzzed) directly.
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace verity::serve::detail {

using json = nlohmann::json;

// A request that cannot be served as sent: answered with `status` and {"error": message}.
struct HttpError : Error {
  HttpError(int status, const std::string& message) : Error(message), status(status) {}
  int status;
};

inline constexpr int kBadRequest = 400, kNotFound = 404, kUnprocessable = 422;

size_t utf8_code_points(std::string_view s);

// The body as a JSON object; 400 when empty, malformed or not an object.
json parse_body(std::string_view body);

// A string field; missing or null gives *fallback, or a 400 when fallback is null.
// A wrong type is a 400 naming the field and the type received.
std::string string_field(const json& body, const char* field, const std::string* fallback);

// 400 for a field outside `allowed`, listing the valid ones.
void check_fields(const json& body, std::initializer_list<const char*> allowed);

// Compact JSON; invalid UTF-8 in strings is replaced rather than thrown on.
std::string dump(const json& j);

// {"error": message} as text.
std::string error_body(const std::string& message);

}  // namespace verity::serve::detail
