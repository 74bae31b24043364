// Embedding caches of verity diagnose (VEMB): dim/count/fingerprint, hashes, vectors.
// The fingerprint field is set to the tiny encoder's own so mutations reach the
// hash and vector checks; a damaged cache must be ignored, never trusted.
#include <cstring>

#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "diagnose/embedding_cache.hpp"
#include "encode/glove.hpp"
#include "fuzz_support.hpp"
#include "tiny_models.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto glove = encode::load_glove(fuzz::make_tiny_glove(fuzz::scratch_dir() + "/base"));
  static const uint64_t fp = diagnose::EmbeddingCache::encoder_fingerprint(*glove);
  static const std::string dir = fuzz::scratch_dir() + "/emb";
  make_directories(dir);
  std::string image(reinterpret_cast<const char*>(data), size);
  auto [at, len] = fuzz::section_payload(image, "PARM");
  if (len >= 24) std::memcpy(image.data() + at + 16, &fp, 8);
  fuzz::fix_section_crcs(image);
  write_file_atomic(cat(dir, "/diagnose-emb-", hex64(fp), ".vemb"), image);
  fuzz::expect_clean_errors([&] {
    diagnose::EmbeddingCache cache(*glove, dir);
    const std::vector<std::string> texts = {"the cat sat", "measles vaccine"};
    const auto rows = cache.embed(texts);
    VERITY_FUZZ_EXPECT(rows.size() == texts.size() * glove->dim(), rows.size(), " values");
  });
  return 0;
}
