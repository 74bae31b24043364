#pragma once
// Texts that differ only on the surface: in case, spacing, apostrophes and
// sentence punctuation ("What is machine learning ?" / "What is Machine
// Learning?", "What's" / "What’s", "Is being \"different\" bad?" / "Is being
// different bad?"), told from their token identities. An identity does not
// give its piece back, so every SentencePiece and WordPiece tokenizer
// registers how its pieces spell text (register_spellings) in one
// process-wide table, as it registers its case folds (text/case_folds.hpp);
// a pair with a piece of no registered vocabulary, or an unknown-text piece,
// is never a surface match. Also read from the spellings: two texts the same
// but for one capitalized word inside, a name swapped for another, and two
// texts the same but for two words that trade places, two texts the same
// but for numbers, and two texts that swap one thing for another of its kind.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace verity::text {

class CaseFolds;
class WordKinds;

// The surface of a text: Unicode NFKC with case folding; apostrophes (' ’ ‘ `
// ´ ʼ) dropped, so "isn't" reads "isnt"; sentence punctuation (. , ; : ! ? " “
// ” „ « » ( ) [ ] { } \ … • · ¿ ¡ and dashes) read as a space, except a '.',
// ',' or ':' between two digits ("3.5", "1,000", "10:30") and a dash before a
// digit ("-5"), which change a number; whitespace collapsed and trimmed.
// Letters, digits and every other symbol (+ # % & / = $ @ ~ emoji) are kept:
// "C" / "C++" and "5%" / "5" differ. Ill-formed UTF-8 is kept byte for byte.
std::string surface_text(std::string_view text);
// surface_text keeping case (NFKC without case folding): what a capital
// letter of a name is read from.
std::string cased_surface_text(std::string_view text);

// Two texts the same but for one word inside, a capitalized word swapped for
// another: "How do I install Python on Windows?" / "How do I install Java on
// Windows?". Words are those of cased_surface_text, compared ignoring case
// (so case, spacing and sentence punctuation elsewhere do not count); the two
// swapped words are both written as names, with a capital first letter or a
// small one and a capital after it ("iPhone", "eBay"), and are not the
// text's first word (a sentence's first capital says nothing). Swaps of a near
// spelling are none: two words at most two edits apart ignoring case, or one
// the start of the other ("Willi" / "Willy", "West" / "Western"), are mostly
// the same name spelled twice.
struct NameSwap {
  std::string from, to;  // the swapped words, as the texts spell them
};
std::optional<NameSwap> swapped_name(std::string_view a, std::string_view b);

// Two texts the same but for one word written in small letters, swapped for
// another thing of its kind (WordKinds::same_kind): "Is coffee bad for your
// heart?" / "Is tea bad for your heart?". Words as swapped_name reads them;
// the first word may be the swapped one. `kinds` nullptr: WordKinds::english(),
// loaded only when the texts differ in one such word.
struct KindSwap {
  std::string from, to;  // the swapped words
};
std::optional<KindSwap> swapped_kind(std::string_view a, std::string_view b, const WordKinds* kinds = nullptr);

// Two texts the same but for one word written in small letters that the
// other text holds with "un" or "dis" before it: "How do I mount the drive?"
// / "How do I unmount the drive?", "agree" / "disagree". The word without
// the prefix has at least three letters ("unit" / "it" is none). Words as
// swapped_name reads them. The prefix reverses or negates the word.
struct Reversal {
  std::string word, reversed;
};
std::optional<Reversal> reversed_word(std::string_view a, std::string_view b);

// Two texts the same but for two words that trade places: "flights from
// Boston to Denver" / "flights from Denver to Boston", "Are foxes afraid of
// badgers?" / "Are badgers afraid of foxes?". Words are those of surface_text
// (case, spacing and sentence punctuation do not count). Not a transposition:
// two neighbours trading places (a modifier's or a name's order: "learn chess
// fast online" / "learn chess online fast", "Armen Dzhigarkhanyan"), two stop
// words (text::english_stopwords), nor a coordination read the other way
// round, where the last word before the second one, articles, possessives
// and a preposition that also leads the first aside, is a coordinator
// ("between a virus and a bacterium", "Python or Java", "X, Y and Z", "by
// value or by reference").
struct Transposition {
  std::string first, second;  // the two words, in the order the first text holds them
};
std::optional<Transposition> transposed_words(std::string_view a, std::string_view b);

