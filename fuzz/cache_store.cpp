// Semantic cache databases (SQLite in WAL mode: meta table, entries, f16 token
// vectors and pooled vectors with a crc32c each, saved namespace graphs), opened
// with SQLite's own check off so that damage reaches verity's readers. A damaged
// database must be refused with a verity::Error, or its damaged entries skipped
// and counted; an accepted one must answer a lookup and take a put.
#include <unistd.h>

#include "cache/cache.hpp"
#include "fuzz_support.hpp"
#include "tiny_models.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string glove = fuzz::make_tiny_glove(fuzz::scratch_dir() + "/base");
  const std::string path = fuzz::scratch_dir() + "/store.sqlite";
  for (const char* suffix : {"-wal", "-shm"}) ::unlink((path + suffix).c_str());
  fuzz::write_input("store.sqlite", data, size);
  fuzz::expect_clean_errors([&] {
    cache::CacheOptions o;
    o.encoder = "glove:" + glove;
    o.verifier = "f1";
    o.create = false;
    o.check = "none";
    o.durability = "normal";
    cache::Cache c(path, o);
    const auto stats = c.stats();
    const auto found = c.lookup("the cat sat", {});
    VERITY_FUZZ_EXPECT(!found.hit || found.best, "a hit without an entry");
    c.put("a dog ran", "r", {});
    VERITY_FUZZ_EXPECT(c.stats().entries >= 1, "the put is not counted (", stats.entries, " before)");
  });
  return 0;
}
