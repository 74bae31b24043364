#include "serve/detail/request_json.hpp"

#include "core/log.hpp"
#include "text/utf8.hpp"

namespace verity::serve::detail {

size_t utf8_code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

json parse_body(std::string_view text) {
  if (text.empty()) throw HttpError(kBadRequest, "empty body: expected a JSON object");
  json body;
  try {
    body = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte locates the error; the library's what() repeats it with its own prefix.
    throw HttpError(kBadRequest, cat("malformed JSON at byte ", e.byte, ": ", e.what()));
  } catch (const json::exception& e) {  // out_of_range: a number like 1e999
    throw HttpError(kBadRequest, cat("malformed JSON: ", e.what()));
  }
  if (!body.is_object()) throw HttpError(kBadRequest, cat("expected a JSON object, got ", body.type_name()));
  return body;
}

std::string string_field(const json& body, const char* field, const std::string* fallback) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) {
    if (fallback) return *fallback;
    throw HttpError(kBadRequest, cat("missing field '", field, "' (a string)"));
  }
  if (!it->is_string())
    throw HttpError(kBadRequest, cat("field '", field, "' must be a string, got ", it->type_name()));
  return it->get<std::string>();
}

std::string text_field(const json& body, const char* field, size_t max_chars) {
  std::string text = string_field(body, field, nullptr);
  if (text.empty()) throw HttpError(kBadRequest, cat("field '", field, "' must not be empty"));
  if (!text::holds_content(text))
    throw HttpError(kBadRequest,
                    cat("field '", field, "' holds no letter, number or symbol (only whitespace or punctuation)"));
  size_t chars = utf8_code_points(text);
  if (chars > max_chars)
    throw HttpError(kUnprocessable, cat("field '", field, "' has ", chars, " characters, the limit is ", max_chars,
                                        " (--max-query-chars)"));
  return text;
}

void check_fields(const json& body, std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    std::string valid;
    for (const char* a : allowed) {
      known |= key == a;
      valid += valid.empty() ? a : cat(", ", a);
    }
    if (!known) throw HttpError(kBadRequest, cat("unknown field '", key, "' (valid: ", valid, ")"));
  }
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string error_body(std::string_view message) { return dump(json{{"error", std::string(message)}}); }

Reply error_reply(int status, std::string_view message) { return {status, error_body(message)}; }

Reply answer_with(const std::function<json()>& fn) {
  try {
    return {200, dump(fn())};
  } catch (const HttpError& e) {
    return error_reply(e.status, e.what());
  } catch (const ConfigError& e) {
    return error_reply(kBadRequest, e.what());
  } catch (const std::exception& e) {
    log("serve: internal error: ", e.what());
    return error_reply(kInternalError, cat("internal error: ", e.what()));
  } catch (...) {
    return error_reply(kInternalError, "internal error");
  }
}

}  // namespace verity::serve::detail
