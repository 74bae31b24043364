#include "text/sentencepiece.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/error.hpp"
#include "core/io.hpp"
#include "text/case_folds.hpp"
#include "text/surface.hpp"

namespace verity::text {
namespace {

constexpr std::string_view kWordBoundary = "\xE2\x96\x81";  // U+2581 "▁"
constexpr const char* kFormat = "verity-sentencepiece";
constexpr int kFormatVersion = 1;

// Byte offset of the first invalid UTF-8 sequence, or npos.
size_t invalid_utf8_offset(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    utf8proc_int32_t cp;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + pos),
                              utf8proc_ssize_t(s.size() - pos), &cp);
    if (n <= 0) return pos;
    pos += size_t(n);
  }
  return std::string_view::npos;
}

std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    utf8proc_int32_t cp;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + pos),
                              utf8proc_ssize_t(s.size() - pos), &cp);
    VERITY_CHECK(n > 0, FormatError, "invalid UTF-8 at byte ", pos);
    out.push_back(char32_t(cp));
    pos += size_t(n);
  }
  return out;
}

// What JS String.prototype.length reports: astral code points count twice.
size_t utf16_length(std::string_view s) {
  size_t n = 0;
  for (char32_t cp : code_points(s)) n += cp >= 0x10000 ? 2 : 1;
  return n;
}

}  // namespace

std::string sentencepiece_normalize(std::string_view text) {
  size_t bad = invalid_utf8_offset(text);
  VERITY_CHECK(bad == std::string_view::npos, FormatError, "invalid UTF-8 at byte ", bad);
  utf8proc_uint8_t* mapped = nullptr;
  auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                        utf8proc_ssize_t(text.size()), &mapped,
                        utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  VERITY_CHECK(n >= 0, FormatError, "NFKC normalization failed: ", utf8proc_errmsg(n));
  std::string nfkc(reinterpret_cast<const char*>(mapped), size_t(n));
  std::free(mapped);
  if (nfkc.empty()) return nfkc;
  std::string out(kWordBoundary);
  out.reserve(nfkc.size() + 16);
  for (char c : nfkc) {
    if (c == ' ') out += kWordBoundary;
    else out += c;
  }
  return out;
}

// A code-point trie; each node that ends a piece remembers its id and score.
struct SentencePieceTokenizer::Impl {
  std::vector<SentencePiece> pieces;
  std::vector<size_t> utf16_lengths;  // per id, for the reference's back-tracking
  size_t reserved = 0;
  struct Node {
    int32_t id = -1;  // -1: no piece ends here
    double score = 0;
  };
  std::vector<Node> nodes{Node{}};
  std::unordered_map<uint64_t, int32_t> edges;  // (node << 21 | code point) -> child

  int32_t child(int32_t node, char32_t cp) const {
    auto it = edges.find((uint64_t(node) << 21) | cp);
    return it == edges.end() ? -1 : it->second;
  }
  void insert(const std::vector<char32_t>& symbols, int32_t id, double score) {
    int32_t node = 0;
    for (char32_t cp : symbols) {
      int32_t next = child(node, cp);
      if (next < 0) {
        next = int32_t(nodes.size());
        nodes.push_back(Node{});
        edges.emplace((uint64_t(node) << 21) | cp, next);
      }
      node = next;
    }
    // A duplicated piece keeps the last id and score, as the reference trie does.
    nodes[size_t(node)] = Node{id, score};
  }
};

