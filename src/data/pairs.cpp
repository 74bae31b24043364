#include "data/pairs.hpp"

#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "data/lines.hpp"

namespace verity::data {

PairFile read_pairs(const std::string& path) {
  PairFile out;
  out.path = path;
  out.content_hash = for_each_content_line(path, [&](std::string_view line, size_t n) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw FormatError(cat(path, ":", n, ": malformed JSON at byte ", e.byte));
    }
    VERITY_CHECK(j.is_object(), FormatError, path, ":", n, ": expected a JSON object");
    Pair p;
    p.line = n;
    for (const char* field : {"a", "b"}) {
      auto it = j.find(field);
      VERITY_CHECK(it != j.end() && it->is_string() && !it->get<std::string>().empty(), FormatError, path, ":", n,
                   ": field \"", field, "\" must be a non-empty string");
      (field[0] == 'a' ? p.a : p.b) = it->get<std::string>();
    }
    auto label = j.find("label");
    VERITY_CHECK(label != j.end() && label->is_number_integer() && (*label == 0 || *label == 1), FormatError, path,
                 ":", n, ": field \"label\" must be 0 or 1");
    p.same = *label == 1;
    if (auto id = j.find("id"); id != j.end()) p.id = id->is_string() ? id->get<std::string>() : id->dump();
    if (p.id.empty()) p.id = cat("line-", n);
    out.pairs.push_back(std::move(p));
  });
  return out;
}

std::vector<Pair> pairs_from_triples(const std::vector<Triple>& triples) {
  std::vector<Pair> out;
  std::set<std::pair<std::string, std::string>> seen;
  auto add = [&](const Triple& t, const std::string& b, bool same) {
    if (!seen.emplace(t.query, b).second) return;
    Pair p;
    p.a = t.query;
    p.b = b;
    p.same = same;
    p.type = same ? "" : t.type;
    p.line = t.line;
    p.id = cat("line-", t.line, same ? "-positive" : "-negative");
    out.push_back(std::move(p));
  };
  for (const auto& t : triples) {
    add(t, t.positive, true);
    add(t, t.negative, false);
  }
  return out;
}

}  // namespace verity::data
