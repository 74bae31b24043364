#include "serve/request_framing.hpp"

#include <cstdint>

#include "core/error.hpp"

namespace verity::serve {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Decimal without sign or spaces, at most `limit`; false on anything else.
bool parse_length(std::string_view s, uint64_t limit, uint64_t& out, bool& too_large) {
  if (s.empty()) return false;
  uint64_t v = 0;
  too_large = false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (v > (UINT64_MAX - 9) / 10) {
      too_large = true;
      continue;  // keep checking that the rest are digits
    }
    v = v * 10 + uint64_t(c - '0');
  }
  too_large = too_large || v > limit;
  out = v;
  return true;
}

Framing reject(int status, std::string reason) {
  Framing f;
  f.state = Framing::State::kRejected;
  f.status = status;
  f.reason = std::move(reason);
  return f;
}

// Scans a chunked body starting at `pos`. kComplete with length set, kIncomplete,
// or kRejected.
Framing frame_chunked(std::string_view b, size_t pos, Framing f, size_t max_body) {
  uint64_t body = 0;
  for (;;) {
    size_t eol = b.find("\r\n", pos);
    if (eol == std::string_view::npos) {
      if (b.size() - pos > 1024) return reject(400, "chunk size line longer than 1024 bytes");
      return f;  // incomplete
    }
    std::string_view line = b.substr(pos, eol - pos);
    if (size_t semi = line.find(';'); semi != std::string_view::npos) line = line.substr(0, semi);
    line = trim(line);
    if (line.empty() || line.size() > 16) return reject(400, "malformed chunk size");
    uint64_t size = 0;
    for (char c : line) {
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return reject(400, "malformed chunk size");
      size = size * 16 + uint64_t(d);
    }
    pos = eol + 2;
    if (size == 0) break;
    if (size > max_body || body + size > max_body) return reject(413, "request body too large");
    body += size;
    if (b.size() - pos < size + 2) return f;  // chunk data or its CRLF still missing
    if (b.compare(pos + size, 2, "\r\n") != 0) return reject(400, "chunk data not followed by CRLF");
    pos += size + 2;
  }
  // Trailer fields, then an empty line.
  for (size_t trailer_bytes = 0;;) {
    size_t eol = b.find("\r\n", pos);
    if (eol == std::string_view::npos) {
      if (b.size() - pos > 8192) return reject(431, "chunked trailer longer than 8192 bytes");
      return f;
    }
    trailer_bytes += eol + 2 - pos;
    if (trailer_bytes > 8192) return reject(431, "chunked trailer longer than 8192 bytes");
    bool last = eol == pos;
    pos = eol + 2;
    if (last) break;
  }
  f.state = Framing::State::kComplete;
  f.length = pos;
  return f;
}

}  // namespace

Framing frame_request(std::string_view b, const FramingLimits& limits) {
  Framing f;
  const size_t head_end = b.find("\r\n\r\n");
  if (head_end == std::string_view::npos || head_end + 4 > limits.max_header_bytes) {
    if (b.size() >= limits.max_header_bytes || (head_end != std::string_view::npos))
      return reject(431, cat("request headers exceed ", limits.max_header_bytes, " bytes"));
    return f;
  }
  f.header_end = head_end + 4;
  uint64_t content_length = 0;
  bool have_length = false, chunked = false, other_coding = false;
  // Header lines: skip the request line.
  size_t pos = b.find("\r\n");
  while (pos < head_end) {
    const size_t begin = pos + 2, end = b.find("\r\n", begin);
    const std::string_view line = b.substr(begin, end - begin);
    pos = end;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // httplib skips such lines as well
    const std::string_view name = line.substr(0, colon), value = trim(line.substr(colon + 1));
    if (iequals(name, "Content-Length")) {
      uint64_t v = 0;
      bool too_large = false;
      if (!parse_length(value, limits.max_body_bytes, v, too_large))
        return reject(400, cat("malformed Content-Length '", value.substr(0, 32), "'"));
      if (have_length && v != content_length) return reject(400, "conflicting Content-Length headers");
      if (too_large) return reject(413, "request body too large");
      content_length = v;
      have_length = true;
    } else if (iequals(name, "Transfer-Encoding")) {
      // Only "chunked" alone is supported (RFC 9112: chunked must be the final coding).
      if (iequals(value, "chunked")) {
        chunked = true;
      } else {
        other_coding = true;
      }
    } else if (iequals(name, "Expect") && iequals(value, "100-continue")) {
      f.expect_continue = true;
      f.expect_begin = begin;
      f.expect_end = end + 2;
    }
  }
  if (other_coding) return reject(501, "only the chunked transfer coding is supported");
  if (chunked && have_length) return reject(400, "both Content-Length and Transfer-Encoding");
  if (chunked) return frame_chunked(b, f.header_end, f, limits.max_body_bytes);
  if (b.size() - f.header_end < content_length) return f;
  f.state = Framing::State::kComplete;
  f.length = f.header_end + size_t(content_length);
  return f;
}

}  // namespace verity::serve
