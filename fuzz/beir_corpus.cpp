// BEIR corpus.jsonl: one JSON object per line with _id, text and an optional title.
#include "data/beir.hpp"
#include "fuzz_support.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_input("corpus.jsonl", data, size);
  fuzz::expect_clean_errors([&] {
    const auto corpus = data::load_corpus(path);
    VERITY_FUZZ_EXPECT(corpus.index_of.size() == corpus.size(), "ids must be unique");
    for (size_t i = 0; i < corpus.size(); ++i) {
      VERITY_FUZZ_EXPECT(corpus.find(corpus.docs[i].id) == i, "find() must return the document's row");
      (void)corpus.indexed_text(i);
    }
  });
  return 0;
}
