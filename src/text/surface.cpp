#include "text/surface.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "text/analyzer.hpp"
#include "text/case_folds.hpp"
#include "text/detail/snapshot_registry.hpp"
#include "text/utf8.hpp"
#include "text/word_kinds.hpp"

namespace verity::text {
namespace {

bool is_apostrophe(char32_t cp) {
  return cp == U'\'' || cp == U'\u2019' || cp == U'\u2018' || cp == U'`' || cp == U'\u00B4' || cp == U'\u02BC';
}

bool is_dash(char32_t cp) { return cp == U'-' || (cp >= U'\u2010' && cp <= U'\u2015'); }

bool is_sentence_punctuation(char32_t cp) {
  switch (cp) {
    case U'.': case U',': case U';': case U':': case U'!': case U'?': case U'"': case U'(': case U')':
    case U'[': case U']': case U'{': case U'}': case U'\\': case U'\u201C': case U'\u201D': case U'\u201E':
    case U'\u00AB': case U'\u00BB': case U'\u2026': case U'\u2022': case U'\u00B7': case U'\u00BF':
    case U'\u00A1':
      return true;
    default:
      return is_dash(cp);
  }
}

bool is_space(char32_t cp) {
  if (cp == U' ' || (cp >= U'\t' && cp <= U'\r') || cp == U'\u0085' || cp == U'\u2581') return true;
  if (cp < 0x80) return false;
  const auto category = utf8proc_category(utf8proc_int32_t(cp));
  return category == UTF8PROC_CATEGORY_ZS || category == UTF8PROC_CATEGORY_ZL || category == UTF8PROC_CATEGORY_ZP;
}

bool is_digit(char32_t cp) {
  if (cp < 0x80) return cp >= U'0' && cp <= U'9';
  return utf8proc_category(utf8proc_int32_t(cp)) == UTF8PROC_CATEGORY_ND;
}

// Code points of well-formed UTF-8; an ill-formed byte becomes one "code
// point" >= 0x110000 that stands for itself.
constexpr char32_t kRawByte = 0x110000;
std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  for (size_t pos = 0; pos < s.size();) {
    if (p[pos] < 0x80) {
      out.push_back(p[pos++]);
      continue;
    }
    utf8proc_int32_t cp;
    const auto n = utf8proc_iterate(p + pos, utf8proc_ssize_t(s.size() - pos), &cp);
    if (n <= 0) {
      out.push_back(kRawByte + p[pos++]);
      continue;
    }
    out.push_back(char32_t(cp));
    pos += size_t(n);
  }
  return out;
}


// surface_text, folding case or keeping it.
std::string surface_of(std::string_view text, bool fold_case) {
  // NFKC (with case folding); ill-formed input is read as it is.
  std::string folded(text);
  utf8proc_uint8_t* mapped = nullptr;
  const auto options = UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | (fold_case ? UTF8PROC_CASEFOLD : 0);
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), utf8proc_ssize_t(text.size()),
                              &mapped, utf8proc_option_t(options));
  if (n >= 0) folded.assign(reinterpret_cast<const char*>(mapped), size_t(n));
  std::free(mapped);
  if (n < 0 && fold_case) folded = lower_case_piece(text);

  const auto cps = decode(folded);
  std::string out;
  out.reserve(folded.size());
  bool space = false;      // a space is due before the next kept code point
  char32_t last = 0;       // the last code point kept
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t cp = cps[i];
    const bool next_digit = i + 1 < cps.size() && is_digit(cps[i + 1]);
    bool keep = true;
    if (cp >= kRawByte) {
      keep = true;
    } else if (is_apostrophe(cp)) {
      continue;
    } else if (is_space(cp)) {
      keep = false;
    } else if ((cp == U'.' || cp == U',' || cp == U':') && !space && is_digit(last) && next_digit) {
      keep = true;  // "3.5", "1,000", "10:30"
    } else if (is_dash(cp) && next_digit) {
      keep = true;  // "-5", "1903-1967"
    } else if (is_sentence_punctuation(cp)) {
      keep = false;
    }
    if (!keep) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    if (cp >= kRawByte) out.push_back(char(cp - kRawByte));
    else append_utf8(out, cp);
    last = cp;
  }
  return out;
}

std::vector<std::string_view> words_of(std::string_view surface) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < surface.size();) {
    const size_t end = std::min(surface.find(' ', pos), surface.size());
    out.push_back(surface.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

size_t edit_distance(const std::vector<char32_t>& x, const std::vector<char32_t>& y) {
  std::vector<size_t> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= x.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= y.size(); ++j) {
      const size_t here = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (x[i - 1] != y[j - 1])});
      diagonal = row[j], row[j] = here;
    }
  }
  return row[y.size()];
}

// Both folded words: at most two edits apart, or one the start of the other.
bool near_spelling(std::string_view x, std::string_view y) {
  if (x.starts_with(y) || y.starts_with(x)) return true;
  return edit_distance(decode(x), decode(y)) <= 2;
}

