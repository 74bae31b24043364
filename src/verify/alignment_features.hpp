#pragma once
// The inputs of F5, the alignment reader (verify/alignment_verifier.hpp):
// what each token of one text finds in the other, read off the similarity map
// and the token identities, plus pair-level scalars. Plain C++ (no torch), so
// the same code feeds training and inference.
//
// For a direction X -> Y (rows of M for a -> b, columns for b -> a), token i
// of X (length n) against Y (length m):
//   0 best       max_j M_ij
//   1 soft       sum_j softmax_j(M_ij / 0.1) M_ij
//   2 exact      1 if the same token occurs in Y
//   3 idf        idf(i) / idf_max
//   4 pos        i / (n - 1)                    (0.5 when n = 1)
//   5 aligned    j* / (m - 1), j* = argmax_j (M_ij + 0.5 [same token at j])
//   6 shift      aligned - pos
//   7 step       clamp(j*_i - j*_{i-1}, -3, 3) / 3   (0 for i = 0)
//   8 kept_prev  1 if j*_i = j*_{i-1} + 1 (the bigram survives)
//   9 kept_next  1 if j*_{i+1} = j*_i + 1
//  10 close      best · (1 - exact): similar but not the same token
//  11 missing    1 - best
//  12 idf_there  idf(j*) / idf_max
//  13 number     1 if the token is a number (digit piece or lexicon number
//                word) with no exact match in Y
//  14 polarity   1 if some token of Y is a lexicon antonym of this token, or
//                the token is a lexicon negator with no exact match in Y
//                while X holds more negators than Y (a negating clitic piece
//                right after an apostrophe piece counts as a negator: the
//                "t" of "isn ' t")
// Pair scalars (symmetric in a and b):
//   0 pooled cosine (0 when unknown)   1 pooled cosine known
//   2,3 MaxSim mean / min over the two directions
//   4,5 idf-weighted MaxSim mean / min
//   6,7 share of tokens with an exact match, mean / min
//   8,9 idf-weighted exact share, mean / min
//  10 |log(n / m)|   11 log(1 + n + m) / 5
//  12 order agreement of exact matches (Kendall tau of i and j*), mean
//  13 share of kept bigrams, mean
//  14 F2 soft alignment with positional bias (lambda = tau = 0.1), mean
//  15,16 max over tokens of idf · (1 - best), max / mean over the directions
//  17 unmatched numbers (feature 13), min(count, 2) / 2, max over the directions
//  18 polarity flips (feature 14), min(count, 2) / 2, max over the directions
// Features 13, 14, 17 and 18 read token identities against a Lexicon: digit
// pieces are recognized by their identity; antonyms (WordNet's direct
// antonyms, and in newer files relation_antonyms() beside them), number words
// and negators come from the verifier's word lists,
// written into the verifier file, so a file without number words or negators
// keeps the features it was trained on.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <unordered_map>
#include <vector>

#include "text/case_folds.hpp"
#include "verify/similarity_map.hpp"
#include "verify/verifier.hpp"

namespace verity::text {
class SurfaceSpellings;
}

namespace verity::verify {

inline constexpr size_t kTokenFeatures = 15;
inline constexpr size_t kPairFeatures = 19;

// Inverse document frequencies of token identities, from the texts a verifier
// was trained on: idf(t) = ln((N + 1) / (df(t) + 1)) + 1; unseen tokens get
// the idf of a token seen once (rare tokens matter most).
class IdfTable {
 public:
  IdfTable() = default;
  IdfTable(size_t documents, std::unordered_map<uint32_t, uint32_t> document_frequency);
  float idf(uint32_t token) const;
  // idf(token) / max_idf(): F5's weight of a token, in (0, 1]. Per-token
  // lookups in a hot loop go through TokenTable instead.
  float normalized_idf(uint32_t token) const;
  float normalized_unseen_idf() const { return unseen_ / max_idf_; }
  float max_idf() const { return max_idf_; }
  size_t documents() const { return documents_; }
  const std::unordered_map<uint32_t, uint32_t>& document_frequency() const { return df_; }

