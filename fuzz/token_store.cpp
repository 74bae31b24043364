// Token stores (VTOK): per-document token vectors in fp32, fp16 or int8.
#include "fuzz_support.hpp"
#include "index/token_store.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_section_input("tokens.vtk", data, size);
  fuzz::expect_clean_errors([&] {
    index::TokenStore store(path);
    size_t values = 0;
    for (uint64_t d = 0; d < store.num_documents() && values < (1u << 20); ++d) {
      const auto rows = store.get(d);
      VERITY_FUZZ_EXPECT(rows.size() == store.num_tokens(d) * store.dim(), "document ", d);
      values += rows.size();
    }
  });
  return 0;
}
