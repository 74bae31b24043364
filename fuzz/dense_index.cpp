// Dense index files (VDNS): flat vectors or an hnswlib graph dump. An accepted
// index must answer a query with ids it stores.
#include <algorithm>
#include <vector>

#include "fuzz_support.hpp"
#include "index/dense_index.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_section_input("dense.vdn", data, size);
  fuzz::expect_clean_errors([&] {
    const auto index = index::load_dense_index(path);
    if (index->dim() > 4096) return;  // a valid but large index: the query would only cost time
    std::vector<float> query(index->dim());
    for (size_t i = 0; i < query.size(); ++i) query[i] = float(i % 7) - 3.0f + 0.5f;
    const auto result = index->search(query, std::min<size_t>(index->size() + 1, 8));
    for (auto id : result.ids) VERITY_FUZZ_EXPECT(id >= -1, "id ", id);
  });
  return 0;
}
