#include "perturb/wordnet.hpp"

#include <wn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/error.hpp"

namespace verity::perturb {
namespace {

constexpr const char* kDebianWordNetDir = "/usr/share/wordnet";  // wordnet-base

// WordNet keeps global state (open files, static buffers): one mutex guards every call.
std::mutex& wn_mutex() {
  static std::mutex m;
  return m;
}

void ensure_open() {  // caller holds wn_mutex
  static bool opened = false;
  if (opened) return;
  VERITY_CHECK(wninit() == 0, Error, "wordnet: cannot open the database (install wordnet-base; WNHOME=",
               getenv("WNHOME") ? getenv("WNHOME") : "", ")");
  opened = true;
}

int wn_pos(WordClass cls) {
  switch (cls) {
    case WordClass::noun: return NOUN;
    case WordClass::verb: return VERB;
    case WordClass::adjective: return ADJ;
    case WordClass::adverb: return ADV;
  }
  return NOUN;
}

// "good(a)" -> "good"; multiword lemmas ("in_effect") are rejected by the caller.
std::string clean_lemma(const char* raw) {
  std::string s = raw;
  auto paren = s.find('(');
  if (paren != std::string::npos) s.resize(paren);
  return s;
}

std::string lookup_key(std::string_view word) {
  std::string key(word);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

// Runs fn(synset, lemma, tagged) for each sense of the word's base form (first
// `max_senses`); `tagged` says whether the sense order comes from SemCor counts.
template <typename Fn>
void for_each_sense(std::string_view word, WordClass cls, int max_senses, Fn fn) {
  std::string key = lookup_key(word);
  const char* base = morphstr(key.data(), wn_pos(cls));
  std::string lemma = base ? base : key;
  IndexPtr idx = index_lookup(lemma.data(), wn_pos(cls));
  if (!idx) return;
  for (int s = 0; s < idx->off_cnt && s < max_senses; ++s) {
    SynsetPtr syn = read_synset(wn_pos(cls), idx->offset[s], lemma.data());
    if (!syn) continue;
    fn(syn, lemma, idx->tagged_cnt > 0);
    free_synset(syn);
  }
  free_index(idx);
}

// Offset of the lemma's first synset in that class, or -1 when unknown. WordNet orders
// senses by their SemCor counts only when some sense was tagged; an untagged lemma's
// "first" sense is arbitrary, and such lemmas are rare words ("corporal", "neuronic"),
// so they count as unknown too.
long tagged_first_sense(const std::string& lemma, WordClass cls) {  // caller holds wn_mutex
  std::string key = lemma;
  IndexPtr idx = index_lookup(key.data(), wn_pos(cls));
  if (!idx) return -1;
  long off = idx->off_cnt > 0 && idx->tagged_cnt > 0 ? idx->offset[0] : -1;
  free_index(idx);
  return off;
}

}  // namespace

std::string wn_base_form(std::string_view word, WordClass cls) {
  std::lock_guard lock(wn_mutex());
  ensure_open();
  std::string key = lookup_key(word);
  const char* base = morphstr(key.data(), wn_pos(cls));
  return base ? std::string(base) : key;
}

bool wn_known(std::string_view word, WordClass cls) {
  std::lock_guard lock(wn_mutex());
  ensure_open();
  std::string key = lookup_key(word);
  const char* base = morphstr(key.data(), wn_pos(cls));
  std::string lemma = base ? base : key;
  IndexPtr idx = index_lookup(lemma.data(), wn_pos(cls));
  if (!idx) return false;
  free_index(idx);
  return true;
}

std::vector<std::string> wn_antonyms(std::string_view word, WordClass cls) {
  std::lock_guard lock(wn_mutex());
  ensure_open();
  std::vector<std::string> out;
  for_each_sense(word, cls, 1000, [&](SynsetPtr syn, const std::string&, bool) {
    for (int i = 0; i < syn->ptrcount; ++i) {
      // Lexical antonym pointers hold from/to word numbers (1-based); whichword is ours.
      if (syn->ptrtyp[i] != ANTPTR || syn->pfrm[i] != syn->whichword) continue;
      SynsetPtr ant = read_synset(syn->ppos[i], syn->ptroff[i], const_cast<char*>(""));
      if (!ant) continue;
      int to = syn->pto[i];
      if (to >= 1 && to <= ant->wcount) {
        std::string lemma = clean_lemma(ant->words[to - 1]);
        if (lemma.find('_') == std::string::npos && lemma.find('-') == std::string::npos &&
            std::find(out.begin(), out.end(), lemma) == out.end())
          out.push_back(lemma);
      }
      free_synset(ant);
    }
  });
  return out;
}

std::vector<std::string> wn_synonyms(std::string_view word, WordClass cls) {
  std::lock_guard lock(wn_mutex());
  ensure_open();
  std::vector<std::string> out;
  for_each_sense(word, cls, 1, [&](SynsetPtr syn, const std::string& lemma, bool tagged) {
    if (!tagged) return;
    for (int w = 0; w < syn->wcount; ++w) {
      std::string s = clean_lemma(syn->words[w]);
      if (s == lemma || s.find('_') != std::string::npos || s.find('-') != std::string::npos)
        continue;
      bool lower = true;  // proper-noun members ("Bush") are not synonyms of a common word
      for (char c : s)
        if (std::isupper(static_cast<unsigned char>(c))) lower = false;
      // A member whose own first sense is another synset reads as that other sense in
      // context ("young" -> "immature", "fatty acids" -> "fat acids"): keep only members
      // for which this synset is also their most frequent (tagged) sense.
      if (lower && tagged_first_sense(s, cls) == syn->hereiam &&
          std::find(out.begin(), out.end(), s) == out.end())
        out.push_back(s);
    }
  });
  return out;
}

std::vector<std::pair<std::string, std::string>> wn_antonym_pairs() {
  // data.POS lines: offset lex_filenum ss_type w_cnt(hex) {word lex_id} p_cnt(dec)
  // {symbol offset pos source/target(hex hex)} ...; "!" is the antonym pointer.
  struct Pointer {
    char file;
    long offset;
    unsigned from, to;
    char target_file;
    long target;
  };
  auto file_of = [](char pos) { return pos == 's' ? 'a' : pos; };
  const std::string dir = getenv("WNSEARCHDIR") ? getenv("WNSEARCHDIR") : kDebianWordNetDir;
  std::map<std::pair<char, long>, std::vector<std::string>> words;
  std::vector<Pointer> pointers;
  for (auto [file, name] : {std::pair{'n', "noun"}, {'v', "verb"}, {'a', "adj"}, {'r', "adv"}}) {
    const std::string path = dir + "/data." + name;
    std::ifstream in(path);
    VERITY_CHECK(in.good(), Error, "wordnet: cannot read ", path, " (install wordnet-base)");
    std::string line;
    size_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty() || line[0] == ' ') continue;  // the license header
      std::istringstream f(line);
      long offset = 0;
      std::string lex_file, ss_type, count_hex;
      f >> offset >> lex_file >> ss_type >> count_hex;
      VERITY_CHECK(f && !count_hex.empty(), FormatError, path, ":", line_no, ": malformed synset line");
      const unsigned count = unsigned(std::stoul(count_hex, nullptr, 16));
      auto& list = words[{file, offset}];
      for (unsigned w = 0; w < count; ++w) {
        std::string word, lex_id;
        f >> word >> lex_id;
        list.push_back(lookup_key(clean_lemma(word.c_str())));
      }
      unsigned pointer_count = 0;
      f >> pointer_count;
      for (unsigned p = 0; p < pointer_count && f; ++p) {
        std::string symbol, pos, source_target;
        long target = 0;
        f >> symbol >> target >> pos >> source_target;
        if (symbol != "!" || source_target.size() != 4 || pos.empty()) continue;
        pointers.push_back({file, offset, unsigned(std::stoul(source_target.substr(0, 2), nullptr, 16)),
                            unsigned(std::stoul(source_target.substr(2, 2), nullptr, 16)), file_of(pos[0]), target});
      }
      VERITY_CHECK(bool(f), FormatError, path, ":", line_no, ": malformed synset line");
    }
  }
  auto single = [](const std::string& w) {
    return !w.empty() && w.find('_') == std::string::npos && w.find('-') == std::string::npos;
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : pointers) {
    auto a = words.find({p.file, p.offset});
    auto b = words.find({p.target_file, p.target});
    if (a == words.end() || b == words.end() || p.from < 1 || p.from > a->second.size() || p.to < 1 ||
        p.to > b->second.size())
      continue;
    std::string x = a->second[p.from - 1], y = b->second[p.to - 1];
    if (!single(x) || !single(y) || x == y) continue;
    if (y < x) std::swap(x, y);
    out.emplace_back(std::move(x), std::move(y));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> wn_irregular_forms(std::string_view verb_base) {
  // verb.exc lines are "inflected base [base...]"; read once, index by base.
  static const std::multimap<std::string, std::string> by_base = [] {
    std::multimap<std::string, std::string> m;
    std::string path = std::string(getenv("WNSEARCHDIR") ? getenv("WNSEARCHDIR") : kDebianWordNetDir) + "/verb.exc";
    std::ifstream in(path);
    VERITY_CHECK(in.good(), Error, "wordnet: cannot read ", path);
    std::string inflected, base;
    std::string line;
    while (std::getline(in, line)) {
      auto sp = line.find(' ');
      if (sp == std::string::npos) continue;
      inflected = line.substr(0, sp);
      size_t pos = sp + 1;
      while (pos < line.size()) {
        auto next = line.find(' ', pos);
        base = line.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
        if (!base.empty()) m.emplace(base, inflected);
        if (next == std::string::npos) break;
        pos = next + 1;
      }
    }
    return m;
  }();
  std::vector<std::string> out;
  auto [lo, hi] = by_base.equal_range(lookup_key(verb_base));
  for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  return out;
}

}  // namespace verity::perturb