// Written as a name: a capital first ("Python", "USA"), or a small letter
// first and a capital after it ("iPhone", "eBay", "macOS"). A digit first
// ("16GB") is a number's, which other features read.
bool written_as_name(std::string_view word) {
  const auto cps = decode(word);
  const auto upper = [](char32_t c) { return utf8proc_category(utf8proc_int32_t(c)) == UTF8PROC_CATEGORY_LU; };
  if (cps.empty()) return false;
  if (upper(cps[0])) return true;
  return utf8proc_category(utf8proc_int32_t(cps[0])) == UTF8PROC_CATEGORY_LL &&
         std::any_of(cps.begin() + 1, cps.end(), upper);
}

// The most pieces the differing run of either side may hold for
// SurfaceSpellings::swapped_name to spell the pair: a swapped word and a
// little punctuation or case around it.
constexpr size_t kSwapPieces = 12;
// The longest differing run for a transposition: the two words and what lies
// between them.
constexpr size_t kTransposePieces = 64;

// A coordination read the other way round holds a coordinator just before its
// second conjunct, an article or possessive aside, and a preposition that
// also leads the first ("by value or by reference").
bool coordinated(const std::vector<std::string_view>& words, size_t first, size_t second) {
  static constexpr std::string_view kCoordinators[] = {"and", "or", "nor", "&", "vs", "versus", "plus"};
  static constexpr std::string_view kDeterminers[] = {"a",   "an",  "the",  "my",  "your", "his",
                                                      "her", "its", "our", "their", "this", "that"};
  static constexpr std::string_view kPrepositions[] = {"by",   "in",      "on",   "at",    "to",    "for",
                                                       "from", "with",    "of",   "into",  "over",  "under",
                                                       "about", "through", "as"};
  const auto in = [](const auto& list, std::string_view w) { return std::find(std::begin(list), std::end(list), w) != std::end(list); };
  const auto lead = first > 0 ? words[first - 1] : std::string_view();
  size_t k = second;
  while (k > first + 1 && (in(kDeterminers, words[k - 1]) || (words[k - 1] == lead && in(kPrepositions, lead))))
    --k;
  return k > first + 1 && in(kCoordinators, words[k - 1]);
}
}  // namespace

std::string surface_text(std::string_view text) { return surface_of(text, true); }
std::string cased_surface_text(std::string_view text) { return surface_of(text, false); }

std::optional<NameSwap> swapped_name(std::string_view a, std::string_view b) {
  const auto cased_a = cased_surface_text(a), cased_b = cased_surface_text(b);
  const auto wa = words_of(cased_a), wb = words_of(cased_b);
  if (wa.size() != wb.size()) return std::nullopt;
  std::optional<size_t> differing;
  std::string folded_a, folded_b;
  for (size_t i = 0; i < wa.size(); ++i) {
    if (wa[i] == wb[i]) continue;
    auto fa = surface_text(wa[i]), fb = surface_text(wb[i]);
    if (fa == fb) continue;  // the same word in another case
    if (differing) return std::nullopt;
    differing = i, folded_a = std::move(fa), folded_b = std::move(fb);
  }
  if (!differing || *differing == 0) return std::nullopt;
  const auto x = wa[*differing], y = wb[*differing];
  if (!written_as_name(x) || !written_as_name(y) || near_spelling(folded_a, folded_b)) return std::nullopt;
  return NameSwap{std::string(x), std::string(y)};
}

namespace {
// The one word in small letters that two texts' cased surface words differ
// in, the rest the same; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> one_small_word_changed(std::string_view a, std::string_view b) {
  const auto cased_a = cased_surface_text(a), cased_b = cased_surface_text(b);
  const auto wa = words_of(cased_a), wb = words_of(cased_b);
  if (wa.size() != wb.size()) return std::nullopt;
  std::optional<size_t> differing;
  for (size_t i = 0; i < wa.size(); ++i) {
    if (wa[i] == wb[i]) continue;
    if (differing) return std::nullopt;
    differing = i;
  }
  if (!differing) return std::nullopt;
  const auto small = [](std::string_view w) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  };
  const auto x = wa[*differing], y = wb[*differing];
  if (!small(x) || !small(y)) return std::nullopt;
  return std::pair{std::string(x), std::string(y)};
}

// swapped_kind and reversed_word of a pair's one changed word.
std::optional<KindSwap> kind_swap_of(const std::pair<std::string, std::string>& words, const WordKinds* kinds) {
  if (!kinds) kinds = WordKinds::english();
  if (!kinds || !kinds->same_kind(words.first, words.second)) return std::nullopt;
  return KindSwap{words.first, words.second};
}

std::optional<Reversal> reversal_of(const std::pair<std::string, std::string>& words) {
  const bool first_shorter = words.first.size() <= words.second.size();
  const std::string& x = first_shorter ? words.first : words.second;
  const std::string& y = first_shorter ? words.second : words.first;
  for (std::string_view prefix : {"un", "dis"})
    if (x.size() >= 3 && y.size() == prefix.size() + x.size() && y.starts_with(prefix) && y.ends_with(x))
      return Reversal{x, y};
  return std::nullopt;
}
}  // namespace

std::optional<KindSwap> swapped_kind(std::string_view a, std::string_view b, const WordKinds* kinds) {
  const auto words = one_small_word_changed(a, b);
  return words ? kind_swap_of(*words, kinds) : std::nullopt;
}

std::optional<Reversal> reversed_word(std::string_view a, std::string_view b) {
  const auto words = one_small_word_changed(a, b);
  return words ? reversal_of(*words) : std::nullopt;
}

