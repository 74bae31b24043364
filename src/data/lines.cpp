#include "data/lines.hpp"

#include <cstring>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"

namespace verity::data {
namespace {
bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}
}  // namespace

uint64_t for_each_content_line(const std::string& path,
                               const std::function<void(std::string_view, size_t)>& fn) {
  MappedFile file(path);
  size_t first_blank = 0;  // line number of a blank line not yet followed by content
  const char* p = reinterpret_cast<const char*>(file.bytes().data());
  const char* end = p + file.size();
  size_t line_no = 0;
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
    const char* stop = nl ? nl : end;
    std::string_view line(p, size_t(stop - p));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    p = nl ? nl + 1 : end;
    if (is_blank(line)) {
      if (first_blank == 0) first_blank = line_no;
      continue;
    }
    VERITY_CHECK(first_blank == 0, FormatError, path, ":", first_blank,
                 ": blank line before more content (line ", line_no, ")");
    fn(line, line_no);
  }
  return fnv1a64(file.bytes().data(), file.size());
}

size_t split_tabs(std::string_view line, std::string_view* fields, size_t max_fields) {
  size_t n = 0;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    std::string_view field = line.substr(start, tab == std::string_view::npos ? line.npos : tab - start);
    if (n < max_fields) fields[n] = field;
    ++n;
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return n;
}

}  // namespace verity::data
