// Token caches of the verifier trainer (VTKC): JSON config, texts, per-text token
// counts and rows, loaded into a TextBank.
#include "fuzz_support.hpp"
#include "train/token_cache.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_section_input("tokens.vtkc", data, size);
  fuzz::expect_clean_errors([&] {
    train::TextBank bank;
    for (const char* t : {"the cat sat", "a dog ran", "measles vaccine"}) bank.add(t);
    const size_t loaded = train::load_token_cache(bank, path, "glove:fuzz");
    (void)loaded;
    for (uint32_t id = 0; id < bank.size(); ++id)
      if (bank.encoded(id))
        VERITY_FUZZ_EXPECT(bank.tokens(id).size() == bank.num_tokens(id) * bank.dim(), "text ", id);
  });
  return 0;
}
