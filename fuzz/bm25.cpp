// BM25 index files (VBM2): analyzer spec, document lengths, term table, postings.
// An accepted index must answer queries (its own terms included) within bounds.
#include "fuzz_support.hpp"
#include "index/bm25.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_section_input("bm25.vbm", data, size);
  fuzz::expect_clean_errors([&] {
    const auto index = index::Bm25Index::load(path);
    std::string query = "the cat sat on the mat";
    for (uint32_t t = 0; t < index.num_terms() && t < 8; ++t) {
      query += " " + std::string(index.term(t));
      for (const auto& p : index.postings(t))
        VERITY_FUZZ_EXPECT(p.doc < index.num_docs(), "posting doc ", p.doc, " of ", index.num_docs());
    }
    for (const auto& hit : index.search(query, 10)) {
      VERITY_FUZZ_EXPECT(hit.doc < index.num_docs(), "hit doc ", hit.doc);
      (void)index.doc_id(hit.doc);
    }
  });
  return 0;
}
