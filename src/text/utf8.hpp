#pragma once
// Minimal UTF-8 helpers shared by loaders and the analyzer (no utf8proc in
// this header, so callers do not inherit that dependency).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace verity::text {

// Byte offset of the first byte that does not start a well-formed UTF-8
// sequence (overlong forms, surrogates, code points above U+10FFFF and
// truncated sequences are all invalid), or std::string_view::npos if the
// whole input is valid. Loaders use it to report "file:line: invalid UTF-8
// at byte N".
size_t first_invalid_utf8(std::string_view s);

// True if every byte is < 0x80 (ASCII is always valid UTF-8).
bool is_ascii(std::string_view s);

// True if the text holds a letter, a number or a symbol (an emoji, "$", "+"):
// not only whitespace, punctuation or control characters. A query, candidate or
// cache prompt without one has nothing to match ("   ", "?!"), so the product
// refuses it as empty. Ill-formed bytes count as nothing.
bool holds_content(std::string_view s);

// Appends the UTF-8 encoding of a valid code point (no surrogates, <= U+10FFFF).
void append_utf8(std::string& out, char32_t cp);

}  // namespace verity::text
