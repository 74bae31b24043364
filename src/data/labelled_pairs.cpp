#include "data/labelled_pairs.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"
#include "data/lines.hpp"
#include "text/utf8.hpp"

namespace verity::data {
namespace {
using nlohmann::json;

std::string required_text(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  VERITY_CHECK(it != obj.end() && !it->is_null(), FormatError, where, ": missing field \"", key, "\"");
  VERITY_CHECK(it->is_string(), FormatError, where, ": field \"", key, "\" must be a string, got ",
               it->type_name());
  auto s = it->get<std::string>();
  VERITY_CHECK(s.find_first_not_of(" \t\r\n") != std::string::npos, FormatError, where, ": field \"", key,
               "\" is empty");
  return s;
}

int read_label(const json& obj, const std::string& where) {
  auto it = obj.find("label");
  VERITY_CHECK(it != obj.end() && !it->is_null(), FormatError, where, ": missing field \"label\"");
  if (it->is_boolean()) return it->get<bool>() ? 1 : 0;
  VERITY_CHECK(it->is_number_integer() || it->is_number_unsigned(), FormatError, where,
               ": field \"label\" must be 0 or 1, got ", it->dump());
  auto v = it->get<int64_t>();
  VERITY_CHECK(v == 0 || v == 1, FormatError, where, ": field \"label\" must be 0 or 1, got ", v);
  return int(v);
}

// Union-find over text keys.
struct Groups {
  std::vector<size_t> parent;
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};
}  // namespace

LabelledPairFile read_labelled_pairs(const std::string& path, bool skip_invalid) {
  LabelledPairFile out;
  out.path = path;
  out.content_hash = for_each_content_line(path, [&](std::string_view line, size_t line_no) {
    const std::string where = cat(path, ":", line_no);
    size_t bad = text::first_invalid_utf8(line);
    VERITY_CHECK(bad == std::string_view::npos, FormatError, where, ": invalid UTF-8 at byte ", bad + 1,
                 " of the line");
    json obj;
    try {
      obj = json::parse(line);
    } catch (const json::parse_error& e) {
      throw FormatError(cat(where, ": malformed JSON: ", e.what()));
    }
    VERITY_CHECK(obj.is_object(), FormatError, where, ": expected a JSON object, got ", obj.type_name());
    LabelledPair p;
    p.line = line_no;
    try {
      p.a = required_text(obj, "a", where);
      p.b = required_text(obj, "b", where);
      p.label = read_label(obj, where);
      if (auto it = obj.find("id"); it != obj.end() && !it->is_null())
        p.id = it->is_string() ? it->get<std::string>() : it->dump();
      if (auto it = obj.find("source"); it != obj.end() && !it->is_null()) {
        VERITY_CHECK(it->is_string(), FormatError, where, ": field \"source\" must be a string, got ",
                     it->type_name());
        p.source = it->get<std::string>();
      }
    } catch (const FormatError& e) {
      if (!skip_invalid) throw;
      ++out.skipped;
      if (out.skip_examples.size() < 5) out.skip_examples.push_back(e.what());
      return;
    }
    out.pairs.push_back(std::move(p));
  });
  return out;
}

std::string labelled_pair_json_line(const LabelledPair& p) {
  json j = {{"a", p.a}, {"b", p.b}, {"label", p.label}};
  if (!p.id.empty()) j["id"] = p.id;
  if (!p.source.empty()) j["source"] = p.source;
  return j.dump(-1, ' ', false, json::error_handler_t::strict);
}

void write_labelled_pairs(const std::string& path, std::span<const LabelledPair> pairs) {
  AtomicFileWriter w(path);
  for (const auto& p : pairs) {
    w.write(labelled_pair_json_line(p));
    w.write("\n");
  }
  w.commit();
}

std::string pair_group_key(const std::string& text) {
  std::string out;
  bool space = false;
  for (unsigned char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ', space = false;
    out += char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return out;
}

PairSplit split_grouped(std::span<const LabelledPair> pairs, std::array<double, 3> ratios, uint64_t seed) {
  double sum = 0;
  for (double r : ratios) {
    VERITY_CHECK(r >= 0 && std::isfinite(r), ConfigError, "split ratios must be finite and >= 0");
    sum += r;
  }
  VERITY_CHECK(std::abs(sum - 1.0) < 1e-6, ConfigError, "split ratios must sum to 1, got ", sum);
  std::unordered_map<std::string, size_t> key_ids;
  auto key_id = [&](const std::string& text) {
    auto [it, added] = key_ids.emplace(pair_group_key(text), key_ids.size());
    return it->second;
  };
  std::vector<std::pair<size_t, size_t>> ends;
  ends.reserve(pairs.size());
  for (const auto& p : pairs) ends.push_back({key_id(p.a), key_id(p.b)});
  Groups g;
  g.parent.resize(key_ids.size());
  std::iota(g.parent.begin(), g.parent.end(), size_t(0));
  for (auto [a, b] : ends) g.join(a, b);
  // Group members in input order; groups ordered by their first pair, then shuffled.
  std::unordered_map<size_t, size_t> group_of_root;
  std::vector<std::vector<size_t>> members;
  for (size_t i = 0; i < pairs.size(); ++i) {
    auto [it, added] = group_of_root.emplace(g.find(ends[i].first), members.size());
    if (added) members.emplace_back();
    members[it->second].push_back(i);
  }
  std::vector<size_t> order(members.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  // Fill train, then dev, then test up to their targets; a group that would
  // overshoot goes to the part with the largest remaining deficit.
  PairSplit out;
  std::array<double, 3> target;
  for (int k = 0; k < 3; ++k) target[k] = ratios[k] * double(pairs.size());
  std::array<double, 3> filled{};
  std::vector<std::vector<size_t>> chosen(3);
  for (size_t gi : order) {
    int best = 0;
    double best_deficit = -1e300;
    for (int k = 0; k < 3; ++k) {
      if (ratios[k] <= 0) continue;
      double deficit = (target[k] - filled[k]) / std::max(ratios[k], 1e-12);
      if (deficit > best_deficit) best_deficit = deficit, best = k;
    }
    filled[best] += double(members[gi].size());
    ++out.groups[best];
    for (size_t i : members[gi]) chosen[best].push_back(i);
  }
  for (int k = 0; k < 3; ++k) {
    std::sort(chosen[k].begin(), chosen[k].end());
    for (size_t i : chosen[k]) out.parts[k].push_back(pairs[i]);
  }
  return out;
}

}  // namespace verity::data