 private:
  size_t documents_ = 0;
  std::unordered_map<uint32_t, uint32_t> df_;
  float unseen_ = 1.0f, max_idf_ = 1.0f;
};

// Counts each identity once per text.
IdfTable build_idf_table(std::span<const std::vector<uint32_t>> texts);

// Single words a similarity map blurs: number words ("four" against "ten")
// and negators ("not", "never", ...), plus negating clitics: the piece a
// tokenizer leaves after the apostrophe of a contracted negation ("isn't" ->
// "isn", "'", "t"), a negator only right after an apostrophe piece ("'" or
// "’"). Lower-case.
struct LexiconWords {
  std::vector<std::string> numbers, negators, negating_clitics;
  bool empty() const { return numbers.empty() && negators.empty() && negating_clitics.empty(); }
  // The lists a new verifier is trained with: cardinal number words and
  // multipliers ("one" is left out: it is mostly a pronoun or determiner),
  // the negating words whose pieces the English tokenizers keep whole, and
  // the "t" of n't.
  static LexiconWords english();
};

// Opposites that WordNet's direct antonyms lack although a swap of one for the
// other changes what a sentence says: spatial relations ("under" / "on",
// "behind" / "front"), time order ("before" / "after"), permission ("allow" /
// "forbid") and a few everyday pairs ("safe" / "unsafe", "men" / "women").
// Lower-case, for Lexicon's antonym list beside WordNet's.
std::vector<std::pair<std::string, std::string>> relation_antonyms();

// Spatial relations that are not opposites but still differ: "above" /
// "beside", "to the left of" / "in front of", "behind" / "between". Each word
// of one class (words naming one relation: "below", "beneath", "under")
// against each word of another, "near" against "beside" aside. Lower-case.
std::vector<std::pair<std::string, std::string>> spatial_relation_changes();

// Times that differ without being opposites: "monthly" / "yearly", "morning"
// / "afternoon", "summer" / "autumn", "weekdays" / "weekends". Each word of
// one time against each word of another time of the same kind. Lower-case.
std::vector<std::pair<std::string, std::string>> time_relation_changes();

// Words that move a text to another day or phase of an event, read only to
// find minimal flips ("What is the weather today?" / "... tomorrow?"), never
// as network inputs: news texts of one meaning swap "today" and "yesterday"
// beside other changes, where the network must still judge. Groups of
// classes of lower-case words; a word faces a word of another class of its
// group.
const std::vector<std::vector<std::vector<std::string>>>& day_shift_words();

// Opposites read the same way as day_shift_words(), for minimal flips alone:
// an outcome or a stance turned over ("lacks" / "has", "refused" / "agreed",
// "denied" / "confirmed", "failed" / "managed"), "everyone" / "someone",
// "except" / "including", "happier" / "sadder", "mandatory" / "optional",
// and what a user asks a program to do against its reverse: "create" /
// "delete", "merge" / "split", "expand" / "collapse", "allow" / "block", "in"
// / "out" ("log in" / "log out").
// Every form is listed, lower-case.
const std::vector<std::vector<std::vector<std::string>>>& flip_only_opposites();

// Adverbs that negate what they modify ("She could hardly see"): an extra one
// in one text counts as an extra negator for minimal flips alone, never as a
// network input (the network's negators are LexiconWords::negators).
const std::vector<std::string>& negating_adverbs();

// Opposite directions of a change or a choice that WordNet's direct antonyms
// lack or that its inflections miss: "increase" / "reduce", "rose" / "fell",
// "gained" / "lost", "enable" / "disable", "add" / "remove", "support" /
// "oppose". A swap turns a question into its opposite ("How do I enable dark
// mode?"), the answer a semantic cache must not reuse. Lower-case.
std::vector<std::pair<std::string, std::string>> direction_antonyms();

// Appends to `words` the pairs of `extra` it does not hold either way round;
// returns how many. A pair must be two different, non-empty words.
size_t merge_antonyms(std::vector<std::pair<std::string, std::string>>& words,
                      const std::vector<std::pair<std::string, std::string>>& extra);

// How one tokenizer writes the antonym forms it splits ("disable" as
// "\u2581dis" "able"): a form (lower-case or capitalized) and its two or more
// pieces, as the encoder's token strings name them.
using LexiconSpellings = std::vector<std::pair<std::string, std::vector<std::string>>>;
// The same as text, one "form<TAB>piece piece ...\n" line per form (a
// verifier file's LEXS section): how a lexicon keeps them, compactly.
struct LexiconSpellingLines {
  std::string text;
};

// Token identities that carry meaning a similarity map blurs: antonym pairs,
// digit pieces, number words and negators. Words are matched through the
// pieces a tokenizer makes of a whole word ("open", "\u2581open", "Open", ...);
// antonyms also through simple inflections (-s, -ed, -ing, -er, -est). A form
// or number word the tokenizer splits into several pieces is seen only through
// its spelling, which the lexicon holds when it was spelled with that
// tokenizer (train::spell_lexicon): the spelled run of pieces then counts as
// the word, on its first piece, and a spelled number word ("sixty" as
// "\u2581six ty") is that number, not the number its first piece is.
class Lexicon {
 public:
  Lexicon() = default;
  // Lower-case word pairs (a, b), each pair read both ways. Spellings of forms
  // that are not inflections of a listed word are kept but never matched.
  explicit Lexicon(std::vector<std::pair<std::string, std::string>> antonyms, LexiconWords words = {},
                   const LexiconSpellings& spellings = {});
  Lexicon(std::vector<std::pair<std::string, std::string>> antonyms, LexiconWords words,
          LexiconSpellingLines spellings);
  bool antonyms(uint32_t a, uint32_t b) const;
  bool has_antonyms(uint32_t token) const { return word_of(token) != kNoWord; }
  // The inflected word a piece belongs to (kNoWord when it has no antonyms),
  // and antonymy between two such words: one lookup per token, then per pair.
  static constexpr uint32_t kNoWord = 0xffffffffu;
  uint32_t word_of(uint32_t token) const;
  bool antonym_words(uint32_t word_a, uint32_t word_b) const;
  // The words that are antonyms of `word`, ascending (empty for kNoWord).
  std::span<const uint32_t> antonyms_of(uint32_t word) const;
  // A piece of 1-4 digits, bare or with a word-start or continuation marker.
  static bool is_digits(uint32_t token);
  // A digit piece or a piece form of a number word.
  bool is_number(uint32_t token) const { return is_digits(token) || number_pieces_.count(token) != 0; }
  bool is_negator(uint32_t token) const { return negator_pieces_.count(token) != 0; }
  // A negating clitic's piece; a negator when it follows an apostrophe piece.
  bool is_negating_clitic(uint32_t token) const { return clitic_pieces_.count(token) != 0; }
  static bool is_apostrophe(uint32_t token);
  const std::vector<std::pair<std::string, std::string>>& antonym_words() const { return words_; }
  const LexiconWords& words() const { return single_words_; }
  const std::unordered_set<uint32_t>& number_pieces() const { return number_pieces_; }
  const std::unordered_set<uint32_t>& negator_pieces() const { return negator_pieces_; }
  const std::unordered_set<uint32_t>& clitic_pieces() const { return clitic_pieces_; }
  static const std::unordered_set<uint32_t>& apostrophe_pieces();
  bool empty() const { return words_.empty() && single_words_.empty(); }
  // Piece identity -> word, for every piece form of every word.
  const std::unordered_map<uint32_t, uint32_t>& piece_words() const { return form_key_; }
  static const std::unordered_set<uint32_t>& digit_pieces();
  // Every inflected form of every antonym word, lower-case, in first-seen
  // order: with the number words, the forms a tokenizer's spellings are made for.
  std::vector<std::string> antonym_forms() const;
  // The spellings it was made with, in their order, as pairs (built on each
  // call) and as the lines it keeps.
  LexiconSpellings spellings() const;
  const std::string& spelling_lines() const { return spelling_lines_; }
  bool has_spellings() const { return !spelling_lines_.empty(); }
  // Whether some spelling starts with this piece (one probe before the scan).
  bool starts_spelling(uint32_t token) const { return spelled_firsts_.count(token) != 0; }
  std::vector<uint32_t> spelling_starts() const;
  // The longest spelling that ids[at..] starts with: its length in pieces,
  // its antonym word (kNoWord if it has none) and, for a number word, the
  // identity that stands for it (number_identity; 0 otherwise). Length 0
  // when none does.
  struct SpelledRun {
    size_t length = 0;
    uint32_t word = kNoWord, number = 0;
  };
  SpelledRun spelled_at(std::span<const uint32_t> ids, size_t at) const;
  // What a spelled number word ("sixty" as "\u2581six ty") is compared by:
  // not a piece any tokenizer writes, so it meets only the same word.
  static uint32_t number_identity(const std::string& lower_case_word);