// The English cardinal number words, lower-case: "zero", "two" ... "twenty",
// "thirty" ... "ninety", "hundred", "thousand", "million", "billion",
// "trillion", "dozen", "twice", "thrice", "half" ("one" is left out: it is
// mostly a pronoun or a determiner). F5's lexicon holds the same list.
const std::vector<std::string>& english_number_words();

// Two texts the same but for numbers: "Is port 6379 open?" / "Is port 6380
// open?", "The meeting lasted thirteen minutes." / "... thirty minutes.".
// Words are those of surface_text (case, spacing and sentence punctuation do
// not count). Each text is read as words and quantities; a quantity is a
// number read by its value with its sign and unit:
// - the number: digits (with '.', ',', ':' or '-' between them: "3.5",
//   "1,000", "-5"), a number word (english_number_words, and "one"), or a
//   number of several words ("twenty five", "two hundred and ten", "a
//   dozen", "3 million", "$1.5 million");
// - a currency sign before digits, or a currency name after the number ("$10",
//   "10 dollars", "1000rs");
// - a unit glued on or written after it, read through one table of unit
//   names ("16gb", "10 kg", "10 kilograms" and "10kg" are one unit), an
//   ordinal ending or word ("2nd", "second", "twenty first"; every ordinal is
//   one unit), or any other letters glued on ("10am").
// Every quantity that differs is a quantity in both texts, and a word that
// differs right after two quantities is the same noun in the singular and
// the plural ("1 hour" / "24 hours"). Each differing quantity changes in
// value, or in a sign or unit both sides have ("16gb" / "8gb", "16gb" /
// "16tb", "10 kg" / "10 lb", "10am" / "10pm"); a sign or unit on one side
// alone is none ("20k" / "20000"). "ten" / "10", "twenty five" / "25" and
// "1,000" / "1000" are one number written two ways. The same quantities in
// another order are none.
struct NumberChange {
  std::string from, to;  // the first changed quantity, as the two texts spell it ("thirteen minutes")
};
std::optional<NumberChange> changed_numbers(std::string_view a, std::string_view b);

// Two texts the same but for numbers written another way with the same value,
// as changed_numbers reads them ("ten" / "10", "2 years" / "two yrs",
// "1,000" / "1000", "twenty five dollars" / "$25"): a surface variant.
bool respelled_numbers(std::string_view a, std::string_view b);

// How the pieces of registered vocabularies spell text.
class SurfaceSpellings {
 public:
  // Adds a SentencePiece vocabulary: "\u2581" starts a word; ids below
  // `reserved` are special (id 0 stands for unknown text and ends any match,
  // the others spell nothing).
  // Each returns whether it added anything.
  bool add_sentencepiece(std::span<const std::string> pieces, size_t reserved);
  // Adds a WordPiece vocabulary: a piece starting with `continuing_prefix`
  // continues the word before it, any other starts a word; `unknown` (its
  // unknown token) ends any match and `specials` (its [CLS], [SEP], ...)
  // spell nothing. A piece's spelling already held another way (two
  // vocabularies that spell one piece differently) ends any match too.
  bool add_wordpiece(std::span<const std::string> pieces, std::string_view continuing_prefix,
                     std::string_view unknown, std::span<const std::string> specials);

