// BEIR queries.jsonl: one JSON object per line with _id and text.
#include "data/beir.hpp"
#include "fuzz_support.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_input("queries.jsonl", data, size);
  fuzz::expect_clean_errors([&] { (void)data::load_queries(path); });
  return 0;
}