 private:
  struct Spelled {
    uint32_t begin, length;  // its pieces: spelled_pieces_[begin, begin + length)
    uint32_t word, number;   // as in SpelledRun
  };
  std::vector<std::pair<std::string, std::string>> words_;
  std::unordered_map<uint32_t, uint32_t> form_key_;  // piece identity -> its inflected word's key
  std::unordered_set<uint64_t> pairs_;               // (min key << 32) | max key
  LexiconWords single_words_;
  std::unordered_set<uint32_t> number_pieces_, negator_pieces_, clitic_pieces_;
  // The spelled_ tables from spelling_lines_; keys: inflected form -> key.
  void index_spellings(const std::unordered_map<std::string, uint32_t>& keys);
  std::vector<std::string> forms_;                                // key -> its form
  std::string spelling_lines_;                                    // LexiconSpellingLines
  // Spellings are found by a hash of all their pieces, in one flat
  // open-addressing table. Before it, a bit filter of their first two pieces
  // turns away most positions of a text, a table of those two pieces says
  // which lengths to try (tens of thousands of spellings share a few first
  // pieces: "\u2581un", "\u2581dis"), and a bit filter of whole spellings turns
  // away most of those tries. The filters are small enough to stay in cache;
  // each try they save would cost a miss in a table of megabytes.
  static constexpr unsigned kSpelledFilterBits = 20;
  static constexpr size_t kLongestSpelling = 63;  // pieces; lengths are bits of a uint64_t
  struct SpelledSlot {
    uint64_t hash = 0;
    uint32_t index = 0;  // spelled_list_[index - 1]; 0 = an empty slot
  };
  struct PrefixSlot {
    uint64_t key = 0;
    uint64_t lengths = 0;  // bit L: a spelling of L pieces starts with these two; 0 = an empty slot
  };
  const Spelled* find_spelled(std::span<const uint32_t> pieces, uint64_t hash) const;
  uint64_t spelled_lengths(uint32_t first, uint32_t second) const;
  std::vector<uint32_t> spelled_pieces_;
  std::vector<Spelled> spelled_list_;
  std::vector<SpelledSlot> spelled_slots_;
  std::vector<PrefixSlot> prefix_slots_;
  std::vector<uint64_t> prefix_filter_, spelled_filter_;
  std::unordered_set<uint32_t> spelled_firsts_;
  // Antonyms per word key, as runs of antonym_list_: antonym_begin_[w] to antonym_begin_[w + 1].
  std::vector<uint32_t> antonym_begin_, antonym_list_;
};

// What the idf table and the lexicon say about one token, merged into one
// open-addressing table so the features cost one probe per token, not one
// node-based hash lookup per table (those miss the cache on every token).
class TokenTable {
 public:
  struct Info {
    float idf = 1.0f;                  // IdfTable::normalized_idf
    uint32_t word = Lexicon::kNoWord;  // Lexicon::word_of
    bool number = false;               // Lexicon::is_number
    bool negator = false;              // Lexicon::is_negator (token_info adds clitics in place)
    bool clitic = false;               // Lexicon::is_negating_clitic
    bool apostrophe = false;           // Lexicon::is_apostrophe
    bool spelling = false;             // Lexicon::starts_spelling
    bool spelled_rest = false;         // a later piece of a spelled word (set by the features, not the table)
    // Words read in whole words for minimal_flip alone (set by the features,
    // not the table): a comparative or superlative of a word of the lexicon
    // ("bigger", "\u2581hot ter", "heaviest"), as that word and its degree (1
    // -er, 2 -est); a word of day_shift_words() or flip_only_opposites()
    // ("today", "\u2581Tom or row", "lacks"), as its group times 8 plus its
    // class plus 1; one of negating_adverbs(); unread_rest on any such
    // word's later pieces.
    uint32_t comparative = Lexicon::kNoWord;
    uint8_t degree = 0;
    uint8_t flip_class = 0;
    bool negating_adverb = false;
    bool unread_rest = false;
    // What a number is compared by: its token identity, or for a spelled
    // number word Lexicon::number_identity (set by the features, not the table).
    uint32_t number_identity = 0;
  };
  TokenTable() = default;
  TokenTable(const IdfTable& idf, const Lexicon& lexicon);
  Info info(uint32_t token) const;

