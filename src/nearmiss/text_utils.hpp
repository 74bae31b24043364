#pragma once
// Small text helpers of the near-miss builder: a sentence splitter for plain
// prose, word counts, and the normalization that decides "same sentence" for
// the split-disjointness rule (docs/NEARMISS.md).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace verity::nearmiss {

// Splits prose into sentences. Rule: a sentence ends at '.', '!' or '?'
// (plus any closing quotes/brackets) followed by whitespace and then an
// uppercase letter, a digit or an opening quote; or at a blank line. A period
// does not end a sentence after a known abbreviation (Mr, Mrs, Dr, St, U.S,
// ...) or a single capital letter (initials). Newlines inside a paragraph
// become spaces; runs of whitespace collapse to one space.
std::vector<std::string> split_sentences(std::string_view text);

// Whitespace-separated tokens.
size_t word_count(std::string_view sentence);

// Lowercase ASCII, whitespace runs collapsed to one space, trimmed, so that
// "The cat  sat." and "the cat sat." count as one sentence.
std::string normalize_sentence(std::string_view sentence);

// True for a prose sentence the generators can use: 5-40 words (inclusive),
// no brackets/underscores/digit-only noise, not all caps (headings), ends with
// '.', '!' or '?'. The reason for a rejection is written to *reason if given.
bool usable_prose_sentence(std::string_view sentence, size_t min_words, size_t max_words,
                           std::string* reason = nullptr);

}  // namespace verity::nearmiss