namespace {
// transposed_words over the words of the two folded surfaces.
std::optional<Transposition> transposed_in(const std::vector<std::string_view>& wa,
                                           const std::vector<std::string_view>& wb) {
  if (wa.size() != wb.size()) return std::nullopt;
  std::vector<size_t> differing;
  for (size_t i = 0; i < wa.size(); ++i)
    if (wa[i] != wb[i]) {
      if (differing.size() == 2) return std::nullopt;
      differing.push_back(i);
    }
  if (differing.size() != 2) return std::nullopt;
  const size_t i = differing[0], j = differing[1];
  if (j == i + 1 || wa[i] != wb[j] || wa[j] != wb[i]) return std::nullopt;
  if ((is_english_stopword(wa[i]) && is_english_stopword(wa[j])) || coordinated(wa, i, j)) return std::nullopt;
  return Transposition{std::string(wa[i]), std::string(wa[j])};
}
}  // namespace

std::optional<Transposition> transposed_words(std::string_view a, std::string_view b) {
  const auto folded_a = surface_text(a), folded_b = surface_text(b);
  return transposed_in(words_of(folded_a), words_of(folded_b));
}

namespace {
// A number as a word reads it: its value, what is glued to it and how it is
// written. Words the number words hold no digits for ("twice", "half") are
// values of their own, in a unit of their own.
struct NumberReading {
  std::string sign;   // a currency sign before digits: "$500"
  std::string value;  // "1,000" and "thousand" are "1000"; "3.50" is "3.5"
  std::string unit;   // letters or "%" after digits ("16gb", "10%", "10am"); every ordinal is kOrdinalUnit
};

// The one unit of every ordinal ("2nd", "second", "twenty first"): ordinals
// compare by value alone.
constexpr std::string_view kOrdinalUnit = "#th";

// The number words, each with its reading: F5's lexicon and the number rules
// read the same list.
struct NumberWord {
  std::string_view word, value, unit;
};
constexpr NumberWord kNumberWords[] = {
    {"zero", "0", ""},        {"two", "2", ""},          {"three", "3", ""},       {"four", "4", ""},
    {"five", "5", ""},        {"six", "6", ""},          {"seven", "7", ""},       {"eight", "8", ""},
    {"nine", "9", ""},        {"ten", "10", ""},         {"eleven", "11", ""},     {"twelve", "12", ""},
    {"thirteen", "13", ""},   {"fourteen", "14", ""},    {"fifteen", "15", ""},    {"sixteen", "16", ""},
    {"seventeen", "17", ""},  {"eighteen", "18", ""},    {"nineteen", "19", ""},   {"twenty", "20", ""},
    {"thirty", "30", ""},     {"forty", "40", ""},       {"fifty", "50", ""},      {"sixty", "60", ""},
    {"seventy", "70", ""},    {"eighty", "80", ""},      {"ninety", "90", ""},     {"hundred", "100", ""},
    {"thousand", "1000", ""}, {"million", "1000000", ""}, {"billion", "1000000000", ""},
    {"trillion", "1000000000000", ""}, {"dozen", "12", ""}, {"twice", "2", "times"}, {"thrice", "3", "times"},
    {"half", "half", "half"}};

// "one" is mostly a pronoun for F5's lexicon, so kNumberWords leaves it out,
// but facing another number ("one hour" / "two hours") the rules read it as 1.
constexpr NumberWord kOne = {"one", "1", ""};

const NumberWord* number_word(std::string_view word) {
  if (word == kOne.word) return &kOne;
  for (const auto& n : kNumberWords)
    if (n.word == word) return &n;
  return nullptr;
}

// A plain decimal: digits with at most one '.', not "1.0.0", "10:30" or "1903-1967".
bool plain_decimal(std::string_view value) {
  return std::count(value.begin(), value.end(), '.') <= 1 && value.find_first_of(":-") == std::string_view::npos;
}

// A decimal value times a thousand: "1.5" is "1500", "20" is "20000".
std::string thousand_times(const std::string& value) {
  const size_t dot = value.find('.');
  std::string whole = value.substr(0, dot), fraction = dot == std::string::npos ? "" : value.substr(dot + 1);
  fraction.resize(std::max<size_t>(fraction.size(), 3), '0');
  std::string out = whole + fraction.substr(0, 3);
  if (fraction.size() > 3) out += '.' + fraction.substr(3);
  while (out.size() > 1 && out[0] == '0' && out[1] != '.') out.erase(0, 1);  // "0250" is "250"
  return out;
}

// Unit names, each with the unit it names: "10 kg", "10 kilograms" and
// "10kg" are one quantity. Names that are also common words or other units
// ("in", "m", "s", "pound") are left out.
struct UnitName {
  std::string_view name, unit;
};
constexpr UnitName kUnitNames[] = {
    {"mg", "mg"},           {"milligram", "mg"},   {"milligrams", "mg"},   {"g", "g"},
    {"gram", "g"},          {"grams", "g"},        {"kg", "kg"},           {"kgs", "kg"},
    {"kilo", "kg"},         {"kilos", "kg"},       {"kilogram", "kg"},     {"kilograms", "kg"},
    {"lb", "lb"},           {"lbs", "lb"},         {"oz", "oz"},           {"ounce", "oz"},
    {"ounces", "oz"},       {"ton", "ton"},        {"tons", "ton"},        {"tonne", "ton"},
    {"tonnes", "ton"},      {"mm", "mm"},          {"millimeter", "mm"},   {"millimeters", "mm"},
    {"millimetre", "mm"},   {"millimetres", "mm"}, {"cm", "cm"},           {"centimeter", "cm"},
    {"centimeters", "cm"},  {"centimetre", "cm"},  {"centimetres", "cm"},  {"meter", "meter"},
    {"meters", "meter"},    {"metre", "meter"},    {"metres", "meter"},    {"km", "km"},
    {"kms", "km"},          {"kilometer", "km"},   {"kilometers", "km"},   {"kilometre", "km"},
    {"kilometres", "km"},   {"inch", "inch"},      {"inches", "inch"},     {"ft", "ft"},
    {"foot", "ft"},         {"feet", "ft"},        {"yard", "yard"},       {"yards", "yard"},
    {"mi", "mile"},         {"mile", "mile"},      {"miles", "mile"},      {"ml", "ml"},
    {"milliliter", "ml"},   {"milliliters", "ml"}, {"millilitre", "ml"},   {"millilitres", "ml"},
    {"l", "liter"},         {"liter", "liter"},    {"liters", "liter"},    {"litre", "liter"},
    {"litres", "liter"},    {"gallon", "gallon"},  {"gallons", "gallon"},  {"gal", "gallon"},
    {"ms", "ms"},           {"millisecond", "ms"}, {"milliseconds", "ms"}, {"sec", "second"},
    {"secs", "second"},     {"second", "second"},  {"seconds", "second"},  {"min", "minute"},
    {"mins", "minute"},     {"minute", "minute"},  {"minutes", "minute"},  {"h", "hour"},
    {"hr", "hour"},         {"hrs", "hour"},       {"hour", "hour"},       {"hours", "hour"},
    {"day", "day"},         {"days", "day"},       {"wk", "week"},         {"wks", "week"},
    {"week", "week"},       {"weeks", "week"},     {"month", "month"},     {"months", "month"},
    {"yr", "year"},         {"yrs", "year"},       {"year", "year"},       {"years", "year"},
    {"decade", "decade"},   {"decades", "decade"}, {"century", "century"}, {"centuries", "century"},
    {"am", "am"},           {"pm", "pm"},          {"kb", "kb"},           {"kilobyte", "kb"},
    {"kilobytes", "kb"},    {"mb", "mb"},          {"megabyte", "mb"},     {"megabytes", "mb"},
    {"gb", "gb"},           {"gigabyte", "gb"},    {"gigabytes", "gb"},    {"tb", "tb"},
    {"terabyte", "tb"},     {"terabytes", "tb"},   {"%", "%"},             {"percent", "%"},
    {"pct", "%"},           {"cent", "cent"},      {"cents", "cent"},      {"times", "times"}};

// Currency names, each with the sign it stands for: "10 dollars" is "$10".
constexpr UnitName kCurrencyNames[] = {
    {"dollar", "$"}, {"dollars", "$"}, {"usd", "$"}, {"euro", "\u20AC"}, {"euros", "\u20AC"}, {"eur", "\u20AC"},
    {"gbp", "\u00A3"}, {"yen", "\u00A5"}, {"rupee", "\u20B9"}, {"rupees", "\u20B9"}, {"rs", "\u20B9"},
    {"inr", "\u20B9"}};

// Ordinal words, each with its value: "first" is "1st".
struct OrdinalWord {
  std::string_view word;
  int value;
};
constexpr OrdinalWord kOrdinalWords[] = {
    {"first", 1},       {"second", 2},       {"third", 3},       {"fourth", 4},       {"fifth", 5},
    {"sixth", 6},       {"seventh", 7},      {"eighth", 8},      {"ninth", 9},        {"tenth", 10},
    {"eleventh", 11},   {"twelfth", 12},     {"thirteenth", 13}, {"fourteenth", 14},  {"fifteenth", 15},
    {"sixteenth", 16},  {"seventeenth", 17}, {"eighteenth", 18}, {"nineteenth", 19},  {"twentieth", 20},
    {"thirtieth", 30},  {"fortieth", 40},    {"fiftieth", 50},   {"sixtieth", 60},    {"seventieth", 70},
    {"eightieth", 80},  {"ninetieth", 90}};

std::optional<int> ordinal_value(std::string_view word) {
  for (const auto& o : kOrdinalWords)
    if (o.word == word) return o.value;
  return std::nullopt;
}

std::optional<std::string_view> named(std::span<const UnitName> names, std::string_view word) {
  for (const auto& n : names)
    if (n.name == word) return n.unit;
  return std::nullopt;
}

std::optional<NumberReading> read_number(std::string_view word) {
  if (const auto* n = number_word(word)) return NumberReading{"", std::string(n->value), std::string(n->unit)};
  if (const auto ordinal = ordinal_value(word))
    return NumberReading{"", std::to_string(*ordinal), std::string(kOrdinalUnit)};
  NumberReading out;
  for (const std::string_view sign : {"$", "\u20AC", "\u00A3", "\u00A5", "\u20B9"})
    if (word.starts_with(sign)) {
      out.sign = sign, word.remove_prefix(sign.size());
      break;
    }
  size_t end = 0;
  bool digit = false;
  for (; end < word.size(); ++end) {
    const char ch = word[end];
    if (ch >= '0' && ch <= '9') digit = true;
    else if (ch != '.' && ch != ',' && ch != ':' && ch != '-') break;
  }
  if (!digit) return std::nullopt;
  const auto unit = word.substr(end);
  if (unit.size() > 5) return std::nullopt;
  for (const char ch : unit)
    if (!(ch >= 'a' && ch <= 'z') && ch != '%') return std::nullopt;  // a word that holds digits: "i3", "mp3s"
  for (const char ch : word.substr(0, end))
    if (ch != ',') out.value.push_back(ch);
  // A plain decimal ("3.50") reads by its value.
  const bool decimal = plain_decimal(out.value);
  if (decimal && out.value.find('.') != std::string::npos) {
    while (out.value.back() == '0') out.value.pop_back();
    if (out.value.back() == '.') out.value.pop_back();
  }
  if (unit == "st" || unit == "nd" || unit == "rd" || unit == "th") {
    out.unit = kOrdinalUnit;
  } else if (unit == "k" && decimal) {  // "k" multiplies ("20k" is 20000) rather than names a unit
    out.value = thousand_times(out.value);
  } else if (const auto currency = named(kCurrencyNames, unit); currency && out.sign.empty()) {
    out.sign = *currency;  // "1000rs"
  } else {
    out.unit = named(kUnitNames, unit).value_or(unit);  // "10kgs" is "10 kg"; a unit of no name stays as written
  }
  return out;
}

// The value of a word that may stand in a number of several words.
std::optional<double> cardinal_value(std::string_view word) {
  const auto* n = number_word(word);
  if (!n || !n->unit.empty()) return std::nullopt;
  return std::strtod(n->value.data(), nullptr);  // a literal: its view ends in '\0'
}

// A number of several words' value written as read_number writes digits: a
// whole number plainly, a fraction without trailing zeros. Rounded to six
// places first, since "2.3 million" is 2299999.9999999995 in a double.
std::string value_text(double v) {
  char buffer[320];  // "%.0f" of the largest double
  if (!(std::fabs(v) < 1e15)) {
    std::snprintf(buffer, sizeof buffer, "%.0f", v);  // a whole number at this size, or "inf"
    return buffer;
  }
  std::snprintf(buffer, sizeof buffer, "%.6f", std::round(v * 1e6) / 1e6);
  std::string out = buffer;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out == "-0" ? "0" : out;
}

// A number of several words from words[i] ("twenty five", "two hundred and
// ten", "a hundred", "3 million", "$1.5 million", "two dozen"), with how many
// words it takes; nullopt when fewer than two words make one. Each word must
// be able to follow the one before: "five twenty" or "two three" are two
// numbers, never one. `first` is read_number of words[i].
std::optional<std::pair<NumberReading, size_t>> number_phrase(const std::vector<std::string_view>& words, size_t i,
                                                              const std::optional<NumberReading>& first) {
  enum class Last { none, digits, small, tens, hundred, scale, dozen, conjunction };
  Last last = Last::none;
  double total = 0, group = 0, last_scale = 0;
  NumberReading out;
  const auto is_scale = [](double v) { return v >= 1000; };
  size_t j = i;
  for (; j < words.size(); ++j) {
    const auto w = words[j];
    if (j == i && w == "a" && j + 1 < words.size()) {  // "a hundred", "a dozen"
      const auto next = cardinal_value(words[j + 1]);
      if (!next || (*next != 100 && *next != 12 && !is_scale(*next))) break;
      group = 1, last = Last::small;
      continue;
    }
    if (j == i && first && first->unit.empty() && !number_word(w) && plain_decimal(first->value)) {
      group = std::strtod(first->value.c_str(), nullptr), out.sign = first->sign, last = Last::digits;
      continue;
    }
    if (w == "and" && (last == Last::hundred || last == Last::scale) && j + 1 < words.size()) {
      const auto next = cardinal_value(words[j + 1]);
      const auto next_ordinal = ordinal_value(words[j + 1]);
      if (!(next && *next < 100) && !next_ordinal) break;
      last = Last::conjunction;
      continue;
    }
    const auto v = cardinal_value(w);
    if (!v) {
      // An ordinal ends it: "twenty first", "two hundred and fifth". Not
      // "second", which after a number is mostly the unit: "a thirty second clip".
      const auto ordinal = w == "second" ? std::nullopt : ordinal_value(w);
      const bool follows = ordinal && ((last == Last::tens && *ordinal < 10) ||
                                       ((last == Last::hundred || last == Last::scale || last == Last::conjunction) &&
                                        *ordinal < 100));
      if (follows) group += *ordinal, out.unit = kOrdinalUnit, last = Last::small, ++j;
      break;
    }
    const bool opening = last == Last::none || last == Last::hundred || last == Last::scale || last == Last::conjunction;
    if (w == "dozen") {
      if (last != Last::small && last != Last::tens && last != Last::digits) break;
      group *= 12, last = Last::dozen;
    } else if (*v < 20) {
      if (!opening && !(last == Last::tens && *v >= 1)) break;
      group += *v, last = Last::small;
    } else if (*v < 100) {
      if (!opening) break;
      group += *v, last = Last::tens;
    } else if (*v == 100) {
      if (last != Last::none && last != Last::small && last != Last::tens && last != Last::digits) break;
      group = (last == Last::none ? 1 : group) * 100, last = Last::hundred;
    } else {
      if (last == Last::conjunction || (last_scale != 0 && *v >= last_scale)) break;
      total += (last == Last::none ? 1 : group) * *v, group = 0, last_scale = *v, last = Last::scale;
    }
  }
  if (last == Last::conjunction) --j;
  if (j - i < 2) return std::nullopt;
  out.value = value_text(total + group);
  return std::pair{std::move(out), j - i};
}

// A text's words, with each number (of one or several words, a unit or
// currency name after it taken in) read as one quantity.
struct ReadWord {
  std::string text;                     // as written; a quantity's words joined by spaces
  std::optional<NumberReading> number;  // set for a quantity
};

std::vector<ReadWord> read_words(const std::vector<std::string_view>& words) {
  std::vector<ReadWord> out;
  for (size_t i = 0; i < words.size();) {
    ReadWord word;
    size_t taken = 1;
    word.number = read_number(words[i]);
    if (auto phrase = number_phrase(words, i, word.number)) word.number = std::move(phrase->first), taken = phrase->second;
    if (word.number && i + taken < words.size()) {
      const auto next = words[i + taken];
      if (const auto unit = named(kUnitNames, next); unit && word.number->unit.empty()) {
        word.number->unit = *unit, ++taken;
      } else if (const auto currency = named(kCurrencyNames, next); currency && word.number->sign.empty()) {
        word.number->sign = *currency, ++taken;
      }
    }
    for (size_t k = i; k < i + taken; ++k) {
      if (k > i) word.text.push_back(' ');
      word.text.append(words[k]);
    }
    out.push_back(std::move(word));
    i += taken;
  }
  return out;
}

// One word the other's singular or plural: "hour" / "hours", "box" /
// "boxes", "city" / "cities", "person" / "people".
bool singular_and_plural(std::string_view x, std::string_view y) {
  static constexpr std::pair<std::string_view, std::string_view> kIrregular[] = {
      {"man", "men"},     {"woman", "women"}, {"child", "children"}, {"person", "people"},
      {"tooth", "teeth"}, {"mouse", "mice"},  {"goose", "geese"}};
  for (const auto& [one, many] : kIrregular)
    if ((x == one && y == many) || (x == many && y == one)) return true;
  if (x.size() > y.size()) std::swap(x, y);
  if (x.empty()) return false;
  if (!y.starts_with(x)) return x.back() == 'y' && y == std::string(x.substr(0, x.size() - 1)) + "ies";
  const auto tail = y.substr(x.size());
  return tail == "s" || tail == "es";
}

// Two texts whose surface words differ only in numbers, compared by value.
struct NumberComparison {
  std::optional<NumberChange> change;  // the first number changed in value
  bool respelled = false;              // some number written two ways
};

// Over the words of the two folded surfaces.
std::optional<NumberComparison> compare_numbers(const std::vector<std::string_view>& words_a,
                                                const std::vector<std::string_view>& words_b) {
  if (words_a == words_b) return NumberComparison{};
  const auto wa = read_words(words_a), wb = read_words(words_b);
  if (wa.size() != wb.size()) return std::nullopt;
  NumberComparison out;
  std::vector<std::string> values_a, values_b;
  // A sign or unit on one side alone says nothing sure ("20k" / "20000",
  // "10%" / "10"); two that differ are another quantity ("16gb" / "16tb").
  const auto comparable = [](const std::string& x, const std::string& y) {
    return x == y || (!x.empty() && !y.empty());
  };
  for (size_t i = 0; i < wa.size(); ++i) {
    if (wa[i].text == wb[i].text) continue;
    const auto& ra = wa[i].number;
    const auto& rb = wb[i].number;
    if (!ra || !rb) {
      // A noun after a number agrees with it ("1 hour" / "24 hours").
      const bool after_numbers = i > 0 && wa[i - 1].number && wb[i - 1].number;
      if (!ra && !rb && after_numbers && singular_and_plural(wa[i].text, wb[i].text)) continue;
      return std::nullopt;
    }
    if (!comparable(ra->sign, rb->sign) || !comparable(ra->unit, rb->unit)) return std::nullopt;
    auto key_a = ra->sign + ' ' + ra->value + ' ' + ra->unit, key_b = rb->sign + ' ' + rb->value + ' ' + rb->unit;
    if (key_a == key_b) {
      out.respelled = true;
      continue;
    }
    values_a.push_back(std::move(key_a)), values_b.push_back(std::move(key_b));
    if (!out.change) out.change = NumberChange{wa[i].text, wb[i].text};
  }
  // The same numbers in another order ("the 14th, 16th and 117th" / "the
  // 117th, 16th and 14th") are a reordering, which other readings judge.
  std::sort(values_a.begin(), values_a.end());
  std::sort(values_b.begin(), values_b.end());
  if (out.change && values_a == values_b) return std::nullopt;
  return out;
}

std::optional<NumberComparison> compare_numbers(std::string_view a, std::string_view b) {
  const auto folded_a = surface_text(a), folded_b = surface_text(b);
  return compare_numbers(words_of(folded_a), words_of(folded_b));
}
}  // namespace