 private:
  struct Slot {
    uint32_t token = 0, word = Lexicon::kNoWord;
    float idf = 1.0f;
    uint8_t used = 0, number = 0, negator = 0, clitic = 0, apostrophe = 0, spelling = 0;
  };
  Slot& slot_for(uint32_t token);
  std::vector<Slot> slots_;
  unsigned shift_ = 32;
  Info absent_;
};

struct DirectionFeatures {
  size_t length = 0;
  std::vector<float> tokens;      // [length × kTokenFeatures]
  std::vector<uint32_t> ids;      // token identities of X (0 when unknown)
  // Per token (not a network input), when it has no exact match and is
  // flipped against the other text: kFlippedAntonym, an antonym of one of its
  // tokens that has no exact match either; kFlippedNegator, the extra negator
  // (token feature 14 also fires on an antonym that both texts hold:
  // "advantages and disadvantages"); kFlippedSpelling, a later piece of such an
  // antonym when the tokenizer spells it in several ("able" of "\u2581dis
  // able" facing "\u2581enable"), which goes with its first piece; else 0.
  // With whole words, a comparative or superlative of a lexicon word facing
  // one of its antonym's of the same degree ("bigger" / "smaller", "hottest"
  // / "coldest") is flipped too, though no network input reads it: the
  // lexicon holds no such forms ("big" + "er" is "biger" there); so is a
  // word of day_shift_words() or flip_only_opposites() facing a word of
  // another class of its group ("today" / "tomorrow", "lacks" / "has"). With whole words an extra negator counts
  // where the other text holds its piece only inside a longer word: "not" of
  // "not a" against "\u2581not able" of "notable" (feature 14 too).
  static constexpr uint8_t kFlippedAntonym = 1, kFlippedNegator = 2, kFlippedSpelling = 3;
  std::vector<uint8_t> flipped;
  // Per token (not a network input): kNegator for a negator, matched or not
  // (TokenTable::Info::negator, a clitic after its apostrophe included);
  // kContractionPart for the stem and apostrophe before such a clitic ("Don"
  // and "'" of "Don ' t"), which minimal_flip sets aside with the negator;
  // kNegatingAdverb for one of negating_adverbs() read in whole words, which
  // minimal_flip counts as a negator (its later pieces, "ly" of "\u2581hard
  // ly", kContractionPart too).
  static constexpr uint8_t kNegator = 1, kContractionPart = 2, kNegatingAdverb = 3;
  std::vector<uint8_t> negators;
  // Per token (not a network input): 1 when it has an exact match ignoring
  // case: token feature 2, or the token it aligns to (feature 5's) is the same
  // piece in another case ("\u2581Open" / "\u2581open", through the case
  // folds alignment_features was given) that the lexicon reads alike (the
  // same antonym word or none, both negators or neither, both numbers or
  // neither: the word lists hold a word lower-case and capitalized, so
  // "\u2581NO" is no negator beside "\u2581No"). Filled only where
  // minimal_flip reads it: with case folds that fold some piece, on a pair
  // with a polarity flip (pair feature 18) or a negator more in one text;
  // empty elsewhere, where feature 2 stands for it.
  std::vector<uint8_t> matched;
  // Per token (not a network input), filled with `matched`: the lower of its
  // normalized idf (feature 3) and that of its piece lower-cased, so "\u2581Do"
  // at the start of a sentence is as common a word as "\u2581do".
  std::vector<float> folded_idf;
};

struct AlignmentFeatures {
  DirectionFeatures forward, backward;  // a -> b (map rows), b -> a (map columns)
  std::vector<float> pair;              // [kPairFeatures]
  // pooled_comparison of the two pooled vectors, for a verifier with a pooled
  // head (alignment_features leaves it empty; empty = unknown).
  std::vector<float> pooled;
};

// What F5's pooled head reads of two pooled vectors: u ⊙ v, then |u - v|, of
// the unit vectors ([2 · dim], symmetric in a and b). The cosine is the sum
// of the first half; the head weighs each dimension's agreement. Empty when
// either vector is empty or zero; ConfigError when their sizes differ.
std::vector<float> pooled_comparison(std::span<const float> a, std::span<const float> b);

// A coordination of X that Y holds the other way round ("salt or sugar" /
// "sugar or salt", "by value or by reference" / "by reference or by value"):
// the order of Y's tokens that reads it the way X does (order[j] = the Y token
// read at position j), or empty when there is none. Conjuncts are 1-4 pieces,
// differ, and are joined by the same "and" / "or" piece in both texts, and Y
// does not also hold X's order; several coordinations are reordered when their
// spans in Y do not overlap. An "and" / "or" of two phrases means the same in
// either order far more often than not, while the map reads the swap as a
// crossed alignment, the mark of a role swap.
std::vector<size_t> coordination_order(std::span<const uint32_t> x_ids, std::span<const uint32_t> y_ids);
// The identities of "and" and "or" in every piece form.
const std::unordered_set<uint32_t>& coordinator_pieces();

// map must be non-empty; ids are the context's (empty = unknown, no exact
// matches then). A swapped coordination (coordination_order) is read in one
// text's order: the text whose identities sort first keeps its order, so the
// features of (a, b) are those of (b, a) with the directions exchanged.
// ConfigError when an id list does not match the map's size.
// `tokens` is TokenTable(idf, lexicon) of the same tables. `case_folds`
// (text::registered_case_folds() where F5 scores; null = none) only fill
// DirectionFeatures::matched: the network's inputs never read them.
// `whole_words` (the registered spellings, for a verifier whose config reads
// whole words; null = none) keeps the lexicon to words that stand whole in
// the text: an antonym piece or a spelled run that continues the piece
// before it or goes on into a longer word is no word of the lexicon
// ("\u2581under" of "undermining"), unless what follows is an inflection
// ("\u2581cold" "er", "\u2581hot" "ter"); a negator piece counts only where
// the whole word it lies in is a negator ("\u2581Can not", "\u2581no where";
// not "\u2581not able" of "notable", "not" of "knot"). Numbers are read as
// without it.
AlignmentFeatures alignment_features(const SimilarityMap& map, const PairContext& context, const TokenTable& tokens,
                                     const Lexicon& lexicon, const text::CaseFolds* case_folds = nullptr,
                                     const text::SurfaceSpellings* whole_words = nullptr);
// Builds the token table on every call: for tests and one-off pairs.
AlignmentFeatures alignment_features(const SimilarityMap& map, const PairContext& context, const IdfTable& idf,
                                     const Lexicon& lexicon, const text::CaseFolds* case_folds = nullptr,
                                     const text::SurfaceSpellings* whole_words = nullptr);

// Whether an identity rule has something to say about the pair: a number
// without its match (pair feature 17), a polarity flip (18: an antonym facing
// its partner, or a negator more), or mostly the same tokens in another order
// (at least 60% of each text's tokens matched exactly, order agreement under
// 1: a role swap, or a swap with a few words changed). A gate band
// (verify::CalibrationGate::band) never lets the pooled cosine turn the
// verdict of such a pair.
bool identity_signal(const AlignmentFeatures& features);

// Whether the texts differ only by a polarity flip: every token of both texts
// is matched exactly in the other, case aside (DirectionFeatures::matched;
// token feature 2 where that is missing: "Open the port" / "Never open the
// port" differ by "Never" alone), or flipped (DirectionFeatures::flipped: an
// unmatched antonym facing its unmatched partner, the pieces of one spelled in
// several included, or the extra negator), or
// has a normalized idf under `common_idf` (stop words, punctuation); the
// matched tokens keep their order (of their aligned positions, feature 5:
// "A is below B" / "B is above A"
// is a converse, the same relation), the negators of the text that holds more
// of them aside, with the stem and apostrophe of a contracted one ("Don't
// take the pills" / "Take the pills"), and a stop word read in either case
// (DirectionFeatures::folded_idf: "Do not open it" / "Open it"); and the
// flips are odd in number, an opposite pair counting
// once and the negators by how many more one text holds: "I did not say it
// was not true" / "I did not say it was true" is a flip. "is it open" /
// "is it closed" and "is it open" / "is it not open" are flips, "is it not
// open" / "is it closed" (two flips) is not. "increase volume" / "decrease volume" is one;
// sentences that differ elsewhere too are not: there an antonym across the
// texts is often incidental ("woman" in one, "man" in the other), and the
// network reads it with everything else.
inline constexpr float kMinimalFlipCommonIdf = 0.35f;
bool minimal_flip(const AlignmentFeatures& features, float common_idf = kMinimalFlipCommonIdf);

}  // namespace verity::verify
