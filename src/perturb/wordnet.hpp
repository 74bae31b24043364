#pragma once
// Serialized access to the WordNet 3.0 C library (wordnet-dev, data from wordnet-base).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace verity::perturb {

enum class WordClass { noun, verb, adjective, adverb };

// Base form ("bitten" -> "bite"); the word itself when WordNet knows no other.
std::string wn_base_form(std::string_view word, WordClass cls);
// Direct antonyms of `word` over all its senses, single words only, in sense order.
std::vector<std::string> wn_antonyms(std::string_view word, WordClass cls);
// Single-word synonyms from the word's first (most frequent) sense only, and only
// members whose own first sense is that same synset. Both orders must come from
// SemCor counts: a word with no tagged sense has no synonyms here.
std::vector<std::string> wn_synonyms(std::string_view word, WordClass cls);
// Irregular inflections of a verb base from verb.exc ("bite" -> {"bit", "bitten"}).
std::vector<std::string> wn_irregular_forms(std::string_view verb_base);
// Every direct (lexical) antonym pair of single-word lemmas over all word
// classes, each unordered pair once, lower-case, sorted. Read straight from
// the data.* files (one pass, no per-word lookups).
std::vector<std::pair<std::string, std::string>> wn_antonym_pairs();
// True when WordNet has the word (in any form) in that class.
bool wn_known(std::string_view word, WordClass cls);

}  // namespace verity::perturb