const std::vector<std::string>& english_number_words() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> out;
    for (const auto& n : kNumberWords) out.emplace_back(n.word);
    return out;
  }();
  return words;
}

std::optional<NumberChange> changed_numbers(std::string_view a, std::string_view b) {
  auto compared = compare_numbers(a, b);
  return compared ? compared->change : std::nullopt;
}

bool respelled_numbers(std::string_view a, std::string_view b) {
  const auto compared = compare_numbers(a, b);
  return compared && !compared->change && compared->respelled;
}

bool SurfaceSpellings::add(uint32_t identity, Spelling spelling) {
  auto [it, inserted] = spellings_.emplace(identity, spelling);
  if (inserted) return true;
  if (it->second == spelling || it->second.kind == Kind::opaque) return false;
  it->second = Spelling{"", Kind::opaque};  // spelled two ways (or a hash collision): never a match
  return true;
}

bool SurfaceSpellings::add_sentencepiece(std::span<const std::string> pieces, size_t reserved) {
  bool added = false;
  for (size_t id = 0; id < pieces.size(); ++id) {
    const auto identity = piece_identity(pieces[id]);
    if (id == 0) {
      added |= add(identity, {"", Kind::opaque});
      continue;
    }
    if (id < reserved) {
      added |= add(identity, {"", Kind::silent});
      continue;
    }
    std::string spelled;
    const std::string_view piece = pieces[id];
    for (size_t pos = 0; pos < piece.size();) {
      if (piece.compare(pos, 3, "\u2581") == 0) {
        spelled.push_back(' ');
        pos += 3;
      } else {
        spelled.push_back(piece[pos++]);
      }
    }
    added |= add(identity, {std::move(spelled), Kind::spelled});
  }
  return added;
}

