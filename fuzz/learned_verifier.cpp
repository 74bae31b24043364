// Learned verifier weights (VVRF): a JSON config, parameter names and shapes, and
// float data. An accepted file must score a small similarity map.
#include "fuzz_support.hpp"
#include "verify/learned.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_section_input("verifier.vvrf", data, size);
  fuzz::expect_clean_errors([&] {
    const auto v = verify::LearnedVerifier::load(path);
    std::vector<float> values(3 * 5);
    for (size_t i = 0; i < values.size(); ++i) values[i] = float(i % 4) / 4.0f;
    const float s = v->score(verify::SimilarityMap(3, 5, values));
    VERITY_FUZZ_EXPECT(s >= 0.0f && s <= 1.0f, "score ", s);
  });
  return 0;
}
