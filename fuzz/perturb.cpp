// The perturbers on arbitrary text: the first byte picks the generator, the next
// eight seed its Rng. An edit must describe itself: the new span sits at the given
// offsets of the output.
#include <cstring>

#include "fuzz_support.hpp"
#include "perturb/perturber.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto perturbers = [] {
    std::vector<std::unique_ptr<perturb::Perturber>> all;
    for (const auto& kind : perturb::perturber_kinds()) all.push_back(perturb::make_perturber(kind));
    all.push_back(perturb::make_perturber("negation:mode=antonym"));
    return all;
  }();
  if (size < 9) return 0;
  const auto& p = *perturbers[data[0] % perturbers.size()];
  uint64_t seed;
  std::memcpy(&seed, data + 1, 8);
  const std::string_view sentence(reinterpret_cast<const char*>(data + 9), size - 9);
  fuzz::expect_clean_errors([&] {
    perturb::Rng rng(seed);
    const auto edit = p.apply(sentence, rng);
    if (!edit) return;
    VERITY_FUZZ_EXPECT(edit->span_begin <= edit->span_end && edit->span_end <= edit->text.size(), p.spec(),
                       ": span [", edit->span_begin, ", ", edit->span_end, ") of ", edit->text.size());
    VERITY_FUZZ_EXPECT(edit->text.substr(edit->span_begin, edit->span_end - edit->span_begin) == edit->new_span,
                       p.spec(), ": new_span does not match the text");
  });
  return 0;
}