bool SurfaceSpellings::add_wordpiece(std::span<const std::string> pieces, std::string_view continuing_prefix,
                                     std::string_view unknown, std::span<const std::string> specials) {
  bool added = false;
  for (const auto& piece : pieces) {
    const auto identity = piece_identity(piece);
    if (piece == unknown) {
      added |= add(identity, {"", Kind::opaque});
    } else if (std::find(specials.begin(), specials.end(), piece) != specials.end()) {
      added |= add(identity, {"", Kind::silent});
    } else if (!continuing_prefix.empty() && std::string_view(piece).starts_with(continuing_prefix)) {
      added |= add(identity, {piece.substr(continuing_prefix.size()), Kind::spelled});
    } else {
      added |= add(identity, {" " + piece, Kind::spelled});
    }
  }
  return added;
}

const std::string* SurfaceSpellings::spelling_of(uint32_t identity) const {
  const auto it = spellings_.find(identity);
  return it == spellings_.end() || it->second.kind != Kind::spelled ? nullptr : &it->second.text;
}

bool SurfaceSpellings::joins(uint32_t before, uint32_t next) const {
  const std::string* a = spelling_of(before);
  const std::string* b = spelling_of(next);
  if (a == nullptr || b == nullptr || a->empty() || b->empty()) return false;
  auto word_byte = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || std::isalnum(u) != 0;
  };
  return word_byte(a->back()) && word_byte(b->front());
}

