#include "encode/encoder.hpp"

namespace verity::encode {

size_t Encoded::length(size_t b) const {
  size_t n = 0;
  for (size_t t = 0; t < max_tokens; ++t) n += mask[b * max_tokens + t] != 0;
  return n;
}

std::vector<float> Encoded::token_block(size_t b) const {
  std::vector<float> out;
  out.reserve(length(b) * dim);
  for (size_t t = 0; t < max_tokens; ++t) {
    if (!mask[b * max_tokens + t]) continue;
    auto row = token_row(b, t);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

}  // namespace verity::encode
