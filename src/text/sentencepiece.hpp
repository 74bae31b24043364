#pragma once
// SentencePiece-unigram tokenizer, bit-for-bit the behaviour of the reference
// JS tokenizer shipped with USE-lite (@energetic-ai/embeddings 0.2.0,
// lib/tokenizer.ts), including its quirks:
//   1. text -> NFKC; if non-empty, prepend "▁" and replace every U+0020 (and
//      only U+0020: tabs, newlines stay) with "▁". Runs of spaces give runs of
//      "▁" tokens.
//   2. Pieces with id >= reserved are matched on code points. At a position
//      where no piece starts, the single code point becomes the unknown id 0.
//   3. Viterbi over summed scores (doubles, as JS): for each end position,
//      candidates in increasing start order replace the best when
//      score >= best, or when the best so far is exactly 0 (the reference's
//      "unset" marker, so a zero-sum path never wins).
//   4. Back-tracking steps by the UTF-16 length of the chosen piece.
//   5. Runs of unknown ids collapse into one.
// Ids index the vocabulary directly; no <s>/</s> are added.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace verity::text {

struct SentencePiece {
  std::string piece;  // UTF-8
  double score = 0;
};

class SentencePieceTokenizer {
 public:
  static constexpr int32_t kUnknownId = 0;
  static constexpr size_t kDefaultReserved = 6;  // <unk> <s> </s> + 3 extra ids

  // pieces[i] has id i. Ids below `reserved` are never matched (id 0 still
  // stands for unknown text). Throws ConfigError on an empty vocabulary,
  // reserved >= size, or pieces that are empty or not valid UTF-8.
  explicit SentencePieceTokenizer(std::vector<SentencePiece> pieces,
                                  size_t reserved = kDefaultReserved);
  ~SentencePieceTokenizer();
  SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept;
  SentencePieceTokenizer& operator=(SentencePieceTokenizer&&) noexcept;

  // tokenizer.json: {"format": "verity-sentencepiece", "format_version": 1,
  //   "reserved": 6, "pieces": [["▁the", -3.56], ...]}. Errors name the file
  // and the field (or the piece index).
  static SentencePieceTokenizer load(const std::string& path);
  void save(const std::string& path) const;  // atomic
  // vocab.json as shipped with the reference: [[piece, score], ...]. A null
  // score reads as 0, exactly what the JS arithmetic (null + x == x) does.
  static SentencePieceTokenizer from_reference_vocab(const std::string& path,
                                                     size_t reserved = kDefaultReserved);

  // Token ids of text (UTF-8). Throws FormatError naming the byte offset when
  // text is not valid UTF-8. Empty text gives no ids.
  std::vector<int32_t> encode(std::string_view text) const;

  size_t size() const;
  size_t reserved() const;
  // Throws ConfigError when id is out of range.
  const std::string& piece(int32_t id) const;
  double score(int32_t id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The reference normalization alone (step 1): NFKC, then "▁" handling.
std::string sentencepiece_normalize(std::string_view text);

}  // namespace verity::text