std::optional<std::string> SurfaceSpellings::spelled(std::span<const uint32_t> ids) const {
  std::string text;
  for (const auto id : ids) {
    const auto it = spellings_.find(id);
    if (it == spellings_.end() || it->second.kind == Kind::opaque) return std::nullopt;
    text += it->second.text;
  }
  return text;
}

std::optional<std::string> SurfaceSpellings::surface(std::span<const uint32_t> ids) const {
  const auto text = spelled(ids);
  if (!text) return std::nullopt;
  return surface_text(*text);
}

// Walks the characters a run of pieces spells, one at a time.
class SurfaceSpellings::Cursor {
 public:
  Cursor(const SurfaceSpellings& table, std::span<const uint32_t> ids) : table_(table), ids_(ids) {}
  // The next byte, or kEnd past the last piece, or kOpaque at a piece that
  // spells no known text.
  static constexpr int kEnd = -1, kOpaque = -2;
  int next() {
    while (at_ == text_.size()) {
      if (piece_ == ids_.size()) return kEnd;
      const auto it = table_.spellings_.find(ids_[piece_++]);
      if (it == table_.spellings_.end() || it->second.kind == Kind::opaque) return kOpaque;
      text_ = it->second.text, at_ = 0;
    }
    return static_cast<unsigned char>(text_[at_++]);
  }

