// SentencePiece-unigram tokenization (USE-lite) of arbitrary bytes: the converted
// models/use-lite vocabulary when present, else a small built-in one. Invalid UTF-8
// must be a FormatError; every id must be in the vocabulary. The surface of the
// text (text/surface.hpp) is well-formed UTF-8 when the text is, and the pieces'
// surface matches itself unless it holds unknown text or nothing; a text is no
// name swap, transposition or changed number of itself, and a swap, a
// transposition, a changed number or a respelled one between its two halves
// reads the same both ways round.
#include <filesystem>
#include <vector>

#include "fuzz_support.hpp"
#include "text/case_folds.hpp"
#include "text/sentencepiece.hpp"
#include "text/surface.hpp"
#include "text/utf8.hpp"

using namespace verity;

namespace {
text::SentencePieceTokenizer load() {
  const auto path = fuzz::source_dir() + "/models/use-lite/tokenizer.json";
  if (std::filesystem::exists(path)) return text::SentencePieceTokenizer::load(path);
  std::vector<text::SentencePiece> pieces = {{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"r3", 0}, {"r4", 0}, {"r5", 0}};
  for (const char* p : {"\u2581", "\u2581the", "\u2581cat", "s", "a", "t", "at", "\u2581c", "\u00e9", "\u4e2d"})
    pieces.push_back({p, -double(pieces.size())});
  return text::SentencePieceTokenizer(std::move(pieces));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const text::SentencePieceTokenizer t = load();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_errors([&] {
    const bool valid = text::first_invalid_utf8(text) == std::string_view::npos;
    const auto surface = text::surface_text(text);
    if (valid) VERITY_FUZZ_EXPECT(text::first_invalid_utf8(surface) == std::string_view::npos, "surface of valid text");
    std::vector<uint32_t> identities;
    for (int32_t id : t.encode(text)) {
      VERITY_FUZZ_EXPECT(id >= 0 && size_t(id) < t.size(), "id ", id);
      identities.push_back(text::piece_identity(t.piece(id)));
    }
    const auto spellings = text::registered_surface_spellings();
    const auto spelled = spellings->surface(identities);
    VERITY_FUZZ_EXPECT(spellings->same_surface(identities, identities) == (spelled && !spelled->empty()),
                       "a text's pieces are the same on the surface as themselves");
    if (valid)
      VERITY_FUZZ_EXPECT(text::first_invalid_utf8(text::cased_surface_text(text)) == std::string_view::npos,
                         "cased surface of valid text");
    VERITY_FUZZ_EXPECT(!spellings->swapped_name(identities, identities, text::registered_case_folds().get()),
                       "a text is no name swap of itself");
    // The input's two halves as a pair: a swap reads the same both ways round.
    const auto front = text.substr(0, text.size() / 2), back = text.substr(text.size() / 2);
    const auto there = text::swapped_name(front, back), back_again = text::swapped_name(back, front);
    VERITY_FUZZ_EXPECT(there.has_value() == back_again.has_value() &&
                           (!there || (there->from == back_again->to && there->to == back_again->from)),
                       "a name swap is symmetric");
    VERITY_FUZZ_EXPECT(!spellings->transposed(identities, identities, text::registered_case_folds().get()),
                       "a text is no transposition of itself");
    const auto order = text::transposed_words(front, back), order_back = text::transposed_words(back, front);
    VERITY_FUZZ_EXPECT(order.has_value() == order_back.has_value() &&
                           (!order || (order->first == order_back->second && order->second == order_back->first)),
                       "a transposition is symmetric");
    VERITY_FUZZ_EXPECT(!text::changed_numbers(text, text) && !text::respelled_numbers(text, text),
                       "a text changes no number of itself");
    const auto changed = text::changed_numbers(front, back), changed_back = text::changed_numbers(back, front);
    VERITY_FUZZ_EXPECT(changed.has_value() == changed_back.has_value() &&
                           (!changed || (changed->from == changed_back->to && changed->to == changed_back->from)),
                       "a changed number is symmetric");
    const bool respelled = text::respelled_numbers(front, back);
    VERITY_FUZZ_EXPECT(respelled == text::respelled_numbers(back, front) && !(respelled && changed),
                       "a respelled number is symmetric and no change");
    (void)text::sentencepiece_normalize(text);
  });
  return 0;
}
