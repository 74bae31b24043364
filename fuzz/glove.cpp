// GloVe vector tables (VGLV): words, sorted order and vectors, loaded next to a
// fixed verity.json. An accepted table must encode text.
#include <filesystem>

#include "core/io.hpp"
#include "encode/glove.hpp"
#include "fuzz_support.hpp"
#include "tiny_models.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    const auto model = fuzz::make_tiny_glove(fuzz::scratch_dir() + "/base");
    const auto d = fuzz::scratch_dir() + "/glove";
    make_directories(d);
    std::filesystem::copy_file(model + "/verity.json", d + "/verity.json");
    return d;
  }();
  std::string image(reinterpret_cast<const char*>(data), size);
  fuzz::fix_section_crcs(image);
  write_file_atomic(dir + "/vectors.vgl", image);
  fuzz::expect_clean_errors([&] {
    const auto glove = encode::load_glove(dir);
    const std::vector<std::string> texts = {"the cat sat", "a0 b1 measles", ""};
    const auto enc = glove->encode(texts, {});
    VERITY_FUZZ_EXPECT(enc.batch == texts.size() && enc.pooled.size() == texts.size() * glove->dim(),
                       "encoded ", enc.batch, " texts");
    for (size_t w = 0; w < glove->vocab_size() && w < 64; ++w) (void)glove->vector(int64_t(w));
  });
  return 0;
}
