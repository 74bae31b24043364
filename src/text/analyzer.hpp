#pragma once
// Lexical analyzer for BM25 and term statistics (IDF, query-term coverage):
//   UTF-8 text -> normalize (NFKC, case fold, optional accent stripping)
//              -> split into runs of letters/digits, strip possessive 's
//              -> drop short tokens -> drop stopwords -> stem.
// Mirrors the Elasticsearch "english" analyzer (porter stemmer, Lucene
// _english_ stop set); see docs/ANALYZER.md for the choices.
//
// Thread safety: analyze() is const and may be called from many threads at
// once (stemmers and scratch buffers are thread_local).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace verity::text {

enum class Stemmer { kNone, kPorter, kEnglish };  // "none", "porter", "english" (Porter2)
enum class StopWords { kNone, kEnglish };         // "none", "english" (Lucene _english_)

struct AnalyzerOptions {
  bool nfkc = true;           // NFKC compatibility normalization (else NFC)
  bool fold = true;           // Unicode case folding
  bool strip_accents = false; // remove combining marks after decomposition
  bool possessive = true;     // drop English possessive 's / ’s
  size_t min_length = 1;      // minimum token length in code points
  StopWords stop = StopWords::kEnglish;
  Stemmer stem = Stemmer::kPorter;

  bool operator==(const AnalyzerOptions&) const = default;
};

class Analyzer {
 public:
  explicit Analyzer(AnalyzerOptions options = {});

  // Parses "kind[:key=value,...]". Kinds: "english" (porter + english
  // stopwords) and "standard" (no stemming, no stopwords); keys override:
  //   stem=porter|english|none  stop=english|none  fold=0|1  nfkc=0|1
  //   accents=keep|strip  possessive=0|1  min=<n>
  // Unknown kinds, keys or values throw ConfigError listing the valid ones.
  static Analyzer from_spec(std::string_view spec);
  // Canonical spec with every key explicit; from_spec(spec()) is equivalent.
  std::string spec() const;
  const AnalyzerOptions& options() const { return options_; }

  // Tokens of text after the full pipeline. Throws FormatError naming the
  // byte offset if text is not valid UTF-8 (callers add file/line context).
  std::vector<std::string> analyze(std::string_view text) const;
  // Same, appending to out (lets hot loops reuse one vector).
  void analyze(std::string_view text, std::vector<std::string>& out) const;

  // Whether the (already normalized) token is in the configured stop set.
  bool is_stopword(std::string_view token) const;

 private:
  AnalyzerOptions options_;
};

// The 33 words of Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
// (Elasticsearch "_english_"), sorted.
const std::vector<std::string_view>& english_stopwords();
// Whether a (normalized, lower-case) word is one of them.
bool is_english_stopword(std::string_view word);

}  // namespace verity::text
