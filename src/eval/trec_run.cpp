#include "eval/trec_run.hpp"

#include <charconv>
#include <cmath>
#include <unordered_map>

#include "core/error.hpp"
#include "core/io.hpp"
#include "data/lines.hpp"

namespace verity::eval {
namespace {

bool has_whitespace(std::string_view s) {
  return s.find_first_of(" \t\r\n\f\v") != std::string_view::npos;
}

void check_token(std::string_view value, std::string_view what, const std::string& path) {
  VERITY_CHECK(!value.empty() && !has_whitespace(value), FormatError, path, ": cannot write ",
               what, " \"", value, "\": TREC run fields must be non-empty and without whitespace");
}

// Splits on runs of spaces/tabs; returns the number of fields (may exceed max_fields).
size_t split_whitespace(std::string_view line, std::string_view* fields, size_t max_fields) {
  size_t n = 0, i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) break;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (n < max_fields) fields[n] = line.substr(start, i - start);
    ++n;
  }
  return n;
}

}  // namespace

void write_trec_run(const std::string& path, const Run& run, const std::string& tag) {
  check_token(tag, "tag", path);
  AtomicFileWriter out(path);
  std::vector<ScoredDoc> ranked;
  std::string line;
  char score[64];
  for (const auto& [qid, docs] : run) {
    check_token(qid, "query id", path);
    ranked = docs;
    rank_in_place(ranked, qid);
    for (size_t r = 0; r < ranked.size(); ++r) {
      check_token(ranked[r].doc_id, "document id", path);
      auto res = std::to_chars(score, score + sizeof score, ranked[r].score);
      VERITY_ASSERT(res.ec == std::errc());
      line.clear();
      line.append(qid).append(" Q0 ").append(ranked[r].doc_id).append(" ");
      line.append(std::to_string(r + 1)).append(" ");
      line.append(score, res.ptr).append(" ").append(tag).append("\n");
      out.write(line);
    }
  }
  out.commit();
}

Run read_trec_run(const std::string& path) {
  Run run;
  // (qid, docid) -> line, to name the first occurrence of a duplicate.
  std::unordered_map<std::string, size_t> line_of;
  data::for_each_content_line(path, [&](std::string_view line, size_t line_no) {
    std::string_view f[6];
    size_t n = split_whitespace(line, f, 6);
    VERITY_CHECK(n == 6, FormatError, path, ":", line_no,
                 ": expected 6 fields (qid Q0 docid rank score tag), found ", n);
    long long rank = 0;
    auto rr = std::from_chars(f[3].data(), f[3].data() + f[3].size(), rank);
    VERITY_CHECK(rr.ec == std::errc() && rr.ptr == f[3].data() + f[3].size(), FormatError, path,
                 ":", line_no, ": rank \"", f[3], "\" is not an integer");
    double score = 0;
    auto sr = std::from_chars(f[4].data(), f[4].data() + f[4].size(), score);
    VERITY_CHECK(sr.ec == std::errc() && sr.ptr == f[4].data() + f[4].size() && std::isfinite(score),
                 FormatError, path, ":", line_no, ": score \"", f[4], "\" is not a finite number");
    std::string key = cat(f[0], '\0', f[2]);
    auto [it, inserted] = line_of.emplace(std::move(key), line_no);
    VERITY_CHECK(inserted, FormatError, path, ":", line_no, ": query \"", f[0],
                 "\" lists document \"", f[2], "\" again (first at line ", it->second, ")");
    run[std::string(f[0])].push_back({std::string(f[2]), score});
  });
  return run;
}

}  // namespace verity::eval
