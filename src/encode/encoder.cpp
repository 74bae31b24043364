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

std::vector<std::vector<std::string>> Encoder::pieces(std::span<const std::string> texts) const {
  EncodeOptions opts;
  opts.normalize = false;
  opts.batch_size = 256;
  std::vector<std::string> all{std::string()};
  all.insert(all.end(), texts.begin(), texts.end());
  auto strings = encode(all, opts).token_strings;
  // Specials (a BERT's [CLS] and [SEP]) are what the empty text holds; each
  // text starts with the empty text's leading ones and ends with the rest.
  const auto& specials = strings.at(0);
  std::vector<std::vector<std::string>> out;
  out.reserve(texts.size());
  for (size_t i = 1; i < strings.size(); ++i) {
    auto& s = strings[i];
    size_t head = 0;
    while (head < specials.size() && head < s.size() && s[head] == specials[head]) ++head;
    const size_t tail = specials.size() - head;
    const size_t end = s.size() >= head + tail ? s.size() - tail : head;
    out.emplace_back(std::make_move_iterator(s.begin() + ptrdiff_t(head)), std::make_move_iterator(s.begin() + ptrdiff_t(end)));
  }
  return out;
}

}  // namespace verity::encode
