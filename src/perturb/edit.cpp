#include "perturb/edit.hpp"

#include <cctype>

namespace verity::perturb::detail {

namespace {
bool is_word_char(unsigned char c) { return std::isalnum(c) || c >= 0x80; }
}  // namespace

std::vector<WordSpan> split_words(std::string_view s) {
  std::vector<WordSpan> out;
  size_t i = 0;
  while (i < s.size()) {
    if (!is_word_char(s[i])) {
      ++i;
      continue;
    }
    size_t b = i;
    while (i < s.size()) {
      if (is_word_char(s[i])) {
        ++i;
      } else if ((s[i] == '\'' || s[i] == '.' || s[i] == ',' || s[i] == '-') && i + 1 < s.size() &&
                 is_word_char(s[i + 1]) &&
                 // "3.5", "1,000", "can't", "well-known" stay one word; "end.Next" too, rarely
                 (s[i] != ',' || (std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                                  std::isdigit(static_cast<unsigned char>(s[i + 1]))))) {
        i += 2;
      } else {
        break;
      }
    }
    out.push_back({b, i, to_lower(s.substr(b, i - b))});
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string capitalize_first(std::string_view s) {
  std::string out(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string match_case(std::string_view model, std::string_view word) {
  bool all_upper = model.size() > 1, first_upper = false;
  for (size_t i = 0; i < model.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(model[i]);
    if (std::isalpha(c) && !std::isupper(c)) all_upper = false;
    if (i == 0) first_upper = std::isupper(c);
  }
  std::string out(word);
  if (all_upper) {
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  } else if (first_upper) {
    out = capitalize_first(out);
  }
  return out;
}

Perturbation replace_span(std::string_view sentence, size_t begin, size_t end,
                          std::string_view replacement, std::string type) {
  Perturbation p;
  p.text = std::string(sentence.substr(0, begin)) + std::string(replacement) +
           std::string(sentence.substr(end));
  p.type = std::move(type);
  p.span_begin = begin;
  p.span_end = begin + replacement.size();
  p.original_span = std::string(sentence.substr(begin, end - begin));
  p.new_span = std::string(replacement);
  return p;
}

Perturbation diff_span(std::string_view before, std::string after, std::string type) {
  size_t prefix = 0;
  while (prefix < before.size() && prefix < after.size() && before[prefix] == after[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < before.size() - prefix && suffix < after.size() - prefix &&
         before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix])
    ++suffix;
  // Widen to whole words so spans read naturally ("bit" not "i").
  auto widen = [](std::string_view s, size_t& b, size_t& e) {
    while (b > 0 && is_word_char(s[b - 1])) --b;
    while (e < s.size() && is_word_char(s[e])) ++e;
  };
  size_t ob = prefix, oe = before.size() - suffix, nb = prefix, ne = after.size() - suffix;
  widen(before, ob, oe);
  widen(after, nb, ne);
  // Keep both spans aligned on the same prefix/suffix lengths.
  size_t b = std::min(ob, nb);
  size_t tail = std::min(before.size() - oe, after.size() - ne);
  Perturbation p;
  p.text = std::move(after);
  p.type = std::move(type);
  p.span_begin = b;
  p.span_end = p.text.size() - tail;
  p.original_span = std::string(before.substr(b, before.size() - tail - b));
  p.new_span = p.text.substr(b, p.span_end - b);
  return p;
}

}  // namespace verity::perturb::detail

namespace verity::perturb::detail {
std::string with_article(std::string_view s, size_t art_begin, size_t art_end, size_t word_begin,
                         const std::string& word, size_t& begin) {
  std::string art = to_lower(s.substr(art_begin, art_end - art_begin));
  if ((art != "a" && art != "an") || word.empty()) return word;
  bool vowel = std::string_view("aeiou").find(static_cast<char>(std::tolower(
                   static_cast<unsigned char>(word[0])))) != std::string_view::npos;
  begin = art_begin;
  return match_case(s.substr(art_begin, art_end - art_begin), vowel ? "an" : "a") +
         std::string(s.substr(art_end, word_begin - art_end)) + word;
}
}  // namespace verity::perturb::detail
