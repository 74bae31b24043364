// TREC run files ("qid Q0 docid rank score tag"). An accepted run must survive
// write_trec_run -> read_trec_run with the same documents and scores.
#include "eval/trec_run.hpp"
#include "fuzz_support.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_input("run.trec", data, size);
  fuzz::expect_clean_errors([&] {
    const auto run = eval::read_trec_run(path);
    const auto again_path = fuzz::scratch_dir() + "/again.trec";
    eval::write_trec_run(again_path, run, "fuzz");
    const auto again = eval::read_trec_run(again_path);
    VERITY_FUZZ_EXPECT(again.size() == run.size(), "queries differ after a round trip");
    for (const auto& [qid, docs] : run) {
      const auto it = again.find(qid);
      VERITY_FUZZ_EXPECT(it != again.end() && it->second.size() == docs.size(), "query ", qid,
                         " changed in a round trip");
    }
  });
  return 0;
}