  // surface_text of what the pieces spell; nullopt when one is of no
  // registered vocabulary, or unknown text, or ambiguous.
  std::optional<std::string> surface(std::span<const uint32_t> ids) const;
  // Whether both spell the same surface (false for an empty side). Texts
  // far apart in length are told apart without spelling them: one holding
  // more than 4 × the other's pieces + 16 (a query and a passage).
  bool same_surface(std::span<const uint32_t> a, std::span<const uint32_t> b) const;
  // What one piece spells ("\u2581under" spells " under", a word mark as a
  // space); nullptr for a piece of no registered vocabulary, a special one,
  // or one spelled two ways.
  const std::string* spelling_of(uint32_t identity) const;
  // Whether `next` continues the word that `before` ends: `next` carries no
  // word mark and the two meet letter to letter or digit to digit, any byte
  // of a multi-byte character counting as a letter ("\u2581under" "min" of
  // "undermining", "k" "not" of "knot"; not "\u2581(" "under", nor "'"
  // "t"). False when either piece spells nothing known.
  bool joins(uint32_t before, uint32_t next) const;
  // swapped_name of what the two spell; nullopt too when a piece spells
  // nothing known. Before any spelling, a pair whose identities differ in
  // more than one short run of pieces (12) is set aside; `folds` (the case
  // folds) let a word in another case elsewhere count as the same there.
  std::optional<NameSwap> swapped_name(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                       const CaseFolds* folds = nullptr) const;
  // transposed_words of what the two spell; nullopt too when a piece spells
  // nothing known. Set aside before any spelling: sides more than 12 pieces
  // apart in length, or whose identities differ in a run of more than 64.
  std::optional<Transposition> transposed(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                          const CaseFolds* folds = nullptr) const;
  // changed_numbers of what the two spell; set aside before any spelling as
  // for swapped_name.
  std::optional<NumberChange> changed_numbers(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                              const CaseFolds* folds = nullptr) const;
  // The three readings above and respelled_numbers of one pair, its pieces
  // spelled once: each as the method of its name gives it.
  struct PairReadings {
    bool name_swap = false, transposition = false, number_change = false;
    bool kind_swap = false;          // swapped_kind, within the name swap's run limit
    bool reversal = false;           // reversed_word, within the name swap's run limit
    bool number_respelling = false;  // respelled_numbers, within the name swap's run limit
  };
  PairReadings readings(std::span<const uint32_t> a, std::span<const uint32_t> b,
                        const CaseFolds* folds = nullptr) const;
  size_t size() const { return spellings_.size(); }

 private:
  enum class Kind : uint8_t { spelled, silent, opaque };
  struct Spelling {
    std::string text;
    Kind kind = Kind::spelled;
    bool operator==(const Spelling&) const = default;
  };
  // false when nothing was added (every piece held alike already).
  bool add(uint32_t identity, Spelling spelling);
  // What the pieces spell before surface_text; nullopt as for surface.
  std::optional<std::string> spelled(std::span<const uint32_t> ids) const;
  class Cursor;
  // A cheap test before spelling both in full: true when the surfaces
  // certainly differ (their ASCII letters and digits do, or a piece spells
  // nothing known), false when only the full comparison can tell.
  bool ascii_letters_differ(std::span<const uint32_t> a, std::span<const uint32_t> b) const;
  // Both spelled, when their lengths and differing run pass the limits, with
  // the longer side's differing run in pieces.
  struct ClosePair {
    std::string a, b;
    size_t run = 0;
  };
  std::optional<ClosePair> spelled_if_close(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                            const CaseFolds* folds, size_t longest_run) const;
  std::unordered_map<uint32_t, Spelling> spellings_;
};

// Adds a vocabulary's spellings to the process-wide table (thread-safe; the
// tokenizers call it); a vocabulary seen before adds nothing.
void register_sentencepiece_spellings(std::span<const std::string> pieces, size_t reserved);
void register_wordpiece_spellings(std::span<const std::string> pieces, std::string_view continuing_prefix,
                                  std::string_view unknown, std::span<const std::string> specials);
// The process-wide table as it is now: an immutable snapshot (empty before
// any vocabulary was registered), cheap to take once per batch of pairs.
std::shared_ptr<const SurfaceSpellings> registered_surface_spellings();

}  // namespace verity::text