 private:
  const SurfaceSpellings& table_;
  std::span<const uint32_t> ids_;
  size_t piece_ = 0, at_ = 0;
  std::string_view text_;
};

bool SurfaceSpellings::ascii_letters_differ(std::span<const uint32_t> a, std::span<const uint32_t> b) const {
  // surface_text keeps every ASCII letter (lower-cased) and digit in order;
  // ASCII text is its own NFKC. So while both sides spell ASCII, their
  // letters and digits must agree; a byte outside ASCII (which NFKC and case
  // folding may change) leaves the question to the full comparison.
  Cursor ca(*this, a), cb(*this, b);
  const auto next_alnum = [](Cursor& c) {
    for (;;) {
      const int ch = c.next();
      if (ch < 0 || ch >= 0x80 || std::isalnum(ch)) return ch;
    }
  };
  for (;;) {
    const int x = next_alnum(ca), y = next_alnum(cb);
    if (x == Cursor::kOpaque || y == Cursor::kOpaque) return true;  // no surface: never a match
    if (x >= 0x80 || y >= 0x80) return false;
    if (x == Cursor::kEnd || y == Cursor::kEnd) return x != y;
    if (std::tolower(x) != std::tolower(y)) return true;
  }
}

bool SurfaceSpellings::same_surface(std::span<const uint32_t> a, std::span<const uint32_t> b) const {
  if (a.empty() || b.empty() || spellings_.empty()) return false;
  const size_t shorter = std::min(a.size(), b.size()), longer = std::max(a.size(), b.size());
  if (longer > 4 * shorter + 16) return false;
  if (ascii_letters_differ(a, b)) return false;
  const auto sa = surface(a);
  if (!sa || sa->empty()) return false;
  const auto sb = surface(b);
  return sb && *sa == *sb;
}

