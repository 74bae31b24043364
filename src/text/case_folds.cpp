#include "text/case_folds.hpp"

#include <utf8proc.h>

#include <mutex>

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
size_t slot_index(uint32_t identity, size_t slots) { return size_t(uint32_t(identity * 2654435761u)) & (slots - 1); }
}  // namespace

CaseFolds::CaseFolds(std::span<const std::string> pieces) { *this = with(pieces); }

CaseFolds CaseFolds::with(std::span<const std::string> pieces) const {
  std::vector<std::pair<uint32_t, uint32_t>> folds;
  for (const auto& piece : pieces) {
    std::string lower = lower_case_piece(piece);
    if (lower != piece) folds.emplace_back(piece_identity(piece), piece_identity(lower));
  }
  CaseFolds out;
  size_t slots = 16;
  while (slots < 2 * (count_ + folds.size())) slots *= 2;  // load factor <= 1/2
  out.slots_.assign(slots, Slot{});
  for (const Slot& s : slots_)
    if (s.used) out.add(s.identity, s.folded);
  for (const auto& [identity, folded] : folds) out.add(identity, folded);
  return out;
}

void CaseFolds::add(uint32_t identity, uint32_t folded) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot_index(identity, slots_.size());; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.used && s.identity == identity) return;  // held (or a collision of two pieces): the first fold stays
    if (!s.used) {
      s = {identity, folded, true};
      ++count_;
      return;
    }
  }
}

uint32_t CaseFolds::fold(uint32_t identity) const {
  if (count_ == 0) return identity;
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot_index(identity, slots_.size());; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.used) return identity;
    if (s.identity == identity) return s.folded;
  }
}

namespace {
struct Registry {
  std::mutex mutex;
  std::shared_ptr<const CaseFolds> folds = std::make_shared<const CaseFolds>();
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: readers may outlive static destruction order
  return *r;
}
}  // namespace

void register_vocabulary(std::span<const std::string> pieces) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto grown = std::make_shared<const CaseFolds>(r.folds->with(pieces));
  if (grown->size() != r.folds->size()) r.folds = std::move(grown);
}

std::shared_ptr<const CaseFolds> registered_case_folds() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.folds;
}

}  // namespace verity::text
