#pragma once
// Two words that name different things of one kind, read from WordNet 3.0's
// noun and verb files: "coffee" / "tea", "aspirin" / "ibuprofen", "cat" /
// "dog". A text that swaps one for the other asks about another thing, where
// a similarity map shows two close words. Uses only core; reads the database
// files of Debian's wordnet-base (or $WNSEARCHDIR) directly.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace verity::text {

class WordKinds {
 public:
  // Reads index.noun, index.verb, their .exc lists and the hypernym pointers
  // of data.noun and data.verb under `dict_dir`. Throws Error naming the
  // file when one cannot be opened, FormatError naming file and line when one
  // is malformed.
  static WordKinds load(const std::string& dict_dir);
  // The English database, loaded once per process on first use: the
  // directory of $WNSEARCHDIR, else /usr/share/wordnet. nullptr when it
  // cannot be read; the reason then goes once to stderr and no pair is of
  // one kind.
  static const WordKinds* english();

  // True when the lower-case words `a` and `b` (inflected forms allowed:
  // "cats", "brewed") name different things of one kind: the first sense of
  // one (noun or verb, WordNet's most frequent) and the first sense of the
  // other lie at most two hypernym steps below one synset; no sense of the
  // two is shared (a synonym: "fix" / "repair"); no sense of one lies within
  // three steps above a sense of the other ("dog" / "animal"); and they are
  // not forms of one word ("cat" / "cats").
  bool same_kind(std::string_view a, std::string_view b) const;

  size_t words() const { return senses_.size(); }

 private:
  // A synset: its part of speech ('n' or 'v') in the top byte, its byte
  // offset in data.<pos> below.
  using Synset = uint64_t;
  // The lemmas a word form may be a form of, as "n:lemma" or "v:lemma":
  // itself, its .exc bases and the bases WordNet's suffix rules give, per
  // part of speech, those the index holds.
  std::vector<std::string> bases(std::string_view word) const;
  // Every synset of the bases (all their senses), and the first sense of
  // each base.
  void synsets(const std::vector<std::string>& bases, std::vector<Synset>* all, std::vector<Synset>* first) const;
  // `from` and the synsets at most `depth` hypernym steps above it.
  void ancestors(Synset from, int depth, std::vector<Synset>* out) const;

  std::unordered_map<std::string, std::vector<Synset>> senses_;         // "n:lemma" -> synsets in sense order
  std::unordered_map<std::string, std::vector<std::string>> exceptions_;  // "n:mice" -> {"mouse"}
  std::unordered_map<Synset, std::vector<Synset>> hypernyms_;
};

}  // namespace verity::text
