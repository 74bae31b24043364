#include "encode/encoder.hpp"

namespace verity::encode {

size_t Encoded::length(size_t b) const {
  size_t n = 0;
  for (size_t t = 0; t < max_tokens; ++t) n += mask[b * max_tokens + t] != 0;
  return n;
}

}  // namespace verity::encode
