// Verifier ensemble files (JSON listing F3/F4 members with size and crc32c). The
// strings @BYTES@ and @CRC@ in the input are replaced by the size and checksum of
// a real member written at start-up, so mutations get past the member checks.
#include <cstdio>

#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "fuzz_support.hpp"
#include "tiny_models.hpp"
#include "verify/ensemble.hpp"

using namespace verity;

namespace {
void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string member = [] {
    const auto path = fuzz::scratch_dir() + "/m.vvrf";
    fuzz::write_tiny_f3(path);
    return read_file(path);
  }();
  std::string text(reinterpret_cast<const char*>(data), size);
  char crc[16];
  std::snprintf(crc, sizeof crc, "%08x", crc32c(member.data(), member.size()));
  replace_all(text, "@BYTES@", std::to_string(member.size()));
  replace_all(text, "@CRC@", crc);
  const auto path = fuzz::write_input("ensemble.vens", text);
  fuzz::expect_clean_errors([&] {
    const auto e = verify::EnsembleVerifier::load(path);
    const float s = e->score(verify::SimilarityMap(2, 2, {1.0f, 0.0f, 0.5f, 0.25f}));
    VERITY_FUZZ_EXPECT(s >= 0.0f && s <= 1.0f, "score ", s);
  });
  return 0;
}
