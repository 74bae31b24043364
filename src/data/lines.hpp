#pragma once
// Line-oriented text files (JSONL, TSV, TREC runs) with one shared blank-line rule:
// blank lines at the end of a file are ignored, a blank line followed by more content
// is a FormatError ("<path>:<line>: blank line before more content").
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace verity::data {

// Calls fn(line, line_number) for each non-blank line (1-based numbers, '\n' and a
// trailing '\r' removed). Returns fnv1a64 of the raw file bytes, for provenance.
uint64_t for_each_content_line(const std::string& path,
                               const std::function<void(std::string_view, size_t)>& fn);

// Splits on single '\t' characters (empty fields are kept, so "a\t\tb" has three).
size_t split_tabs(std::string_view line, std::string_view* fields, size_t max_fields);

}  // namespace verity::data
