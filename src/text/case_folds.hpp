#pragma once
// Token pieces compared ignoring case, by identity. A piece's identity is
// FNV-1a 32 of its UTF-8 bytes (piece_identity; verify::token_identity is
// it), what the verifiers and the index token stores see of a token. An
// identity does not give its piece back, so a piece is folded (its identity
// mapped to the identity of its lower-cased piece: "\u2581Open" to
// "\u2581open") only where a vocabulary that holds the piece was seen: every
// SentencePiece and WordPiece tokenizer registers its vocabulary in one
// process-wide table when it is made (register_vocabulary), so a token of any
// text an encoder of this process can write, whether it was encoded just now
// or read back from an index or a cache, folds. A rule that reads the folds
// (verify::minimal_flip) falls back to comparing identities where they are
// unknown: no vocabulary registered, or a piece of none.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace verity::text {

// FNV-1a 32 of the piece's UTF-8 bytes.
uint32_t piece_identity(std::string_view piece);

// The piece with every upper-case letter lower-cased (Unicode simple
// lower-case mapping, code point by code point); anything else, bytes that
// are not well-formed UTF-8 included, stays as it is.
std::string lower_case_piece(std::string_view piece);

// Identity -> identity of the lower-cased piece, for the pieces it was made
// from that hold an upper-case letter.
class CaseFolds {
 public:
  CaseFolds() = default;
  explicit CaseFolds(std::span<const std::string> pieces);
  // The identity of the piece lower-cased; `identity` itself for a piece that
  // is lower-case already or was never seen.
  uint32_t fold(uint32_t identity) const;
  // How many pieces fold to another identity.
  size_t size() const { return folds_.size(); }
  bool empty() const { return folds_.empty(); }
  // The folds of `pieces` added (an identity already held keeps its fold).
  CaseFolds with(std::span<const std::string> pieces) const;
  // `ids` with every identity folded.
  std::vector<uint32_t> fold_all(std::span<const uint32_t> ids) const;
  // Its (identity, folded identity) pairs in ascending order: what a file
  // keeps, so a reader folds alike without the vocabulary.
  std::vector<std::pair<uint32_t, uint32_t>> entries() const;
  // From such pairs; ConfigError when an identity is folded twice or folds
  // to itself.
  static CaseFolds from_entries(std::span<const std::pair<uint32_t, uint32_t>> entries);

 private:
  std::unordered_map<uint32_t, uint32_t> folds_;
};

// Adds a vocabulary's folds to the process-wide table (thread-safe; the
// tokenizers call it).
void register_vocabulary(std::span<const std::string> pieces);
// The process-wide table as it is now: an immutable snapshot (empty before any
// vocabulary was registered), cheap to take once per batch of pairs.
std::shared_ptr<const CaseFolds> registered_case_folds();

}  // namespace verity::text
