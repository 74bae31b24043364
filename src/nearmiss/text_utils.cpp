#include "nearmiss/text_utils.hpp"

#include <array>
#include <cctype>

namespace verity::nearmiss {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_closer(char c) { return c == '"' || c == '\'' || c == ')' || c == ']'; }

// Words after which a period is part of an abbreviation, not a sentence end.
constexpr std::array<std::string_view, 22> kAbbreviations = {
    "Mr", "Mrs", "Ms", "Dr", "St", "Sr", "Jr", "Gen", "Gov", "Hon", "Rev", "Col",
    "Capt", "Lt", "Sen", "Rep", "vs", "etc", "No", "Messrs", "U.S", "e.g"};

// Last whitespace-delimited word before position `end` (exclusive).
std::string_view word_before(std::string_view text, size_t end) {
  size_t b = end;
  while (b > 0 && !is_space(text[b - 1])) --b;
  std::string_view w = text.substr(b, end - b);
  while (!w.empty() && (w.front() == '"' || w.front() == '(' || w.front() == '\'')) w.remove_prefix(1);
  return w;
}

bool is_abbreviation(std::string_view word) {
  if (word.size() == 1 && is_upper(word[0])) return true;  // initials: "John F. Kennedy"
  for (auto a : kAbbreviations)
    if (word == a) return true;
  // "U.S." style: letters separated by periods.
  if (word.size() >= 3 && word.size() % 2 == 1) {
    bool dotted = true;
    for (size_t i = 0; i < word.size(); ++i)
      if ((i % 2 == 0) ? !std::isalpha(static_cast<unsigned char>(word[i])) : word[i] != '.') dotted = false;
    if (dotted) return true;
  }
  return false;
}

void flush(std::string& current, std::vector<std::string>& out) {
  while (!current.empty() && current.back() == ' ') current.pop_back();
  if (!current.empty()) out.push_back(std::move(current));
  current.clear();
}

}  // namespace

std::vector<std::string> split_sentences(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  size_t newlines_in_gap = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (is_space(c)) {
      newlines_in_gap += c == '\n';
      if (newlines_in_gap >= 2) {  // blank line: paragraph end
        flush(current, out);
        continue;
      }
      if (!current.empty() && current.back() != ' ') current.push_back(' ');
      continue;
    }
    newlines_in_gap = 0;
    current.push_back(c);
    if (c != '.' && c != '!' && c != '?') continue;
    // Take trailing closers into this sentence.
    size_t j = i + 1;
    while (j < text.size() && is_closer(text[j])) current.push_back(text[j++]);
    size_t k = j;
    while (k < text.size() && is_space(text[k])) ++k;
    bool gap = k > j;
    bool next_starts = k >= text.size() || is_upper(text[k]) || is_digit(text[k]) || text[k] == '"' ||
                       text[k] == '\'';
    bool abbreviation = c == '.' && is_abbreviation(word_before(text, i));
    if ((gap && next_starts && !abbreviation) || k >= text.size()) {
      flush(current, out);
    }
    i = j - 1;
  }
  flush(current, out);
  return out;
}

size_t word_count(std::string_view sentence) {
  size_t n = 0;
  bool in_word = false;
  for (char c : sentence) {
    if (is_space(c)) {
      in_word = false;
    } else if (!in_word) {
      in_word = true;
      ++n;
    }
  }
  return n;
}

std::string normalize_sentence(std::string_view sentence) {
  std::string out;
  out.reserve(sentence.size());
  for (char c : sentence) {
    if (is_space(c)) {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool usable_prose_sentence(std::string_view s, size_t min_words, size_t max_words, std::string* reason) {
  auto reject = [&](const char* why) {
    if (reason) *reason = why;
    return false;
  };
  size_t words = word_count(s);
  if (words < min_words) return reject("too_short");
  if (words > max_words) return reject("too_long");
  if (s.find_first_of("[]{}_|<>*#") != std::string_view::npos) return reject("markup");
  char last = s.back();
  if (last == '"' || last == '\'') last = s.size() > 1 ? s[s.size() - 2] : last;
  if (last != '.' && last != '!' && last != '?') return reject("no_final_punctuation");
  size_t letters = 0, upper = 0;
  for (char c : s) {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      ++letters;
      upper += is_upper(c);
    }
  }
  if (letters * 2 < s.size()) return reject("few_letters");
  if (upper * 2 > letters) return reject("all_caps");
  return true;
}

}  // namespace verity::nearmiss
