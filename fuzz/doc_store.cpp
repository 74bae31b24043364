// DocStore files (VDOC): ids, titles and texts by offset tables. Checksums are
// recomputed so mutations reach the offset checks.
#include "fuzz_support.hpp"
#include "index/doc_store.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_section_input("docs.vds", data, size);
  fuzz::expect_clean_errors([&] {
    index::DocStore docs(path);
    for (size_t i = 0; i < docs.size(); ++i) {
      const auto id = docs.id(i);
      (void)docs.title(i);
      (void)docs.text(i);
      const auto found = docs.find(id);
      VERITY_FUZZ_EXPECT(found >= 0 && docs.id(size_t(found)) == id, "find(id(", i, "))");
    }
  });
  return 0;
}
