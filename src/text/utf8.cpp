#include "text/utf8.hpp"

#include <utf8proc.h>

namespace verity::text {

size_t first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    char32_t cp, min_cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min_cp = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min_cp = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min_cp = 0x10000;
    } else {
      return i;  // stray continuation byte or 0xF8..0xFF
    }
    if (n - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

bool is_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

bool holds_content(std::string_view s) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = utf8proc_ssize_t(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = -1;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) n = 1, cp = -1;  // an ill-formed byte: skip it
    if (cp >= 0) switch (utf8proc_category(cp)) {
        case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND:
        case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO: case UTF8PROC_CATEGORY_SM:
        case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SK: case UTF8PROC_CATEGORY_SO:
          return true;
        default:
          break;
      }
    p += n, left -= n;
  }
  return false;
}

}  // namespace verity::text
