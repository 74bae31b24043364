#pragma once
// Private helpers shared by the generators: word spans, case, single-span edits.
#include <string>
#include <string_view>
#include <vector>

#include "perturb/perturber.hpp"

namespace verity::perturb::detail {

struct WordSpan {
  size_t begin, end;  // byte offsets; a word is letters/digits with inner ' . , -
  std::string lower;
};
std::vector<WordSpan> split_words(std::string_view s);

std::string to_lower(std::string_view s);
// Copies the capitalization pattern of `model` (Title, UPPER, lower) onto `word`.
std::string match_case(std::string_view model, std::string_view word);
std::string capitalize_first(std::string_view s);

// Replaces [begin, end) of `sentence` by `replacement`, recording the span in the output.
Perturbation replace_span(std::string_view sentence, size_t begin, size_t end,
                          std::string_view replacement, std::string type);
// The smallest single span covering where `before` and `after` differ.
Perturbation diff_span(std::string_view before, std::string after, std::string type);

}  // namespace verity::perturb::detail

namespace verity::perturb::detail {
// When the word at [word_begin, ...) follows "a"/"an" at [art_begin, art_end),
// returns the replacement text from art_begin with the article agreeing with
// `word` and moves `begin` to art_begin; otherwise returns `word` unchanged.
std::string with_article(std::string_view s, size_t art_begin, size_t art_end, size_t word_begin,
                         const std::string& word, size_t& begin);
}  // namespace verity::perturb::detail