std::optional<SurfaceSpellings::ClosePair> SurfaceSpellings::spelled_if_close(std::span<const uint32_t> a,
                                                                               std::span<const uint32_t> b,
                                                                               const CaseFolds* folds,
                                                                               size_t longest_run) const {
  if (a.empty() || b.empty() || spellings_.empty()) return std::nullopt;
  if (std::max(a.size(), b.size()) - std::min(a.size(), b.size()) > kSwapPieces) return std::nullopt;
  // Most pairs differ in more than a word or two: told from their identities alone.
  const auto same = [&](uint32_t x, uint32_t y) { return x == y || (folds && folds->fold(x) == folds->fold(y)); };
  size_t prefix = 0, suffix = 0;
  while (prefix < a.size() && prefix < b.size() && same(a[prefix], b[prefix])) ++prefix;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         same(a[a.size() - 1 - suffix], b[b.size() - 1 - suffix]))
    ++suffix;
  const size_t run = std::max(a.size(), b.size()) - prefix - suffix;
  if (run == 0 || run > longest_run) return std::nullopt;
  auto sa = spelled(a);
  if (!sa) return std::nullopt;
  auto sb = spelled(b);
  if (!sb) return std::nullopt;
  return ClosePair{std::move(*sa), std::move(*sb), run};
}

std::optional<NameSwap> SurfaceSpellings::swapped_name(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                                       const CaseFolds* folds) const {
  const auto texts = spelled_if_close(a, b, folds, kSwapPieces);
  if (!texts) return std::nullopt;
  return text::swapped_name(texts->a, texts->b);
}

std::optional<Transposition> SurfaceSpellings::transposed(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                                          const CaseFolds* folds) const {
  const auto texts = spelled_if_close(a, b, folds, kTransposePieces);
  if (!texts) return std::nullopt;
  return text::transposed_words(texts->a, texts->b);
}

std::optional<NumberChange> SurfaceSpellings::changed_numbers(std::span<const uint32_t> a,
                                                              std::span<const uint32_t> b,
                                                              const CaseFolds* folds) const {
  const auto texts = spelled_if_close(a, b, folds, kSwapPieces);
  if (!texts) return std::nullopt;
  return text::changed_numbers(texts->a, texts->b);
}

SurfaceSpellings::PairReadings SurfaceSpellings::readings(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                                          const CaseFolds* folds) const {
  static_assert(kTransposePieces >= kSwapPieces);
  PairReadings out;
  const auto texts = spelled_if_close(a, b, folds, kTransposePieces);
  if (!texts) return out;
  // Folded once for the two readings that compare folded words.
  const auto folded_a = surface_text(texts->a), folded_b = surface_text(texts->b);
  const auto wa = words_of(folded_a), wb = words_of(folded_b);
  out.transposition = transposed_in(wa, wb).has_value();
  if (texts->run <= kSwapPieces) {
    out.name_swap = text::swapped_name(texts->a, texts->b).has_value();
    if (const auto changed = one_small_word_changed(texts->a, texts->b)) {  // read once for both
      out.kind_swap = !out.name_swap && kind_swap_of(*changed, nullptr).has_value();
      out.reversal = reversal_of(*changed).has_value();
    }
    if (const auto numbers = compare_numbers(wa, wb)) {
      out.number_change = numbers->change.has_value();
      out.number_respelling = !numbers->change && numbers->respelled;
    }
  }
  return out;
}

namespace {
// Adds through `add` (a SurfaceSpellings member); a vocabulary seen before adds nothing.
template <class Add>
void register_with(Add add) {
  detail::registry_of<SurfaceSpellings>().update([&](const SurfaceSpellings& now) -> std::optional<SurfaceSpellings> {
    SurfaceSpellings next = now;
    if (!add(next)) return std::nullopt;
    return next;
  });
}
}  // namespace

void register_sentencepiece_spellings(std::span<const std::string> pieces, size_t reserved) {
  register_with([&](SurfaceSpellings& s) { return s.add_sentencepiece(pieces, reserved); });
}

void register_wordpiece_spellings(std::span<const std::string> pieces, std::string_view continuing_prefix,
                                  std::string_view unknown, std::span<const std::string> specials) {
  register_with([&](SurfaceSpellings& s) { return s.add_wordpiece(pieces, continuing_prefix, unknown, specials); });
}

std::shared_ptr<const SurfaceSpellings> registered_surface_spellings() {
  return detail::registry_of<SurfaceSpellings>().snapshot();
}

}  // namespace verity::text
