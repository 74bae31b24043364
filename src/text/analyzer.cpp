#include "text/analyzer.hpp"

#include <libstemmer.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>
#include <unordered_map>

#include "core/error.hpp"
#include "text/utf8.hpp"

namespace verity::text {
namespace {

constexpr size_t kStemCacheEntries = 1 << 16;  // per thread and stemmer; cleared when full
constexpr std::string_view kValidKeys = "stem, stop, fold, nfkc, accents, possessive, min";

const char* stemmer_name(Stemmer s) {
  switch (s) {
    case Stemmer::kNone: return "none";
    case Stemmer::kPorter: return "porter";
    case Stemmer::kEnglish: return "english";
  }
  return "?";
}

// ---- character classes (after normalization) ----

bool is_letter(int32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  auto c = utf8proc_category(cp);
  return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}
bool is_decimal_digit(int32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return utf8proc_category(cp) == UTF8PROC_CATEGORY_ND;
}
// Letters and numbers start a token.
bool starts_word(int32_t cp) {
  if (cp < 0x80) return is_letter(cp) || is_decimal_digit(cp);
  auto c = utf8proc_category(cp);
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
         (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}
// Combining marks may continue a token (needed for scripts such as Devanagari).
bool continues_word(int32_t cp) {
  if (cp < 0x80) return starts_word(cp);
  auto c = utf8proc_category(cp);
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_ME) ||
         (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}
// Scripts written without spaces: one token per character, as Lucene's
// StandardTokenizer does for Han ideographs and Hiragana.
bool is_ideograph(int32_t cp) {
  return (cp >= 0x3040 && cp <= 0x309F) ||   // Hiragana
         (cp >= 0x3400 && cp <= 0x4DBF) ||   // CJK extension A
         (cp >= 0x4E00 && cp <= 0x9FFF) ||   // CJK unified ideographs
         (cp >= 0xF900 && cp <= 0xFAFF) ||   // CJK compatibility ideographs
         (cp >= 0x20000 && cp <= 0x3FFFF);   // CJK extensions B..
}
bool is_apostrophe(int32_t cp) { return cp == '\'' || cp == 0x2019 || cp == 0xFF07; }

// ---- stemmers: sb_stemmer is not thread-safe, so each thread owns one per algorithm ----

struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};
using StemmerPtr = std::unique_ptr<sb_stemmer, StemmerDeleter>;

sb_stemmer* thread_stemmer(Stemmer which) {
  thread_local std::array<StemmerPtr, 3> stemmers;
  auto& slot = stemmers[size_t(which)];
  if (!slot) {
    slot.reset(sb_stemmer_new(stemmer_name(which), "UTF_8"));
    VERITY_CHECK(slot != nullptr, Error, "libstemmer: cannot create stemmer '",
                 stemmer_name(which), "'");
  }
  return slot.get();
}

// ---- normalization ----

// Normalizes text into code points (reusing buf). ASCII needs no Unicode
// tables: NFKC is the identity there and case folding is tolower.
void normalize(std::string_view text, const AnalyzerOptions& o, std::vector<int32_t>& buf) {
  buf.clear();
  if (is_ascii(text)) {
    buf.reserve(text.size());
    for (unsigned char c : text) buf.push_back(o.fold && c >= 'A' && c <= 'Z' ? c + 32 : c);
    return;
  }
  size_t bad = first_invalid_utf8(text);
  VERITY_CHECK(bad == std::string_view::npos, FormatError, "invalid UTF-8 at byte ", bad,
               " of ", text.size());
  int opts = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_IGNORE;
  if (o.nfkc) opts |= UTF8PROC_COMPAT;
  if (o.fold) opts |= UTF8PROC_CASEFOLD;
  if (o.strip_accents) opts |= UTF8PROC_STRIPMARK;
  buf.resize(text.size() + 16);
  for (;;) {
    auto n = utf8proc_decompose(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                utf8proc_ssize_t(text.size()), buf.data(),
                                utf8proc_ssize_t(buf.size()), utf8proc_option_t(opts));
    VERITY_CHECK(n >= 0, FormatError, "utf8proc: ", utf8proc_errmsg(n));
    if (size_t(n) <= buf.size()) {
      buf.resize(size_t(n));
      break;
    }
    buf.resize(size_t(n));
  }
  auto n = utf8proc_normalize_utf32(buf.data(), utf8proc_ssize_t(buf.size()),
                                    utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  VERITY_CHECK(n >= 0, FormatError, "utf8proc: ", utf8proc_errmsg(n));
  buf.resize(size_t(n));
}

// ---- spec parsing ----

bool parse_bool(std::string_view key, std::string_view v) {
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  throw ConfigError(cat("analyzer option '", key, "': invalid value '", v,
                        "' (valid: 0, 1, true, false)"));
}

}  // namespace

const std::vector<std::string_view>& english_stopwords() {
  static const std::vector<std::string_view> words = [] {
    std::vector<std::string_view> w{"a",    "an",    "and",  "are",   "as",   "at",   "be",
                                    "but",  "by",    "for",  "if",    "in",   "into", "is",
                                    "it",   "no",    "not",  "of",    "on",   "or",   "such",
                                    "that", "the",   "their", "then", "there", "these", "they",
                                    "this", "to",    "was",  "will",  "with"};
    std::sort(w.begin(), w.end());
    return w;
  }();
  return words;
}

Analyzer::Analyzer(AnalyzerOptions options) : options_(options) {
  VERITY_CHECK(options_.min_length >= 1, ConfigError,
               "analyzer option 'min' must be >= 1, got ", options_.min_length);
  if (options_.stem != Stemmer::kNone) thread_stemmer(options_.stem);  // fail early
}

Analyzer Analyzer::from_spec(std::string_view spec) {
  AnalyzerOptions o;
  size_t colon = spec.find(':');
  std::string_view kind = spec.substr(0, colon);
  if (kind == "english") {
    // defaults
  } else if (kind == "standard") {
    o.stem = Stemmer::kNone;
    o.stop = StopWords::kNone;
  } else {
    throw ConfigError(cat("analyzer spec '", spec, "': unknown kind '", kind,
                          "' (valid: english, standard)"));
  }
  std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  std::vector<std::string_view> seen;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    size_t eq = item.find('=');
    VERITY_CHECK(eq != std::string_view::npos, ConfigError, "analyzer spec '", spec,
                 "': expected key=value, got '", item, "' (valid keys: ", kValidKeys, ")");
    std::string_view key = item.substr(0, eq), v = item.substr(eq + 1);
    VERITY_CHECK(std::find(seen.begin(), seen.end(), key) == seen.end(), ConfigError,
                 "analyzer spec '", spec, "': key '", key, "' given twice");
    seen.push_back(key);
    if (key == "stem") {
      if (v == "porter") o.stem = Stemmer::kPorter;
      else if (v == "english") o.stem = Stemmer::kEnglish;
      else if (v == "none") o.stem = Stemmer::kNone;
      else throw ConfigError(cat("analyzer option 'stem': invalid value '", v,
                                 "' (valid: porter, english, none)"));
    } else if (key == "stop") {
      if (v == "english") o.stop = StopWords::kEnglish;
      else if (v == "none") o.stop = StopWords::kNone;
      else throw ConfigError(cat("analyzer option 'stop': invalid value '", v,
                                 "' (valid: english, none)"));
    } else if (key == "fold") {
      o.fold = parse_bool(key, v);
    } else if (key == "nfkc") {
      o.nfkc = parse_bool(key, v);
    } else if (key == "possessive") {
      o.possessive = parse_bool(key, v);
    } else if (key == "accents") {
      if (v == "keep") o.strip_accents = false;
      else if (v == "strip") o.strip_accents = true;
      else throw ConfigError(cat("analyzer option 'accents': invalid value '", v,
                                 "' (valid: keep, strip)"));
    } else if (key == "min") {
      size_t n = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      VERITY_CHECK(ec == std::errc() && p == v.data() + v.size() && n >= 1, ConfigError,
                   "analyzer option 'min': invalid value '", v, "' (a positive integer)");
      o.min_length = n;
    } else {
      throw ConfigError(cat("analyzer spec '", spec, "': unknown key '", key,
                            "' (valid keys: ", kValidKeys, ")"));
    }
  }
  return Analyzer(o);
}

std::string Analyzer::spec() const {
  const auto& o = options_;
  bool standard = o.stem == Stemmer::kNone && o.stop == StopWords::kNone;
  return cat(standard ? "standard" : "english", ":stem=", stemmer_name(o.stem),
             ",stop=", o.stop == StopWords::kEnglish ? "english" : "none",
             ",fold=", int(o.fold), ",nfkc=", int(o.nfkc),
             ",accents=", o.strip_accents ? "strip" : "keep",
             ",possessive=", int(o.possessive), ",min=", o.min_length);
}

bool is_english_stopword(std::string_view word) {
  if (word.size() > 5) return false;  // none is longer ("their", "there", "these")
  const auto& words = english_stopwords();
  return std::binary_search(words.begin(), words.end(), word);
}

bool Analyzer::is_stopword(std::string_view token) const {
  return options_.stop != StopWords::kNone && is_english_stopword(token);
}

std::vector<std::string> Analyzer::analyze(std::string_view text) const {
  std::vector<std::string> out;
  analyze(text, out);
  return out;
}

void Analyzer::analyze(std::string_view text, std::vector<std::string>& out) const {
  thread_local std::vector<int32_t> cps;
  normalize(text, options_, cps);
  sb_stemmer* stemmer = options_.stem == Stemmer::kNone ? nullptr : thread_stemmer(options_.stem);
  // Word frequencies are Zipfian, so a small per-thread cache skips most
  // stemmer calls (they cost ~1 us each, more than the rest of the pipeline).
  thread_local std::array<std::unordered_map<std::string, std::string>, 3> stem_caches;
  auto* stem_cache = &stem_caches[size_t(options_.stem)];

  std::string token;
  auto emit = [&](size_t num_code_points) {
    if (num_code_points < options_.min_length || is_stopword(token)) return;
    // Words of one or two letters are not stemmed, as in Porter's reference
    // implementation and Lucene's PorterStemmer (Snowball "porter" would turn "s" into "").
    if (stemmer && num_code_points > 2) {
      auto hit = stem_cache->find(token);
      if (hit != stem_cache->end()) {
        out.push_back(hit->second);
        return;
      }
      const sb_symbol* s = sb_stemmer_stem(
          stemmer, reinterpret_cast<const sb_symbol*>(token.data()), int(token.size()));
      VERITY_CHECK(s != nullptr, Error, "libstemmer: out of memory");
      int len = sb_stemmer_length(stemmer);
      std::string stem = len > 0 ? std::string(reinterpret_cast<const char*>(s), size_t(len)) : token;
      if (stem_cache->size() >= kStemCacheEntries) stem_cache->clear();
      stem_cache->emplace(token, stem);
      out.push_back(std::move(stem));
    } else {
      out.push_back(token);
    }
  };

  const size_t n = cps.size();
  size_t i = 0;
  while (i < n) {
    int32_t cp = cps[i];
    if (is_ideograph(cp)) {
      token.clear();
      append_utf8(token, char32_t(cp));
      emit(1);
      ++i;
      continue;
    }
    if (!starts_word(cp)) {
      ++i;
      continue;
    }
    token.clear();
    append_utf8(token, char32_t(cp));
    size_t length = 1;
    int32_t last = cp;
    size_t j = i + 1;
    while (j < n) {
      int32_t d = cps[j];
      if (is_ideograph(d)) break;
      if (continues_word(d)) {
        append_utf8(token, char32_t(d));
        ++length, last = d, ++j;
        continue;
      }
      // Apostrophe between letters: possessive 's ends the word and is
      // dropped; otherwise it is removed and the word continues (don't -> dont).
      if (is_apostrophe(d) && j + 1 < n && is_letter(cps[j + 1]) && !is_ideograph(cps[j + 1])) {
        bool s_then_end = (cps[j + 1] == 's' || cps[j + 1] == 'S') &&
                          (j + 2 >= n || !continues_word(cps[j + 2]));
        if (options_.possessive && s_then_end) {
          j += 2;
          break;
        }
        ++j;
        continue;
      }
      // Decimal and thousands separators inside numbers: 3.5, 1,000.
      if ((d == '.' || d == ',') && is_decimal_digit(last) && j + 1 < n &&
          is_decimal_digit(cps[j + 1])) {
        token.push_back(char(d));
        ++length, last = d, ++j;
        continue;
      }
      break;
    }
    emit(length);
    i = j;
  }
}

}  // namespace verity::text
