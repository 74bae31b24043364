#include "text/word_kinds.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <span>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"

namespace verity::text {
namespace {

constexpr const char* kPartsOfSpeech[] = {"noun", "verb"};
constexpr char kPosLetter[] = {'n', 'v'};

std::ifstream open_file(const std::string& path) {
  std::ifstream in(path);
  VERITY_CHECK(in, Error, "wordnet: cannot open ", path, " (install wordnet-base, or set WNSEARCHDIR)");
  return in;
}

uint64_t synset_of(char pos, const std::string& offset, const std::string& path, size_t line) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(offset.c_str(), &end, 10);
  VERITY_CHECK(!offset.empty() && end && *end == '\0', FormatError, path, ":", line, ": synset offset '", offset,
               "' is not a number");
  return (uint64_t(uint8_t(pos)) << 56) | uint64_t(value);
}

// WordNet's detachment rules (morph.c): suffix -> ending, per part of speech.
struct Rule {
  std::string_view suffix, ending;
};
constexpr Rule kNounRules[] = {{"s", ""},    {"ses", "s"},  {"xes", "x"}, {"zes", "z"},
                               {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}};
constexpr Rule kVerbRules[] = {{"s", ""},  {"ies", "y"}, {"es", "e"}, {"es", ""},
                               {"ed", "e"}, {"ed", ""},   {"ing", "e"}, {"ing", ""}};

// Function words WordNet also files as nouns or verbs ("do", "can", "will"):
// never a thing of a kind.
bool function_word(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "a",    "an",   "the",  "of",    "to",    "in",    "on",    "at",    "for",   "is",   "are",  "was",
      "were", "be",   "do",   "does",  "did",   "i",     "you",   "he",    "she",   "it",   "we",   "they",
      "my",   "your", "his",  "her",   "its",   "our",   "their", "this",  "that",  "these", "those", "and",
      "or",   "but",  "what", "how",   "why",   "when",  "where", "which", "who",   "whom", "can",  "could",
      "should", "would", "will", "with", "by",  "from",  "as",    "have",  "has",   "had",  "may",  "might",
      "must", "shall", "not", "no",    "am",    "been",  "being", "me",    "him",   "us",   "them", "if"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

bool lower_letters(std::string_view w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}
}  // namespace

WordKinds WordKinds::load(const std::string& dict_dir) {
  WordKinds kinds;
  for (int p = 0; p < 2; ++p) {
    const char pos = kPosLetter[p];
    const std::string index_path = dict_dir + "/index." + kPartsOfSpeech[p];
    auto index = open_file(index_path);
    std::string line;
    size_t n = 0;
    while (std::getline(index, line)) {
      ++n;
      if (line.empty() || line[0] == ' ') continue;  // the licence header
      // lemma pos synset_cnt p_cnt {ptr_symbol} sense_cnt tagsense_cnt {synset_offset}
      std::istringstream fields(line);
      std::string lemma, pos_field;
      int synsets = 0, pointers = -1, sense_count = 0, tagged = 0;
      fields >> lemma >> pos_field >> synsets >> pointers;
      VERITY_CHECK(bool(fields) && synsets > 0 && pointers >= 0, FormatError, index_path, ":", n,
                   ": not an index line");
      std::string skip;
      for (int k = 0; k < pointers; ++k) fields >> skip;
      fields >> sense_count >> tagged;
      auto& senses = kinds.senses_[std::string(1, pos) + ":" + lemma];
      for (int k = 0; k < synsets; ++k) {
        std::string offset;
        VERITY_CHECK(bool(fields >> offset) && offset.size() == 8, FormatError, index_path, ":", n, ": ", synsets,
                     " synsets announced, ", k, " given");
        senses.push_back(synset_of(pos, offset, index_path, n));
      }
    }
    const std::string exc_path = dict_dir + "/" + kPartsOfSpeech[p] + ".exc";
    auto exc = open_file(exc_path);
    while (std::getline(exc, line)) {
      std::istringstream fields(line);
      std::string form;
      if (!(fields >> form)) continue;
      for (std::string base; fields >> base;) kinds.exceptions_[std::string(1, pos) + ":" + form].push_back(base);
    }
    const std::string data_path = dict_dir + "/data." + kPartsOfSpeech[p];
    auto data = open_file(data_path);
    n = 0;
    while (std::getline(data, line)) {
      ++n;
      if (line.empty() || line[0] == ' ') continue;
      // offset lex_filenum ss_type w_cnt(hex) {word lex_id} p_cnt {symbol offset pos source/target} ...
      std::istringstream fields(line);
      std::string offset, filenum, type, words_hex;
      fields >> offset >> filenum >> type >> words_hex;
      const Synset self = synset_of(pos, offset, data_path, n);
      const long words = std::strtol(words_hex.c_str(), nullptr, 16);
      std::string skip;
      for (long w = 0; w < 2 * words; ++w) fields >> skip;
      int pointers = -1;
      fields >> pointers;
      VERITY_CHECK(pointers >= 0, FormatError, data_path, ":", n, ": no pointer count");
      for (int k = 0; k < pointers; ++k) {
        std::string symbol, target, target_pos, source;
        VERITY_CHECK(bool(fields >> symbol >> target >> target_pos >> source), FormatError, data_path, ":", n,
                     ": pointer ", k + 1, " of ", pointers, " is cut short");
        if ((symbol == "@" || symbol == "@i") && !target_pos.empty())
          kinds.hypernyms_[self].push_back(synset_of(target_pos[0], target, data_path, n));
      }
    }
  }
  return kinds;
}

const WordKinds* WordKinds::english() {
  static std::once_flag once;
  static std::unique_ptr<WordKinds> kinds;
  std::call_once(once, [] {
    const char* env = std::getenv("WNSEARCHDIR");
    const std::string dir = env && *env ? env : "/usr/share/wordnet";  // wordnet-base
    try {
      kinds = std::make_unique<WordKinds>(load(dir));
    } catch (const Error& e) {
      log("word kinds off: ", e.what());
    }
  });
  return kinds.get();
}

std::vector<std::string> WordKinds::bases(std::string_view word) const {
  std::vector<std::string> out;
  for (int p = 0; p < 2; ++p) {
    const std::string prefix = std::string(1, kPosLetter[p]) + ":";
    const auto add = [&](std::string_view lemma) {
      std::string key = prefix + std::string(lemma);
      if (senses_.count(key) && std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
    };
    add(word);
    if (const auto e = exceptions_.find(prefix + std::string(word)); e != exceptions_.end())
      for (const auto& b : e->second) add(b);
    const auto rules = p == 0 ? std::span<const Rule>(kNounRules) : std::span<const Rule>(kVerbRules);
    for (const auto& r : rules)
      if (word.size() > r.suffix.size() && word.ends_with(r.suffix))
        add(std::string(word.substr(0, word.size() - r.suffix.size())) + std::string(r.ending));
  }
  return out;
}

void WordKinds::synsets(const std::vector<std::string>& bases, std::vector<Synset>* all,
                        std::vector<Synset>* first) const {
  for (const auto& base : bases) {
    const auto& senses = senses_.at(base);
    all->insert(all->end(), senses.begin(), senses.end());
    first->push_back(senses.front());  // WordNet's most frequent sense of the base in its part of speech
  }
}

void WordKinds::ancestors(Synset from, int depth, std::vector<Synset>* out) const {
  std::vector<Synset> frontier{from};
  out->push_back(from);
  for (int d = 0; d < depth && !frontier.empty(); ++d) {
    std::vector<Synset> next;
    for (const Synset s : frontier)
      if (const auto h = hypernyms_.find(s); h != hypernyms_.end())
        for (const Synset up : h->second)
          if (std::find(out->begin(), out->end(), up) == out->end()) out->push_back(up), next.push_back(up);
    frontier = std::move(next);
  }
}

bool WordKinds::same_kind(std::string_view a, std::string_view b) const {
  if (a == b || !lower_letters(a) || !lower_letters(b) || function_word(a) || function_word(b)) return false;
  const auto bases_a = bases(a), bases_b = bases(b);
  for (const auto& x : bases_a)  // forms of one word ("cat" / "cats"), whatever the part of speech
    for (const auto& y : bases_b)
      if (x.substr(2) == y.substr(2)) return false;
  std::vector<Synset> all_a, first_a, all_b, first_b;
  synsets(bases_a, &all_a, &first_a);
  synsets(bases_b, &all_b, &first_b);
  if (all_a.empty() || all_b.empty()) return false;
  for (const Synset s : all_a)
    if (std::find(all_b.begin(), all_b.end(), s) != all_b.end()) return false;  // synonyms
  const auto above = [&](const std::vector<Synset>& senses, int depth) {
    std::vector<Synset> out;
    for (const Synset s : senses) ancestors(s, depth, &out);
    return out;
  };
  const auto contains_any = [](const std::vector<Synset>& set, const std::vector<Synset>& items) {
    return std::any_of(items.begin(), items.end(),
                       [&](Synset s) { return std::find(set.begin(), set.end(), s) != set.end(); });
  };
  if (contains_any(above(all_a, 3), all_b) || contains_any(above(all_b, 3), all_a)) return false;  // one names the other's kind
  return contains_any(above(first_a, 2), above(first_b, 2));
}

}  // namespace verity::text
