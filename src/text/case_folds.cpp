#include "text/case_folds.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "text/detail/snapshot_registry.hpp"
#include "text/utf8.hpp"

namespace verity::text {

uint32_t piece_identity(std::string_view piece) {
  uint32_t h = 2166136261u;
  for (unsigned char c : piece) h = (h ^ c) * 16777619u;
  return h;
}

std::string lower_case_piece(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(piece.data());
  for (size_t pos = 0; pos < piece.size();) {
    const unsigned char c = p[pos];
    if (c < 0x80) {  // ASCII: the common case, no decoding
      out.push_back(c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : char(c));
      ++pos;
      continue;
    }
    utf8proc_int32_t cp;
    const auto n = utf8proc_iterate(p + pos, utf8proc_ssize_t(piece.size() - pos), &cp);
    if (n <= 0) {  // not well-formed: the byte as it is
      out.push_back(char(c));
      ++pos;
      continue;
    }
    append_utf8(out, char32_t(utf8proc_tolower(cp)));
    pos += size_t(n);
  }
  return out;
}

namespace {
// Each piece with an upper-case letter, as (its identity, its lower-cased piece's identity).
std::vector<std::pair<uint32_t, uint32_t>> folds_of(std::span<const std::string> pieces) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& piece : pieces) {
    std::string lower = lower_case_piece(piece);
    if (lower != piece) out.emplace_back(piece_identity(piece), piece_identity(lower));
  }
  return out;
}
}  // namespace

CaseFolds::CaseFolds(std::span<const std::string> pieces) { *this = with(pieces); }

CaseFolds CaseFolds::with(std::span<const std::string> pieces) const {
  CaseFolds out = *this;
  // emplace keeps a held identity's fold (or the first of two pieces that collide).
  for (const auto& [identity, folded] : folds_of(pieces)) out.folds_.emplace(identity, folded);
  return out;
}

uint32_t CaseFolds::fold(uint32_t identity) const {
  const auto it = folds_.find(identity);
  return it == folds_.end() ? identity : it->second;
}

std::vector<uint32_t> CaseFolds::fold_all(std::span<const uint32_t> ids) const {
  std::vector<uint32_t> out(ids.begin(), ids.end());
  if (!folds_.empty())
    for (auto& id : out) id = fold(id);
  return out;
}

std::vector<std::pair<uint32_t, uint32_t>> CaseFolds::entries() const {
  std::vector<std::pair<uint32_t, uint32_t>> out(folds_.begin(), folds_.end());
  std::sort(out.begin(), out.end());
  return out;
}

CaseFolds CaseFolds::from_entries(std::span<const std::pair<uint32_t, uint32_t>> entries) {
  CaseFolds out;
  out.folds_.reserve(entries.size());
  for (const auto& [identity, folded] : entries) {
    VERITY_CHECK(identity != folded, ConfigError, "case folds: identity ", identity, " folds to itself");
    VERITY_CHECK(out.folds_.emplace(identity, folded).second, ConfigError, "case folds: identity ", identity,
                 " is folded twice");
  }
  return out;
}

void register_vocabulary(std::span<const std::string> pieces) {
  const auto folds = folds_of(pieces);  // outside the lock: one lower-casing per piece
  detail::registry_of<CaseFolds>().update([&](const CaseFolds& now) -> std::optional<CaseFolds> {
    // A vocabulary seen before (every tokenizer of one encoder) adds nothing: keep the snapshot.
    const bool adds = std::any_of(folds.begin(), folds.end(), [&](const auto& f) { return now.fold(f.first) == f.first; });
    if (!adds) return std::nullopt;
    return now.with(pieces);
  });
}

std::shared_ptr<const CaseFolds> registered_case_folds() { return detail::registry_of<CaseFolds>().snapshot(); }

}  // namespace verity::text
