// BEIR qrels/<split>.tsv: a header line, then query-id TAB corpus-id TAB integer score.
#include "data/beir.hpp"
#include "fuzz_support.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_input("test.tsv", data, size);
  fuzz::expect_clean_errors([&] {
    size_t rows = 0;
    const auto qrels = data::load_qrels(path, &rows);
    size_t pairs = 0;
    for (const auto& [q, docs] : qrels) pairs += docs.size();
    VERITY_FUZZ_EXPECT(pairs == rows, pairs, " (query, doc) pairs from ", rows, " rows");
  });
  return 0;
}