SentencePieceTokenizer::SentencePieceTokenizer(std::vector<SentencePiece> pieces, size_t reserved)
    : impl_(std::make_unique<Impl>()) {
  VERITY_CHECK(!pieces.empty(), ConfigError, "sentencepiece: empty vocabulary");
  VERITY_CHECK(reserved < pieces.size(), ConfigError, "sentencepiece: reserved=", reserved,
               " but the vocabulary has only ", pieces.size(), " pieces");
  impl_->reserved = reserved;
  impl_->utf16_lengths.reserve(pieces.size());
  for (size_t id = 0; id < pieces.size(); ++id) {
    const std::string& p = pieces[id].piece;
    size_t bad = invalid_utf8_offset(p);
    VERITY_CHECK(bad == std::string_view::npos, ConfigError, "sentencepiece: piece ", id,
                 " is not valid UTF-8 (byte ", bad, ")");
    impl_->utf16_lengths.push_back(utf16_length(p));
    if (id >= reserved) {
      VERITY_CHECK(!p.empty(), ConfigError, "sentencepiece: piece ", id, " is empty");
      impl_->insert(code_points(p), int32_t(id), pieces[id].score);
    }
  }
  // Back-tracking over an unknown token steps by this length; 0 would never end.
  VERITY_CHECK(impl_->utf16_lengths[kUnknownId] > 0, ConfigError,
               "sentencepiece: the unknown piece (id 0) is empty");
  impl_->pieces = std::move(pieces);
  // Pieces compared ignoring case (text/case_folds.hpp) fold through the vocabularies of the tokenizers made.
  std::vector<std::string> strings;
  strings.reserve(impl_->pieces.size());
  for (const auto& p : impl_->pieces) strings.push_back(p.piece);
  register_vocabulary(strings);
  register_sentencepiece_spellings(strings, reserved);  // texts compared on the surface (text/surface.hpp)
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;
SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer& SentencePieceTokenizer::operator=(SentencePieceTokenizer&&) noexcept = default;

size_t SentencePieceTokenizer::size() const { return impl_->pieces.size(); }
size_t SentencePieceTokenizer::reserved() const { return impl_->reserved; }

const std::string& SentencePieceTokenizer::piece(int32_t id) const {
  VERITY_CHECK(id >= 0 && size_t(id) < impl_->pieces.size(), ConfigError,
               "sentencepiece: id ", id, " out of range [0, ", impl_->pieces.size(), ")");
  return impl_->pieces[size_t(id)].piece;
}

double SentencePieceTokenizer::score(int32_t id) const {
  piece(id);  // range check
  return impl_->pieces[size_t(id)].score;
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
  const std::vector<char32_t> symbols = code_points(sentencepiece_normalize(text));
  const size_t n = symbols.size();
  if (n == 0) return {};

  // Lattice edges grouped by end position, in increasing start order.
  struct Edge {
    size_t start;
    int32_t id;
    double score;
  };
  std::vector<std::vector<Edge>> ending_at(n + 1);
  for (size_t start = 0; start < n; ++start) {
    bool matched = false;
    int32_t node = 0;
    for (size_t end = start; end < n; ++end) {
      node = impl_->child(node, symbols[end]);
      if (node < 0) break;
      const auto& info = impl_->nodes[size_t(node)];
      if (info.id >= 0) {
        ending_at[end + 1].push_back({start, info.id, info.score});
        matched = true;
      }
    }
    if (!matched) ending_at[start + 1].push_back({start, kUnknownId, 0.0});
  }

  std::vector<double> best(n + 1, 0.0);
  std::vector<int32_t> words(n + 1, kUnknownId);
  for (size_t end = 1; end <= n; ++end) {
    for (const Edge& e : ending_at[end]) {
      double s = e.score + best[e.start];
      if (best[end] == 0 || s >= best[end]) {
        best[end] = s;
        words[end] = e.id;
      }
    }
  }

  std::vector<int32_t> reversed;
  for (ptrdiff_t at = ptrdiff_t(n); at > 0;) {
    int32_t id = words[size_t(at)];
    reversed.push_back(id);
    at -= ptrdiff_t(impl_->utf16_lengths[size_t(id)]);
  }
  std::vector<int32_t> ids;
  ids.reserve(reversed.size());
  bool previous_unknown = false;
  for (int32_t id : reversed) {
    if (!(previous_unknown && id == kUnknownId)) ids.push_back(id);
    previous_unknown = id == kUnknownId;
  }
  return {ids.rbegin(), ids.rend()};
}

SentencePieceTokenizer SentencePieceTokenizer::load(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": invalid JSON: ", e.what()));
  }
  VERITY_CHECK(j.is_object(), FormatError, path, ": expected a JSON object");
  VERITY_CHECK(j.value("format", "") == kFormat, FormatError, path, ": field 'format' must be \"",
               kFormat, "\"");
  VERITY_CHECK(j.contains("format_version") && j["format_version"].is_number_integer(),
               FormatError, path, ": missing integer field 'format_version'");
  int version = j["format_version"].get<int>();
  VERITY_CHECK(version == kFormatVersion, FormatError, path, ": format_version ", version,
               " is not supported (expected ", kFormatVersion, ")");
  VERITY_CHECK(j.contains("reserved") && j["reserved"].is_number_unsigned(), FormatError, path,
               ": missing unsigned field 'reserved'");
  VERITY_CHECK(j.contains("pieces") && j["pieces"].is_array(), FormatError, path,
               ": missing array field 'pieces'");
  std::vector<SentencePiece> pieces;
  pieces.reserve(j["pieces"].size());
  for (const auto& entry : j["pieces"]) {
    VERITY_CHECK(entry.is_array() && entry.size() == 2 && entry[0].is_string() &&
                     entry[1].is_number(),
                 FormatError, path, ": pieces[", pieces.size(),
                 "] must be [string, number], got ", entry.dump());
    pieces.push_back({entry[0].get<std::string>(), entry[1].get<double>()});
  }
  try {
    return SentencePieceTokenizer(std::move(pieces), j["reserved"].get<size_t>());
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": ", e.what()));
  }
}

SentencePieceTokenizer SentencePieceTokenizer::from_reference_vocab(const std::string& path,
                                                                    size_t reserved) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": invalid JSON: ", e.what()));
  }
  VERITY_CHECK(j.is_array(), FormatError, path, ": expected an array of [piece, score]");
  std::vector<SentencePiece> pieces;
  pieces.reserve(j.size());
  for (const auto& entry : j) {
    VERITY_CHECK(entry.is_array() && entry.size() == 2 && entry[0].is_string() &&
                     (entry[1].is_number() || entry[1].is_null()),
                 FormatError, path, ": entry ", pieces.size(),
                 " must be [string, number|null], got ", entry.dump());
    pieces.push_back({entry[0].get<std::string>(), entry[1].is_null() ? 0.0 : entry[1].get<double>()});
  }
  try {
    return SentencePieceTokenizer(std::move(pieces), reserved);
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": ", e.what()));
  }
}

void SentencePieceTokenizer::save(const std::string& path) const {
  nlohmann::json pieces = nlohmann::json::array();
  for (const auto& p : impl_->pieces) pieces.push_back(nlohmann::json::array({p.piece, p.score}));
  nlohmann::json j = {{"format", kFormat},
                      {"format_version", kFormatVersion},
                      {"reserved", impl_->reserved},
                      {"pieces", std::move(pieces)}};
  write_file_atomic(path, j.dump() + "\n");
}

}  // namespace verity::text
