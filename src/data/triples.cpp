#include "data/triples.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"
#include "data/lines.hpp"
#include "text/utf8.hpp"

namespace verity::data {
namespace {

using nlohmann::json;
constexpr size_t kMaxSkipExamples = 5;

// Why a parsed object is not a valid triple; empty when it is.
std::string invalid_reason(const json& obj, Triple& t) {
  for (auto [key, dest] : {std::pair{"query", &t.query}, std::pair{"positive", &t.positive},
                           std::pair{"negative", &t.negative}}) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return cat("missing field \"", key, "\"");
    if (!it->is_string()) return cat("field \"", key, "\" must be a string, got ", it->type_name());
    *dest = it->get<std::string>();
    if (dest->find_first_not_of(" \t\r\n") == std::string::npos) return cat("field \"", key, "\" is empty");
  }
  for (auto [key, dest] : {std::pair{"type", &t.type}, std::pair{"source", &t.source}}) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) continue;
    if (!it->is_string()) return cat("field \"", key, "\" must be a string, got ", it->type_name());
    *dest = it->get<std::string>();
  }
  if (auto it = obj.find("rank"); it != obj.end() && !it->is_null()) {
    if (!it->is_number_integer()) return cat("field \"rank\" must be an integer, got ", it->type_name());
    t.rank = it->get<int64_t>();
  }
  if (auto it = obj.find("score"); it != obj.end() && !it->is_null()) {
    if (!it->is_number()) return cat("field \"score\" must be a number, got ", it->type_name());
    t.score = it->get<double>();
  }
  return {};
}

}  // namespace

TripleFile read_triples(const std::string& path, const TripleReadOptions& options) {
  TripleFile out;
  out.path = path;
  out.content_hash = for_each_content_line(path, [&](std::string_view line, size_t line_no) {
    size_t bad = text::first_invalid_utf8(line);
    VERITY_CHECK(bad == std::string_view::npos, FormatError, path, ":", line_no,
                 ": invalid UTF-8 at byte ", bad + 1, " of the line");
    json obj;
    try {
      obj = json::parse(line);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
      throw FormatError(cat(path, ":", line_no, ": malformed JSON: ", e.what()));
    }
    Triple t;
    t.line = line_no;
    std::string reason = obj.is_object() ? invalid_reason(obj, t)
                                         : cat("expected a JSON object, got ", obj.type_name());
    if (reason.empty()) {
      out.triples.push_back(std::move(t));
      return;
    }
    VERITY_CHECK(options.skip_invalid, FormatError, path, ":", line_no, ": ", reason);
    ++out.skipped;
    ++out.skipped_by_reason[reason];
    if (out.skip_examples.size() < kMaxSkipExamples) out.skip_examples.push_back(cat(path, ":", line_no, ": ", reason));
  });
  return out;
}

std::string triple_json_line(const Triple& t) {
  json j = {{"query", t.query}, {"positive", t.positive}, {"negative", t.negative}};
  if (!t.type.empty()) j["type"] = t.type;
  if (!t.source.empty()) j["source"] = t.source;
  if (t.rank) j["rank"] = *t.rank;
  if (t.score) j["score"] = *t.score;
  return j.dump(-1, ' ', false, json::error_handler_t::strict);
}

void write_triples(const std::string& path, std::span<const Triple> triples) {
  AtomicFileWriter out(path);
  for (const auto& t : triples) {
    out.write(triple_json_line(t));
    out.write("\n");
  }
  out.commit();
}

}  // namespace verity::data
