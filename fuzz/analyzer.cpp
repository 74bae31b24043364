// The BM25 analyzer on arbitrary bytes; the first byte picks one of the analyzer
// configurations. Invalid UTF-8 must be a FormatError; tokens must be non-empty.
#include "fuzz_support.hpp"
#include "text/analyzer.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<text::Analyzer> analyzers = {
      text::Analyzer::from_spec("english"),
      text::Analyzer::from_spec("standard"),
      text::Analyzer::from_spec("english:stem=english,accents=strip,min=2"),
      text::Analyzer::from_spec("standard:nfkc=0,fold=0,possessive=0"),
  };
  if (size == 0) return 0;
  const auto& a = analyzers[data[0] % analyzers.size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzz::expect_clean_errors([&] {
    for (const auto& token : a.analyze(text)) VERITY_FUZZ_EXPECT(!token.empty(), "empty token");
  });
  return 0;
}
