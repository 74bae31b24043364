#pragma once
// BERT-family sentence encoder (libtorch, CPU). Loads either
//  - a Hugging Face BertModel directory: config.json, model.safetensors and
//    tokenizer.json or vocab.txt (+ tokenizer_config.json do_lower_case);
//    pooling from sentence-transformers' 1_Pooling/config.json (cls, mean or
//    max), else mean; max_length from sentence_bert_config.json
//    max_seq_length, else min(512, max_position_embeddings); weight names
//    with or without the "bert." prefix;
//  - a verity model directory (verity.json architecture "bert", see
//    docs/MODELS.md), as written by save_bert.
// Token outputs are the last hidden layer, one row per WordPiece including
// [CLS] and [SEP]; pooling uses the attention mask, so padding does not
// change results.
#include <memory>
#include <string>

#include "encode/encoder.hpp"

namespace verity::text {
class WordPieceTokenizer;
}

namespace verity::encode {

struct BertLoadOptions {
  std::string pooling;    // "" = the model's; else "cls" | "mean" | "max"
  size_t max_length = 0;  // 0 = the model's default
};

class BertEncoder : public Encoder {
 public:
  struct Impl;  // defined in encode/detail/bert_model.hpp (torch)
  explicit BertEncoder(std::unique_ptr<Impl> impl);
  ~BertEncoder() override;

  std::string spec() const override;  // "bert:<dir>"
  size_t dim() const override;
  // Texts are tokenized, sorted by length and run in batches of
  // opts.batch_size; opts.threads > 0 sets torch's intra-op thread count.
  Encoded encode(std::span<const std::string> texts, const EncodeOptions& opts) const override;

  const text::WordPieceTokenizer& tokenizer() const;
  const std::string& pooling() const;
  size_t max_length() const;
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Throws ConfigError/FormatError naming the file and field (missing files,
// unsupported activation, shapes that disagree with the config).
std::unique_ptr<BertEncoder> load_bert(const std::string& dir, const BertLoadOptions& options = {});

// Writes a verity model directory (verity.json + model.safetensors + vocab.txt)
// atomically: everything goes to a temporary sibling directory that is renamed
// into place; an existing model directory at dir is replaced.
void save_bert(const BertEncoder& encoder, const std::string& dir, const std::string& name = "");

}  // namespace verity::encode
