#pragma once
// The text-encoder interface. Torch stays out of this header: callers see
// plain row-major float buffers. Implementations live in src/encode/*.cpp.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace verity::encode {

struct EncodeOptions {
  bool normalize = true;       // L2-normalize pooled vectors
  size_t batch_size = 32;      // texts per forward pass (sorted by length first)
  size_t max_length = 0;       // tokens per text incl. specials; 0 = model default
  int threads = 0;             // 0 = leave the runtime's setting
  bool with_tokens = true;     // fill token vectors and token strings
};

// Output for B texts, padded to T = the longest tokenized text. Padding is
// on the right: text b's real positions are 0..length(b)-1, so its token rows
// are one contiguous [length(b) × D] block at tokens.data() + b*T*D.
struct Encoded {
  size_t batch = 0, max_tokens = 0, dim = 0;
  std::vector<float> pooled;                              // [B, D]
  std::vector<float> tokens;                              // [B, T, D]; zero where mask == 0
  std::vector<uint8_t> mask;                              // [B, T]; 1 = real position
  std::vector<std::vector<std::string>> token_strings;   // per text, one per masked-in position
  std::span<const float> pooled_row(size_t b) const { return {pooled.data() + b * dim, dim}; }
  std::span<const float> token_row(size_t b, size_t t) const {
    return {tokens.data() + (b * max_tokens + t) * dim, dim};
  }
  size_t length(size_t b) const;  // number of real positions of text b
  // The real (mask == 1) token rows of text b, back to back: [length(b) × dim].
  std::vector<float> token_block(size_t b) const;
};

class Encoder {
 public:
  virtual ~Encoder() = default;
  // Factory string that recreates this encoder (a name or a directory).
  virtual std::string spec() const = 0;
  virtual size_t dim() const = 0;
  // Deterministic: the same texts and options give bit-identical output.
  // Batched encoders throw Interrupted between batches once an interrupt was
  // requested (core/log.hpp), so a long encode can be stopped.
  virtual Encoded encode(std::span<const std::string> texts, const EncodeOptions& opts) const = 0;
  // The pieces each text becomes, as Encoded::token_strings names them, less
  // the special tokens every text gets (those of the empty text): what a
  // word is written as inside any text. This default encodes; tokenizers
  // that can answer without the model override it.
  virtual std::vector<std::vector<std::string>> pieces(std::span<const std::string> texts) const;
};

}  // namespace verity::encode
