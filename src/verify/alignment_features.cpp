#include "verify/alignment_features.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "core/error.hpp"
#include "text/surface.hpp"
#include "verify/kernels.hpp"
#include "verify/simple_verifiers.hpp"

namespace verity::verify {

IdfTable::IdfTable(size_t documents, std::unordered_map<uint32_t, uint32_t> document_frequency)
    : documents_(documents), df_(std::move(document_frequency)) {
  const double n = double(documents_);
  unseen_ = float(std::log((n + 1) / 2.0) + 1);
  max_idf_ = std::max(1.0f, unseen_);
  for (const auto& [token, df] : df_) max_idf_ = std::max(max_idf_, float(std::log((n + 1) / (df + 1.0)) + 1));
}

float IdfTable::idf(uint32_t token) const {
  auto it = df_.find(token);
  if (it == df_.end()) return unseen_;
  return float(std::log((double(documents_) + 1) / (it->second + 1.0)) + 1);
}

float IdfTable::normalized_idf(uint32_t token) const { return idf(token) / max_idf_; }

IdfTable build_idf_table(std::span<const std::vector<uint32_t>> texts) {
  std::unordered_map<uint32_t, uint32_t> df;
  std::vector<uint32_t> seen;
  for (const auto& ids : texts) {
    seen.assign(ids.begin(), ids.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (uint32_t t : seen) ++df[t];
  }
  return IdfTable(texts.size(), std::move(df));
}

namespace {

// The pieces a tokenizer may make of a whole word: bare (WordPiece, a
// sentence's first SentencePiece), with SentencePiece's word-start mark, and
// capitalized.
std::vector<std::string> piece_forms(const std::string& word) {
  std::string upper = word;
  if (!upper.empty() && upper[0] >= 'a' && upper[0] <= 'z') upper[0] = char(upper[0] - 'a' + 'A');
  std::vector<std::string> out;
  for (const std::string& w : {word, upper}) out.push_back(w), out.push_back("\u2581" + w);
  return out;
}

// Simple inflections, paired across a word pair (increased <-> decreased).
std::vector<std::string> inflections(const std::string& w) {
  const bool e = !w.empty() && w.back() == 'e';
  const std::string stem = e ? w.substr(0, w.size() - 1) : w;
  return {w, w + "s", e ? w + "d" : w + "ed", stem + "ing", e ? w + "r" : w + "er", e ? w + "st" : w + "est"};
}

uint64_t pair_key(uint32_t a, uint32_t b) {
  if (b < a) std::swap(a, b);
  return (uint64_t(a) << 32) | b;
}

}  // namespace

LexiconWords LexiconWords::english() {
  return {text::english_number_words(),
          {"not", "no", "never", "nor", "neither", "none", "nothing", "nobody", "nowhere", "without", "cannot"},
          {"t"}};
}

std::vector<std::pair<std::string, std::string>> relation_antonyms() {
  return {// vertical: what is under a thing is not on, over or above it
          {"under", "over"}, {"under", "above"}, {"under", "on"}, {"under", "atop"},
          {"beneath", "over"}, {"beneath", "above"}, {"beneath", "on"}, {"beneath", "atop"},
          {"underneath", "over"}, {"underneath", "above"}, {"underneath", "on"}, {"underneath", "atop"},
          {"below", "over"}, {"below", "on"}, {"below", "atop"}, {"upper", "lower"}, {"uphill", "downhill"},
          // horizontal and containment
          {"behind", "front"}, {"behind", "ahead"}, {"within", "outside"},
          // time order
          {"before", "after"}, {"earlier", "later"}, {"morning", "evening"}, {"summer", "winter"},
          // permission
          {"allow", "forbid"}, {"allow", "prohibit"}, {"permit", "prohibit"},
          // direction of a transfer or a flow
          {"send", "receive"}, {"input", "output"}, {"inbound", "outbound"}, {"arrive", "depart"},
          {"arrival", "departure"}, {"entrance", "exit"}, {"install", "uninstall"}, {"encrypt", "decrypt"},
          {"subscribe", "unsubscribe"},
          // everyday opposites
          {"safe", "unsafe"}, {"max", "min"}, {"profit", "loss"}, {"men", "women"}};
}

std::vector<std::pair<std::string, std::string>> spatial_relation_changes() {
  // Words of one class name one relation ("beneath" and "below"); a word of
  // one class against a word of another is a changed relation. Words with a
  // common sense beside the spatial one stay out ("over 50", "next week", "so
  // far", "on"), and "near" is not paired with "beside": what is beside a
  // thing is near it.
  const std::vector<std::vector<std::string>> classes = {
      {"above", "atop"}, {"below", "beneath", "underneath", "under"}, {"beside", "alongside"}, {"front"},
      {"behind"},        {"left"},                                    {"right"},                {"inside"},
      {"outside"},       {"near", "nearby"},                          {"between"}};
  const auto nearness = [](const std::string& a, const std::string& b) {
    const auto near = [](const std::string& w) { return w == "near" || w == "nearby"; };
    const auto side = [](const std::string& w) { return w == "beside" || w == "alongside"; };
    return (near(a) && side(b)) || (side(a) && near(b));
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t c = 0; c < classes.size(); ++c)
    for (size_t d = c + 1; d < classes.size(); ++d)
      for (const auto& a : classes[c])
        for (const auto& b : classes[d])
          if (!nearness(a, b)) out.emplace_back(a, b);
  return out;
}

std::vector<std::pair<std::string, std::string>> time_relation_changes() {
  // Groups of words for one kind of time; within a group, classes of words
  // for one time ("yearly", "annually"). A word of one class against a word
  // of another in its group is a changed time. "Evening" and "night" stay
  // unpaired (what is done tonight is done this evening), as do units
  // ("day", "month"), which texts of one meaning often both hold ("twice a
  // day, fourteen times a week"). Left out after a dev run: "today" /
  // "yesterday" / "tomorrow", which news texts of one meaning swap when they
  // were written on other days, and "during" against "before" or "after".
  const std::vector<std::vector<std::vector<std::string>>> groups = {
      {{"hourly"}, {"daily"}, {"weekly"}, {"monthly"}, {"yearly", "annually", "annual"}},
      {{"morning"}, {"afternoon"}, {"evening"}, {"night"}},
      {{"summer"}, {"autumn"}, {"winter"}},
      {{"weekday", "weekdays"}, {"weekend", "weekends"}}};
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& classes : groups)
    for (size_t c = 0; c < classes.size(); ++c)
      for (size_t d = c + 1; d < classes.size(); ++d)
        for (const auto& a : classes[c])
          for (const auto& b : classes[d])
            if (!(a == "evening" && b == "night")) out.emplace_back(a, b);
  return out;
}

const std::vector<std::vector<std::vector<std::string>>>& day_shift_words() {
  // "Tonight" is today's; "before" / "after" are relation opposites already,
  // here beside "during".
  static const std::vector<std::vector<std::vector<std::string>>> groups = {
      {{"yesterday"}, {"today", "tonight"}, {"tomorrow"}}, {{"before"}, {"during"}, {"after"}}};
  return groups;
}

const std::vector<std::vector<std::vector<std::string>>>& flip_only_opposites() {
  // Every form is listed: WordNet pairs few of these, and "have" / "had" are
  // too common for the network's lexicon. "Decline" also means "fall", and
  // "required" "needed", which only matter against their partners here.
  static const std::vector<std::vector<std::vector<std::string>>> groups = {
      {{"lack", "lacks", "lacked", "lacking"}, {"have", "has", "had", "having"}},
      {{"refuse", "refuses", "refused", "refusing", "decline", "declines", "declined", "declining"},
       {"agree", "agrees", "agreed", "agreeing", "accept", "accepts", "accepted", "accepting"}},
      {{"deny", "denies", "denied", "denying"},
       {"admit", "admits", "admitted", "admitting", "confirm", "confirms", "confirmed", "confirming"}},
      {{"fail", "fails", "failed", "failing"},
       {"manage", "manages", "managed", "managing", "succeed", "succeeds", "succeeded", "succeeding"}},
      {{"everyone", "everybody"}, {"someone", "somebody"}},
      {{"except", "excluding"}, {"including"}},
      {{"happy", "happier", "happiest"}, {"sad", "sadder", "saddest"}},
      {{"mandatory", "compulsory", "obligatory", "required"}, {"optional", "voluntary"}},
      // What a user asks a program to do, and its reverse ("create" / "delete" an account, "log in" /
      // "log out"); a reversal by "un" or "dis" ("mount" / "unmount") is text::reversed_word's.
      {{"create", "creates", "created", "creating"}, {"delete", "deletes", "deleted", "deleting"}},
      {{"merge", "merges", "merged", "merging"}, {"split", "splits", "splitting"}},
      {{"expand", "expands", "expanded", "expanding"}, {"collapse", "collapses", "collapsed", "collapsing"}},
      {{"allow", "allows", "allowed", "allowing"}, {"block", "blocks", "blocked", "blocking"}},
      {{"in"}, {"out"}}};
  return groups;
}

const std::vector<std::string>& negating_adverbs() {
  static const std::vector<std::string> words = {"hardly", "barely", "scarcely"};
  return words;
}

namespace {
// Each pair also with the base form of one word facing the -s, -ed and -ing forms of the other (not
// -er: "off" would meet "offer"): a tokenizer often writes an inflected word as its base piece and a
// suffix ("rejected" is "▁reject" "ed" in USE-lite) while the opposite stays one piece ("approved"),
// so the paired forms never meet.
std::vector<std::pair<std::string, std::string>> with_base_crossings(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::pair<std::string, std::string>> held;
  auto add = [&](const std::string& a, const std::string& b) {
    if (held.insert(std::minmax(a, b)).second) out.emplace_back(a, b);
  };
  for (const auto& [a, b] : pairs) add(a, b);
  for (const auto& [a, b] : pairs) {
    const auto fa = inflections(a), fb = inflections(b);
    for (size_t k = 1; k <= 3; ++k) add(a, fb[k]), add(fa[k], b);  // -s, -ed, -ing
  }
  return out;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> direction_antonyms() {
  return with_base_crossings({// amount and level: more of a thing is not less of it
          {"increase", "reduce"}, {"increase", "lower"}, {"increase", "decline"}, {"raise", "lower"},
          {"raise", "reduce"}, {"boost", "reduce"}, {"boost", "lower"}, {"rise", "drop"}, {"rise", "decline"},
          {"rose", "fell"}, {"risen", "fallen"}, {"rose", "dropped"}, {"rose", "declined"},
          {"grow", "shrink"}, {"grew", "shrank"}, {"grown", "shrunk"}, {"expand", "shrink"},
          {"gain", "lose"}, {"gained", "lost"}, {"won", "lost"}, {"winner", "loser"},
          {"more", "fewer"}, {"most", "least"}, {"maximize", "minimize"}, {"majority", "minority"},
          {"overestimate", "underestimate"}, {"overvalued", "undervalued"}, {"overweight", "underweight"},
          {"accelerate", "decelerate"}, {"fast", "slow"}, {"faster", "slower"}, {"cheap", "expensive"},
          // better or worse
          {"improve", "worsen"}, {"improve", "deteriorate"}, {"better", "worse"}, {"benefit", "harm"},
          {"help", "hurt"}, {"healthy", "unhealthy"}, {"legal", "illegal"}, {"possible", "impossible"},
          {"success", "failure"}, {"succeed", "fail"}, {"pass", "fail"},
          // a switch or an edit, one way or the other
          {"enable", "disable"}, {"activate", "deactivate"}, {"connect", "disconnect"}, {"lock", "unlock"},
          {"on", "off"}, {"open", "close"}, {"show", "hide"}, {"add", "remove"}, {"add", "delete"},
          {"insert", "delete"}, {"insert", "remove"}, {"include", "exclude"}, {"upload", "download"},
          {"import", "export"}, {"upgrade", "downgrade"}, {"push", "pull"}, {"start", "end"},
          {"start", "finish"}, {"forward", "backward"}, {"upward", "downward"}, {"upstairs", "downstairs"},
          {"top", "bottom"},
          // yes or no to a thing
          {"support", "oppose"}, {"approve", "reject"}, {"approve", "deny"}, {"confirm", "deny"},
          {"admit", "deny"}, {"accept", "decline"}, {"love", "hate"}, {"like", "dislike"}, {"like", "hate"},
          {"true", "false"}, {"positive", "negative"}, {"cause", "prevent"}, {"encourage", "discourage"},
          // irregular forms the simple inflections miss
          {"gain", "lost"}, {"gain", "losses"}, {"confirmed", "denied"}, {"approved", "denied"},
          {"admitted", "denied"}});
}

size_t merge_antonyms(std::vector<std::pair<std::string, std::string>>& words,
                      const std::vector<std::pair<std::string, std::string>>& extra) {
  std::set<std::pair<std::string, std::string>> held;
  for (const auto& [a, b] : words) held.insert(std::minmax(a, b));
  size_t added = 0;
  for (const auto& [a, b] : extra) {
    VERITY_CHECK(!a.empty() && !b.empty() && a != b, ConfigError, "f5: antonym pair '", a, "' / '", b,
                 "' needs two different words");
    if (held.insert(std::minmax(a, b)).second) words.emplace_back(a, b), ++added;
  }
  return added;
}

namespace {
LexiconSpellingLines as_spelling_lines(const LexiconSpellings& spellings) {
  LexiconSpellingLines lines;
  // Only what would change the lines' shape is checked here; the rest as any line is.
  for (const auto& [form, pieces] : spellings) {
    VERITY_CHECK(form.find_first_of("\t\n") == std::string::npos, ConfigError,
                 "f5 lexicon: the spelled form '", form, "' holds a tab or line break");
    lines.text += form;
    for (size_t k = 0; k < pieces.size(); ++k) {
      VERITY_CHECK(pieces[k].find_first_of(" \t\n") == std::string::npos, ConfigError, "f5 lexicon: the spelling of '",
                   form, "' holds a piece with a space, tab or line break");
      lines.text += (k == 0 ? "\t" : " ") + pieces[k];
    }
    lines.text += '\n';
  }
  return lines;
}
}  // namespace

Lexicon::Lexicon(std::vector<std::pair<std::string, std::string>> antonyms, LexiconWords words,
                 const LexiconSpellings& spellings)
    : Lexicon(std::move(antonyms), std::move(words), as_spelling_lines(spellings)) {}

Lexicon::Lexicon(std::vector<std::pair<std::string, std::string>> antonyms, LexiconWords words,
                 LexiconSpellingLines spellings)
    : words_(std::move(antonyms)), single_words_(std::move(words)), spelling_lines_(std::move(spellings.text)) {
  for (const auto& w : single_words_.numbers)
    for (const auto& piece : piece_forms(w)) number_pieces_.insert(token_identity(piece));
  for (const auto& w : single_words_.negators)
    for (const auto& piece : piece_forms(w)) negator_pieces_.insert(token_identity(piece));
  // A clitic follows its apostrophe inside a word: only the bare piece.
  for (const auto& w : single_words_.negating_clitics) clitic_pieces_.insert(token_identity(w));
  // Every piece form of one inflected word maps to one key; antonymy is a
  // relation between keys, so each pair is stored once, not once per form.
  std::unordered_map<std::string, uint32_t> keys;
  auto key_of = [&](const std::string& form) {
    auto [it, added] = keys.emplace(form, uint32_t(keys.size()));
    if (added) {
      forms_.push_back(form);
      for (const auto& piece : piece_forms(form)) form_key_.emplace(token_identity(piece), it->second);
    }
    return it->second;
  };
  for (const auto& [a, b] : words_) {
    const auto fa = inflections(a), fb = inflections(b);
    for (size_t k = 0; k < fa.size(); ++k) {
      const uint32_t ka = key_of(fa[k]), kb = key_of(fb[k]);
      if (ka != kb) pairs_.insert(pair_key(ka, kb));
    }
  }
  std::vector<std::vector<uint32_t>> opposites(keys.size());
  for (uint64_t pair : pairs_) {
    const auto a = uint32_t(pair >> 32), b = uint32_t(pair);
    opposites[a].push_back(b), opposites[b].push_back(a);
  }
  antonym_begin_.assign(1, 0);
  for (auto& list : opposites) {
    std::sort(list.begin(), list.end());
    antonym_list_.insert(antonym_list_.end(), list.begin(), list.end());
    antonym_begin_.push_back(uint32_t(antonym_list_.size()));
  }
  index_spellings(keys);
}

// Each line "form<TAB>piece piece ...": a form of two or more non-empty pieces
// (a word kept whole is matched without one). Errors name the LEXS line.
namespace {
uint64_t spelled_key(uint32_t first, uint32_t second) { return (uint64_t(first) << 32) | second; }
uint64_t mix(uint64_t key) {  // splitmix64's finalizer: every bit of the key reaches every bit
  key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ull;
  key = (key ^ (key >> 27)) * 0x94d049bb133111ebull;
  return key ^ (key >> 31);
}
// A run of pieces' hash, one piece at a time (a prefix's hash is a step of the whole's).
constexpr uint64_t kPiecesSeed = 0x243f6a8885a308d3ull;
uint64_t extend_hash(uint64_t h, uint32_t piece) { return mix(h ^ piece); }
// Index bits of a table of 2^bits slots: the hash's top bits.
size_t slot_of(uint64_t hash, size_t slots) { return size_t(hash >> (64 - std::countr_zero(slots))); }
// A bit filter's bit: the hash's low bits, apart from the slot's.
void set_bit(std::vector<uint64_t>& filter, uint64_t hash) {
  const size_t bit = size_t(hash) & (filter.size() * 64 - 1);
  filter[bit / 64] |= uint64_t(1) << (bit % 64);
}
bool has_bit(const std::vector<uint64_t>& filter, uint64_t hash) {
  const size_t bit = size_t(hash) & (filter.size() * 64 - 1);
  return (filter[bit / 64] >> (bit % 64) & 1) != 0;
}
}  // namespace

void Lexicon::index_spellings(const std::unordered_map<std::string, uint32_t>& keys) {
  spelled_pieces_.clear(), spelled_list_.clear(), spelled_slots_.clear(), prefix_slots_.clear(), prefix_filter_.clear(),
      spelled_filter_.clear();
  std::unordered_map<uint64_t, uint64_t> lengths;  // first two pieces -> PrefixSlot::lengths
  const std::unordered_set<std::string> numbers(single_words_.numbers.begin(), single_words_.numbers.end());
  const std::string_view text = spelling_lines_;
  size_t line = 0;
  for (size_t pos = 0; pos < text.size();) {
    ++line;
    const size_t eol = text.find('\n', pos);
    VERITY_CHECK(eol != std::string_view::npos, ConfigError, "f5 lexicon: LEXS line ", line, " has no newline");
    const auto row = text.substr(pos, eol - pos);
    pos = eol + 1;
    const size_t tab = row.find('\t');
    std::vector<std::string_view> pieces;
    for (size_t p = tab + 1; tab != std::string_view::npos;) {
      const size_t space = row.find(' ', p);
      pieces.push_back(row.substr(p, space == std::string_view::npos ? std::string_view::npos : space - p));
      if (space == std::string_view::npos) break;
      p = space + 1;
    }
    const bool well_formed =
        tab != std::string_view::npos && tab > 0 && pieces.size() >= 2 &&
        std::none_of(pieces.begin(), pieces.end(), [](std::string_view p) { return p.empty() || p.find('\t') != p.npos; });
    VERITY_CHECK(well_formed, ConfigError, "f5 lexicon: LEXS line ", line,
                 " is not 'form<TAB>piece piece ...' with two or more non-empty pieces");
    std::string lower(row.substr(0, tab));
    if (lower[0] >= 'A' && lower[0] <= 'Z') lower[0] = char(lower[0] - 'A' + 'a');
    const auto key = keys.find(lower);
    const bool number = numbers.count(lower) != 0;
    if (key == keys.end() && !number) continue;
    VERITY_CHECK(pieces.size() <= kLongestSpelling, ConfigError, "f5 lexicon: LEXS line ", line, " spells '",
                 row.substr(0, tab), "' in ", pieces.size(), " pieces (at most ", kLongestSpelling, ")");
    const Spelled spelled{uint32_t(spelled_pieces_.size()), uint32_t(pieces.size()),
                          key == keys.end() ? kNoWord : key->second, number ? number_identity(lower) : 0};
    for (const auto& piece : pieces) spelled_pieces_.push_back(token_identity(piece));
    spelled_list_.push_back(spelled);
    lengths[spelled_key(spelled_pieces_[spelled.begin], spelled_pieces_[spelled.begin + 1])] |= uint64_t(1) << pieces.size();
    spelled_firsts_.insert(spelled_pieces_[spelled.begin]);
  }
  spelled_pieces_.shrink_to_fit();
  if (spelled_list_.empty()) return;
  auto table_size = [](size_t entries) {
    size_t size = 16;
    while (size < 2 * entries) size *= 2;  // load factor <= 1/2
    return size;
  };
  spelled_slots_.assign(table_size(spelled_list_.size()), SpelledSlot{});
  spelled_filter_.assign((size_t(1) << kSpelledFilterBits) / 64, 0);
  // find_spelled reads spelled_list_: it grows with the slots, each spelling once.
  const std::vector<Spelled> all = std::move(spelled_list_);
  spelled_list_.clear();
  for (const Spelled& s : all) {
    const auto run = std::span(spelled_pieces_).subspan(s.begin, s.length);
    uint64_t h = kPiecesSeed;
    for (uint32_t piece : run) h = extend_hash(h, piece);
    if (find_spelled(run, h) != nullptr) continue;  // spelled the same as a line before it: the first wins
    spelled_list_.push_back(s);
    size_t i = slot_of(h, spelled_slots_.size());
    while (spelled_slots_[i].index != 0) i = (i + 1) & (spelled_slots_.size() - 1);
    spelled_slots_[i] = {h, uint32_t(spelled_list_.size())};
    set_bit(spelled_filter_, h);
  }
  prefix_slots_.assign(table_size(lengths.size()), PrefixSlot{});
  prefix_filter_.assign((size_t(1) << kSpelledFilterBits) / 64, 0);
  for (const auto& [prefix, mask] : lengths) {
    const uint64_t h = mix(prefix);
    size_t i = slot_of(h, prefix_slots_.size());
    while (prefix_slots_[i].lengths != 0) i = (i + 1) & (prefix_slots_.size() - 1);
    prefix_slots_[i] = {prefix, mask};
    set_bit(prefix_filter_, h);
  }
}

std::vector<std::string> Lexicon::antonym_forms() const { return forms_; }

LexiconSpellings Lexicon::spellings() const {
  LexiconSpellings out;
  const std::string_view text = spelling_lines_;
  for (size_t pos = 0; pos < text.size();) {
    const size_t eol = text.find('\n', pos), tab = text.find('\t', pos);
    std::vector<std::string> pieces;
    for (size_t p = tab + 1; p < eol;) {
      const size_t end = std::min(text.find(' ', p), eol);
      pieces.emplace_back(text.substr(p, end - p));
      p = end + 1;
    }
    out.emplace_back(std::string(text.substr(pos, tab - pos)), std::move(pieces));
    pos = eol + 1;
  }
  return out;
}

std::vector<uint32_t> Lexicon::spelling_starts() const {
  std::vector<uint32_t> out;
  out.reserve(spelled_firsts_.size());
  for (uint32_t first : spelled_firsts_) out.push_back(first);
  return out;
}

uint64_t Lexicon::spelled_lengths(uint32_t first, uint32_t second) const {
  if (prefix_slots_.empty()) return 0;
  const uint64_t key = spelled_key(first, second), h = mix(key);
  if (!has_bit(prefix_filter_, h)) return 0;
  for (size_t i = slot_of(h, prefix_slots_.size()); prefix_slots_[i].lengths != 0; i = (i + 1) & (prefix_slots_.size() - 1))
    if (prefix_slots_[i].key == key) return prefix_slots_[i].lengths;
  return 0;
}

const Lexicon::Spelled* Lexicon::find_spelled(std::span<const uint32_t> pieces, uint64_t hash) const {
  if (spelled_slots_.empty() || !has_bit(spelled_filter_, hash)) return nullptr;
  for (size_t i = slot_of(hash, spelled_slots_.size()); spelled_slots_[i].index != 0; i = (i + 1) & (spelled_slots_.size() - 1)) {
    if (spelled_slots_[i].hash != hash) continue;
    const Spelled& s = spelled_list_[spelled_slots_[i].index - 1];
    if (std::ranges::equal(std::span(spelled_pieces_).subspan(s.begin, s.length), pieces)) return &s;
  }
  return nullptr;
}

Lexicon::SpelledRun Lexicon::spelled_at(std::span<const uint32_t> ids, size_t at) const {
  if (at + 1 >= ids.size()) return {};  // every spelling has two or more pieces
  uint64_t lengths = spelled_lengths(ids[at], ids[at + 1]);
  const size_t room = std::min(ids.size() - at, kLongestSpelling);
  lengths &= (uint64_t(2) << room) - 1;  // no longer than what is left of the text
  if (lengths == 0) return {};
  // The hashes of ids[at, at + L) for every L up to the longest to try, then longest first.
  const auto longest = size_t(63 - std::countl_zero(lengths));
  std::array<uint64_t, kLongestSpelling + 1> hashes{};
  uint64_t h = kPiecesSeed;
  for (size_t length = 1; length <= longest; ++length) hashes[length] = h = extend_hash(h, ids[at + length - 1]);
  for (size_t length = longest; length >= 2; --length)
    if ((lengths >> length & 1) != 0)
      if (const Spelled* s = find_spelled(ids.subspan(at, length), hashes[length])) return {length, s->word, s->number};
  return {};
}

uint32_t Lexicon::number_identity(const std::string& lower_case_word) {
  return token_identity("\x01number:" + lower_case_word);
}

bool Lexicon::antonyms(uint32_t a, uint32_t b) const { return antonym_words(word_of(a), word_of(b)); }

uint32_t Lexicon::word_of(uint32_t token) const {
  const auto it = form_key_.find(token);
  return it == form_key_.end() ? kNoWord : it->second;
}

bool Lexicon::antonym_words(uint32_t word_a, uint32_t word_b) const {
  return word_a != kNoWord && word_b != kNoWord && word_a != word_b && pairs_.count(pair_key(word_a, word_b)) != 0;
}

std::span<const uint32_t> Lexicon::antonyms_of(uint32_t word) const {
  if (word == kNoWord || size_t(word) + 1 >= antonym_begin_.size()) return {};
  return std::span(antonym_list_).subspan(antonym_begin_[word], antonym_begin_[word + 1] - antonym_begin_[word]);
}

bool Lexicon::is_digits(uint32_t token) { return digit_pieces().count(token) != 0; }

bool Lexicon::is_apostrophe(uint32_t token) { return apostrophe_pieces().count(token) != 0; }

const std::unordered_set<uint32_t>& Lexicon::apostrophe_pieces() {
  static const std::unordered_set<uint32_t> pieces = {token_identity("'"), token_identity("\u2019")};
  return pieces;
}

const std::unordered_set<uint32_t>& Lexicon::digit_pieces() {
  static const std::unordered_set<uint32_t> digits = [] {
    std::unordered_set<uint32_t> set;
    for (int len = 1; len <= 4; ++len) {
      int limit = 1;
      for (int k = 0; k < len; ++k) limit *= 10;
      for (int v = 0; v < limit; ++v) {
        std::string d = std::to_string(v);
        d.insert(0, size_t(len) - d.size(), '0');
        for (const char* mark : {"", "\u2581", "##"}) set.insert(token_identity(mark + d));
      }
    }
    return set;
  }();
  return digits;
}

TokenTable::TokenTable(const IdfTable& idf, const Lexicon& lexicon) {
  const auto spelling_starts = lexicon.spelling_starts();
  const size_t entries = idf.document_frequency().size() + lexicon.piece_words().size() +
                         Lexicon::digit_pieces().size() + lexicon.number_pieces().size() +
                         lexicon.negator_pieces().size() + lexicon.clitic_pieces().size() +
                         Lexicon::apostrophe_pieces().size() + spelling_starts.size();
  unsigned bits = 4;
  while ((size_t(1) << bits) < 2 * entries) ++bits;  // load factor <= 1/2
  slots_.assign(size_t(1) << bits, Slot{});
  shift_ = 32 - bits;
  absent_.idf = idf.normalized_unseen_idf();
  // Every slot starts as an unknown token (the unseen idf), then the tables fill it in.
  auto fresh = [&](uint32_t token) -> Slot& {
    Slot& s = slot_for(token);
    if (!s.used) s.used = 1, s.token = token, s.idf = absent_.idf;
    return s;
  };
  for (const auto& [token, df] : idf.document_frequency()) fresh(token).idf = idf.normalized_idf(token);
  for (const auto& [token, word] : lexicon.piece_words()) fresh(token).word = word;
  for (uint32_t token : Lexicon::digit_pieces()) fresh(token).number = 1;
  for (uint32_t token : lexicon.number_pieces()) fresh(token).number = 1;
  for (uint32_t token : lexicon.negator_pieces()) fresh(token).negator = 1;
  // An apostrophe alone changes nothing: only a clitic after it negates.
  for (uint32_t token : lexicon.clitic_pieces()) fresh(token).clitic = 1;
  for (uint32_t token : Lexicon::apostrophe_pieces()) fresh(token).apostrophe = 1;
  for (uint32_t token : spelling_starts) fresh(token).spelling = 1;
}

TokenTable::Slot& TokenTable::slot_for(uint32_t token) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = (uint32_t(token * 2654435761u) >> shift_) & mask;; i = (i + 1) & mask)
    if (!slots_[i].used || slots_[i].token == token) return slots_[i];
}

TokenTable::Info TokenTable::info(uint32_t token) const {
  if (slots_.empty()) return absent_;
  const size_t mask = slots_.size() - 1;
  for (size_t i = (uint32_t(token * 2654435761u) >> shift_) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.used) return absent_;
    if (s.token == token)
      return {s.idf, s.word, s.number != 0, s.negator != 0, s.clitic != 0, s.apostrophe != 0, s.spelling != 0};
  }
}

namespace {

struct DirectionSummary {
  double maxsim = 0, idf_maxsim = 0, exact = 0, idf_exact = 0, tau = 0, kept = 0, worst_missing = 0;
  size_t unmatched_numbers = 0, polarity_flips = 0;
  size_t unread_flips = 0;  // flipped comparatives and flip-only words (DirectionFeatures::flipped), not in polarity_flips
  std::vector<long> target;  // j* of each token of X (read_matches reads them)
};

// What the tables say about each token of one text, looked up once per map
// (TokenTable's defaults, idf 1 and no word, when identities are unknown).
using TokenInfo = std::vector<TokenTable::Info>;

// Whether the word that ends at ids[end - 1] goes on past it only by an
// inflection ("\u2581cold" "er", "\u2581hot" "ter", "\u2581outdoor" "s") or
// not at all: not "\u2581under" "min" "ing".
bool ends_as_word(std::span<const uint32_t> ids, size_t end, const text::SurfaceSpellings& spellings) {
  std::string rest;
  for (size_t k = end; k < ids.size() && spellings.joins(ids[k - 1], ids[k]); ++k) {
    rest += *spellings.spelling_of(ids[k]);
    if (rest.size() > 8) return false;
  }
  if (rest.empty()) return true;
  static const std::array<std::string_view, 10> kEndings = {"s", "es", "ed", "d", "ing", "er", "r", "est", "st", "ly"};
  auto ending = [&](std::string_view r) { return std::find(kEndings.begin(), kEndings.end(), r) != kEndings.end(); };
  if (ending(rest)) return true;
  // A doubled last letter before the ending: "hot" + "ter", "stop" + "ped".
  const std::string* last = spellings.spelling_of(ids[end - 1]);
  return last != nullptr && !last->empty() && rest.size() > 1 && rest[0] == last->back() &&
         ending(std::string_view(rest).substr(1));
}

// What ids[begin, end) spell as one word, lower-cased (ASCII), without its
// word mark.
std::string spelled_word(std::span<const uint32_t> ids, size_t begin, size_t end,
                         const text::SurfaceSpellings& spellings) {
  std::string word;
  for (size_t k = begin; k < end; ++k)
    if (const std::string* piece = spellings.spelling_of(ids[k])) word += *piece;
  const size_t first = word.find_first_not_of(' ');
  word.erase(0, first == std::string::npos ? word.size() : first);
  for (char& c : word) c = char(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

// The whole word of the text that piece `at` lies in, as spelled_word gives
// it: "cannot" for the "not" of "\u2581Can not".
std::string word_around(std::span<const uint32_t> ids, size_t at, const text::SurfaceSpellings& spellings) {
  size_t begin = at, end = at + 1;
  while (begin > 0 && spellings.joins(ids[begin - 1], ids[begin])) --begin;
  while (end < ids.size() && spellings.joins(ids[end - 1], ids[end])) ++end;
  return spelled_word(ids, begin, end, spellings);
}

// The word of the lexicon that a comparative or superlative is made from,
// and its degree (1 -er, 2 -est): "bigger" big, "heaviest" heavy, "safer"
// safe, "colder" cold; kNoWord when it is none ("never", "water").
std::pair<uint32_t, uint8_t> comparative_of(const std::string& word, const Lexicon& lexicon) {
  for (const auto& [ending, degree] : {std::pair<std::string_view, uint8_t>{"est", 2}, {"er", 1}}) {
    if (word.size() < ending.size() + 2 || !word.ends_with(ending)) continue;
    const std::string base = word.substr(0, word.size() - ending.size());
    std::vector<std::string> bases = {base, base + "e"};
    const size_t n = base.size();
    if (n >= 3 && base[n - 1] == base[n - 2]) bases.push_back(base.substr(0, n - 1));  // "bigg" of "bigger"
    if (base.back() == 'i') bases.push_back(base.substr(0, n - 1) + "y");            // "heavi" of "heavier"
    for (const auto& b : bases)
      if (const uint32_t w = lexicon.word_of(token_identity("\u2581" + b)); w != Lexicon::kNoWord) return {w, degree};
  }
  return {Lexicon::kNoWord, 0};
}

// The words read for minimal_flip alone, lower-case, with what
// TokenTable::Info records of them: the negating adverbs kAdverbCode, a
// word of day_shift_words() or flip_only_opposites() its group times 8 plus
// its class plus 1.
constexpr uint8_t kAdverbCode = 255;
const std::unordered_map<std::string, uint8_t>& flip_only_spellings() {
  static const auto spellings = [] {
    std::unordered_map<std::string, uint8_t> out;
    size_t g = 0;
    for (const auto* list : {&day_shift_words(), &flip_only_opposites()})
      for (const auto& classes : *list) {
        VERITY_CHECK(classes.size() < 8, ConfigError, "flip-only words: a group of ", classes.size(),
                     " classes, at most 7");
        for (size_t c = 0; c < classes.size(); ++c)
          for (const auto& word : classes[c]) out[word] = uint8_t(g * 8 + c + 1);
        ++g;
      }
    VERITY_CHECK(g < 31, ConfigError, "flip-only words: ", g, " groups, at most 30");
    for (const auto& word : negating_adverbs()) out[word] = kAdverbCode;
    return out;
  }();
  return spellings;
}

// The same words as a tokenizer keeps them in one piece, by token identity,
// lower-case and capitalized.
const std::unordered_map<uint32_t, uint8_t>& flip_only_pieces() {
  static const auto pieces = [] {
    std::unordered_map<uint32_t, uint8_t> out;
    for (const auto& [word, code] : flip_only_spellings()) {
      std::string capitalized = word;
      capitalized[0] = char(std::toupper(static_cast<unsigned char>(word[0])));
      for (const auto& w : {word, capitalized}) out[token_identity("\u2581" + w)] = code;
    }
    return out;
  }();
  return pieces;
}

// Whether a word's first piece (its spelling, word mark included) begins one
// of those words, ignoring case: every prefix of every word, looked up once.
bool starts_flip_only_word(const std::string& piece) {
  static const auto prefixes = [] {
    std::unordered_set<std::string> out;
    for (const auto& [word, code] : flip_only_spellings())
      for (size_t k = 1; k <= word.size(); ++k) out.insert(word.substr(0, k));
    return out;
  }();
  std::string start;
  for (char c : piece)
    if (c != ' ') start += char(std::tolower(static_cast<unsigned char>(c)));
  return prefixes.contains(start);
}

TokenInfo token_info(std::span<const uint32_t> ids, size_t length, bool known, const TokenTable& table,
                     const Lexicon& lexicon, const text::SurfaceSpellings* whole_words, bool comparatives) {
  TokenInfo info(length);
  for (size_t i = 0; i < length && known; ++i) {
    info[i] = table.info(ids[i]);
    if (info[i].number) info[i].number_identity = ids[i];
  }
  const auto text_ids = ids.first(std::min(length, ids.size()));
  // With whole_words, a word of the lexicon counts only where it stands as a
  // word of the text, not inside a longer one; numbers are read as before.
  auto inside_longer_word = [&](size_t at, size_t pieces) {
    if (whole_words == nullptr) return false;
    if (at > 0 && whole_words->joins(text_ids[at - 1], text_ids[at])) return true;
    return !ends_as_word(text_ids, at + pieces, *whole_words);
  };
  // A negator counts where the whole word it lies in is one ("\u2581Can not",
  // "\u2581no where"), not inside "\u2581not able" or "\u2581k not".
  auto negating_word = [&](size_t at) {
    if (whole_words->spelling_of(text_ids[at]) == nullptr) return true;  // a piece of no known vocabulary
    const auto& negators = lexicon.words().negators;
    const auto word = word_around(text_ids, at, *whole_words);
    return std::find(negators.begin(), negators.end(), word) != negators.end();
  };
  // A spelled word ("\u2581dis" "able") is its first piece's word, and a number
  // only if it is a number word ("\u2581six" "ty" is sixty, not six); the
  // pieces after it are no words or numbers of their own ("able" is not "disable").
  for (size_t i = 0; i < length && known; ++i) {
    if (!info[i].spelling) continue;
    const auto run = lexicon.spelled_at(text_ids, i);
    if (run.length == 0) continue;
    if (run.number == 0 && inside_longer_word(i, run.length)) continue;
    info[i].word = run.word;
    info[i].number = run.number != 0;
    info[i].number_identity = run.number;
    for (size_t k = 1; k < run.length; ++k)
      info[i + k].word = Lexicon::kNoWord, info[i + k].number = false, info[i + k].number_identity = 0,
      info[i + k].spelled_rest = true;
    i += run.length - 1;
  }
  // Words read for minimal_flip alone, each whole word once: a comparative
  // of a lexicon word, a flip-only word, a negating adverb.
  if (whole_words != nullptr && comparatives)
    for (size_t i = 0, end = 0; i < text_ids.size() && known; i = end) {
      end = i + 1;
      while (end < text_ids.size() && whole_words->joins(text_ids[end - 1], text_ids[end])) ++end;
      bool read = false;
      // Most words are no comparative: their last piece tells, before any spelling.
      const std::string* last = whole_words->spelling_of(text_ids[end - 1]);
      if (last != nullptr && (last->ends_with("r") || last->ends_with("st"))) {
        const auto [word, degree] = comparative_of(spelled_word(text_ids, i, end, *whole_words), lexicon);
        if (word != Lexicon::kNoWord) info[i].comparative = word, info[i].degree = degree, read = true;
      }
      uint8_t code = 0;
      if (end == i + 1) {
        const auto found = flip_only_pieces().find(text_ids[i]);
        if (found != flip_only_pieces().end()) code = found->second;
      } else if (const std::string* first = whole_words->spelling_of(text_ids[i]);
                 first != nullptr && starts_flip_only_word(*first)) {
        // A word of several pieces ("\u2581Tom or row"), spelled only when its
        // first piece starts a word of the lists.
        const auto found = flip_only_spellings().find(spelled_word(text_ids, i, end, *whole_words));
        if (found != flip_only_spellings().end()) code = found->second;
      }
      if (code == kAdverbCode) info[i].negating_adverb = true, read = true;
      else if (code != 0) info[i].flip_class = code, read = true;
      if (read)
        for (size_t k = i + 1; k < end; ++k) info[k].unread_rest = true;
    }
  if (whole_words != nullptr)
    for (size_t i = 0; i < length && known; ++i) {
      auto& t = info[i];
      if (t.spelled_rest || (t.word == Lexicon::kNoWord && !t.negator)) continue;
      if (t.spelling && i + 1 < length && info[i + 1].spelled_rest) continue;  // a spelled run read above
      if (t.word != Lexicon::kNoWord && inside_longer_word(i, 1)) t.word = Lexicon::kNoWord;
      if (t.negator && !negating_word(i)) t.negator = false;
    }
  // "isn ' t": the clitic after an apostrophe negates; a lone "t" does not.
  for (size_t i = 1; i < length && known; ++i)
    if (info[i].clitic && info[i - 1].apostrophe) info[i].negator = true;
  return info;
}

// What each token of X finds in Y: best = max_j M_ij (at least -1), soft =
// the softmax (temperature 0.1) mean of its similarities, and the target j*,
// the first j maximizing M_ij + 0.5 [Y's token j is this token].
struct Alignment {
  std::vector<float> best, soft;
  std::vector<uint32_t> target;  // as wide as the cells: align_columns' argmax vectorizes
};

// X = the map's rows. Rows are long (a candidate's tokens): one kernel call
// each, then only the (few) exact positions, with no per-cell dependency chain.
Alignment align_rows(std::span<const float> cells, size_t n, size_t m, std::span<const uint32_t> x_ids,
                     std::span<const uint32_t> y_ids, bool known, kernels::Isa isa) {
  Alignment a{std::vector<float>(n), std::vector<float>(n), std::vector<uint32_t>(n)};
  for (size_t i = 0; i < n; ++i) {
    const float* row = cells.data() + i * m;
    const uint32_t id = known ? x_ids[i] : 0;
    const float row_max = kernels::max_value(row, m, isa);
    float exact_max = -INFINITY;
    size_t exact_arg = m;
    for (size_t j = 0; j < m && known; ++j)
      if (y_ids[j] == id && row[j] > exact_max) exact_max = row[j], exact_arg = j;
    auto first_plain = [&](float v, bool skip_exact) {
      for (size_t j = 0; j < m; ++j)
        if (row[j] == v && !(skip_exact && y_ids[j] == id)) return j;
      return m;
    };
    size_t arg = 0;
    if (exact_arg < m && exact_max + 0.5f > row_max) arg = exact_arg;
    else if (exact_arg < m && exact_max + 0.5f == row_max) arg = std::min(exact_arg, first_plain(row_max, true));
    else arg = first_plain(row_max, false);
    a.best[i] = std::max(-1.0f, row_max);
    a.soft[i] = kernels::softmax_mean(row, row, m, 10.0f, isa);
    a.target[i] = uint32_t(arg);
  }
  return a;
}

// best[j] = max(best[j], row[j]).
void column_max(const float* __restrict row, size_t m, float* __restrict best) {
  for (size_t j = 0; j < m; ++j) best[j] = std::max(best[j], row[j]);
}

// The running argmax down each column of v = row[j] + bonus where ids[j] == id
// (no bonus without ids): best[j] and at[j] move to this row only where v is
// strictly larger, so the first maximizing row wins. Branch-free, so that the
// compiler vectorizes it along the row.
void column_argmax(const float* __restrict row, const uint32_t* __restrict ids, uint32_t id, float bonus, size_t m,
                   uint32_t here, float* __restrict best, uint32_t* __restrict at) {
  for (size_t j = 0; j < m; ++j) {
    const float v = row[j] + (ids != nullptr && ids[j] == id ? bonus : 0.0f);
    const uint32_t take = 0u - uint32_t(v > best[j]);
    best[j] = std::max(best[j], v);
    at[j] = (at[j] & ~take) | (here & take);
  }
}

// X = the map's columns (a query's few tokens each): vectors run along the
// rows, so a short column costs no call of its own.
Alignment align_columns(std::span<const float> cells, size_t n, size_t m, std::span<const uint32_t> row_ids,
                        std::span<const uint32_t> col_ids, bool known, kernels::Isa isa) {
  Alignment a{std::vector<float>(m, -1.0f), std::vector<float>(m), std::vector<uint32_t>(m, 0)};
  std::vector<float> bonus_best(m, -1e30f);
  for (size_t i = 0; i < n; ++i) {
    const float* row = cells.data() + i * m;
    column_max(row, m, a.best.data());
    column_argmax(row, known ? col_ids.data() : nullptr, known ? row_ids[i] : 0, 0.5f, m, uint32_t(i),
                  bonus_best.data(), a.target.data());
  }
  kernels::column_softmax_mean(cells.data(), cells.data(), n, m, 10.0f, a.soft.data(), isa);
  return a;
}

// F2 (SoftAlignVerifier) of the transposed map, without transposing it.
float soft_align_columns(std::span<const float> cells, size_t n, size_t m, float lambda, float tau, kernels::Isa isa) {
  const float ratio = float(m) / float(n);
  std::vector<float> logits(n * m), per_column(m);
  // int32 positions: their conversion to float vectorizes, a size_t's does not.
  for (int32_t i = 0; i < int32_t(n); ++i)
    for (int32_t j = 0; j < int32_t(m); ++j)
      logits[size_t(i) * m + size_t(j)] = cells[size_t(i) * m + size_t(j)] - lambda * std::fabs(float(j) - float(i) * ratio);
  kernels::column_softmax_mean(logits.data(), cells.data(), n, m, 1.0f / tau, per_column.data(), isa);
  double total = 0;
  for (float v : per_column) total += v;
  return float(total / double(m));
}

// Whether the lexicon reads two tokens alike: the same word (or none), both
// negators or neither, both numbers or neither.
bool same_reading(const TokenTable::Info& a, const TokenTable::Info& b) {
  return a.word == b.word && a.negator == b.negator && a.number == b.number;
}

// Token features of X (length n) against Y (length m) from their alignment.
// A negator of X counts only while X holds more of them than Y
// (`x_more_negators`): "no" against "not" is no flip, "not" against nothing is.
DirectionSummary read_direction(const Alignment& alignment, size_t n, size_t m, std::span<const uint32_t> x_ids,
                                std::span<const uint32_t> y_ids, const TokenInfo& x_info, const TokenInfo& y_info,
                                bool x_more_negators, bool whole_words, const Lexicon& lexicon,
                                DirectionFeatures& out) {
  const bool known = !x_ids.empty() && !y_ids.empty();
  out.length = n;
  out.tokens.assign(n * kTokenFeatures, 0.0f);
  out.ids.assign(n, 0);
  out.flipped.assign(n, 0);
  out.negators.assign(n, 0);
  out.matched.clear();  // read_matches fills it (and folded_idf) where minimal_flip reads it
  out.folded_idf.clear();
  std::vector<uint32_t> x_sorted;  // sorted when an antonym first needs it
  // Whether X's token occurs in Y: a scan of Y where X is much shorter (a
  // query against a passage), which costs less than sorting the passage.
  const bool scan_y = known && n * 4 <= m;
  std::vector<uint32_t> y_sorted;
  if (known && !scan_y) y_sorted.assign(y_ids.begin(), y_ids.end()), std::sort(y_sorted.begin(), y_sorted.end());
  const auto in_y = [&](uint32_t id) {
    return scan_y ? std::find(y_ids.begin(), y_ids.end(), id) != y_ids.end()
                  : std::binary_search(y_sorted.begin(), y_sorted.end(), id);
  };
  std::vector<size_t> y_words;  // positions of Y's tokens that have antonyms
  std::vector<uint32_t> y_numbers;  // what Y's numbers are compared by
  for (size_t j = 0; j < m && known; ++j) {
    if (y_info[j].word != Lexicon::kNoWord) y_words.push_back(j);
    if (y_info[j].number) y_numbers.push_back(y_info[j].number_identity);
  }
  std::sort(y_numbers.begin(), y_numbers.end());
  // Every word that is an antonym of one of Y's: X's words are checked against
  // this small sorted set first, and only a hit is looked for among Y's words.
  std::vector<uint32_t> y_opposites;
  for (size_t j : y_words) {
    const auto list = lexicon.antonyms_of(y_info[j].word);
    y_opposites.insert(y_opposites.end(), list.begin(), list.end());
  }
  std::sort(y_opposites.begin(), y_opposites.end());
  y_opposites.erase(std::unique(y_opposites.begin(), y_opposites.end()), y_opposites.end());
  std::vector<long> target(n, 0);
  std::vector<uint8_t> exact_at_target(n, 0);
  DirectionSummary s;
  double idf_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    float* f = out.tokens.data() + i * kTokenFeatures;
    const uint32_t id = known ? x_ids[i] : 0;
    out.ids[i] = id;
    // With whole words a negator met only as a piece of a longer word
    // ("\u2581not" of "\u2581not able") has no exact match there.
    const auto negator_in_y = [&] {
      for (size_t j = 0; j < m; ++j)
        if (y_ids[j] == id && y_info[j].negator) return true;
      return false;
    };
    const bool exact = known && in_y(id) && !(whole_words && x_info[i].negator && !negator_in_y());
    const float best = alignment.best[i];
    const size_t arg = alignment.target[i];
    const float w_idf = x_info[i].idf;
    target[i] = long(arg);
    exact_at_target[i] = known && y_ids[arg] == id;
    f[0] = best;
    f[1] = alignment.soft[i];
    f[2] = exact ? 1.0f : 0.0f;
    f[3] = w_idf;
    f[4] = n > 1 ? float(i) / float(n - 1) : 0.5f;
    f[5] = m > 1 ? float(arg) / float(m - 1) : 0.5f;
    f[6] = f[5] - f[4];
    f[10] = best * (1.0f - f[2]);
    f[11] = 1.0f - best;
    f[12] = y_info[arg].idf;
    if (known && x_info[i].number &&
        !std::binary_search(y_numbers.begin(), y_numbers.end(), x_info[i].number_identity))
      f[13] = 1.0f, ++s.unmatched_numbers;
    if (known && x_info[i].word != Lexicon::kNoWord &&
        std::binary_search(y_opposites.begin(), y_opposites.end(), x_info[i].word))
      for (size_t j : y_words)
        if (lexicon.antonym_words(x_info[i].word, y_info[j].word)) {
          f[14] = 1.0f;
          if (exact) break;
          if (x_sorted.empty()) x_sorted.assign(x_ids.begin(), x_ids.end()), std::sort(x_sorted.begin(), x_sorted.end());
          if (!std::binary_search(x_sorted.begin(), x_sorted.end(), y_ids[j])) {
            out.flipped[i] = DirectionFeatures::kFlippedAntonym;
            break;
          }
        }
    out.negators[i] = !known                      ? 0
                      : x_info[i].negator         ? DirectionFeatures::kNegator
                      : x_info[i].negating_adverb ? DirectionFeatures::kNegatingAdverb
                                                  : 0;
    if (known && x_more_negators && !exact && x_info[i].negator)
      f[14] = 1.0f, out.flipped[i] = DirectionFeatures::kFlippedNegator;
    s.polarity_flips += f[14] != 0.0f;
    s.maxsim += best;
    s.idf_maxsim += w_idf * best;
    s.exact += f[2];
    s.idf_exact += w_idf * f[2];
    idf_sum += w_idf;
    s.worst_missing = std::max(s.worst_missing, double(w_idf) * (1.0 - best));
  }
  // A comparative facing its antonym's of the same degree that X lacks
  // ("bigger" / "smaller"), or a word of a flip-only class facing one of
  // another class of its group ("today" / "tomorrow", "lacks" / "has"): for
  // minimal_flip only, no network input reads them.
  const auto opposed = [&](const TokenTable::Info& x, const TokenTable::Info& y) {
    if (x.flip_class != 0) return y.flip_class != 0 && x.flip_class / 8 == y.flip_class / 8 && x.flip_class != y.flip_class;
    return y.comparative != Lexicon::kNoWord && y.degree == x.degree && lexicon.antonym_words(x.comparative, y.comparative);
  };
  for (size_t i = 0; i < n && known; ++i) {
    if (out.flipped[i] != 0 || (x_info[i].comparative == Lexicon::kNoWord && x_info[i].flip_class == 0) ||
        out.tokens[i * kTokenFeatures + 2] != 0.0f)
      continue;
    for (size_t j = 0; j < m; ++j) {
      if (!opposed(x_info[i], y_info[j])) continue;
      if (x_sorted.empty()) x_sorted.assign(x_ids.begin(), x_ids.end()), std::sort(x_sorted.begin(), x_sorted.end());
      if (std::binary_search(x_sorted.begin(), x_sorted.end(), y_ids[j])) continue;
      out.flipped[i] = DirectionFeatures::kFlippedAntonym, ++s.unread_flips;
      break;
    }
  }
  // The later pieces of a flipped antonym spelled in several ("able" of
  // "\u2581dis able", "ter" of "\u2581hot ter") are flipped with it.
  for (size_t i = 0; i + 1 < n && known; ++i) {
    if (out.flipped[i] != DirectionFeatures::kFlippedAntonym) continue;
    for (size_t k = i + 1; k < n && (x_info[k].spelled_rest || x_info[k].unread_rest); ++k)
      if (out.tokens[k * kTokenFeatures + 2] == 0.0f) out.flipped[k] = DirectionFeatures::kFlippedSpelling;
  }
  // The stem and apostrophe of a contracted negator ("Don" and "'" of "Don ' t")
  // belong to it: a text that drops the negation drops them too.
  for (size_t i = 2; i < n && known; ++i)
    if (x_info[i].clitic && x_info[i].negator && x_info[i - 1].apostrophe)
      for (size_t k : {i - 2, i - 1})
        if (!out.negators[k]) out.negators[k] = DirectionFeatures::kContractionPart;
  // So do the later pieces of a negating adverb ("ly" of "\u2581hard ly").
  for (size_t i = 0; i + 1 < n && known; ++i)
    if (out.negators[i] == DirectionFeatures::kNegatingAdverb)
      for (size_t k = i + 1; k < n && x_info[k].unread_rest; ++k) out.negators[k] = DirectionFeatures::kContractionPart;
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    float* f = out.tokens.data() + i * kTokenFeatures;
    if (i > 0) {
      const long step = target[i] - target[i - 1];
      f[7] = float(std::clamp(step, -3L, 3L)) / 3.0f;
      f[8] = step == 1 ? 1.0f : 0.0f;
      kept += step == 1;
    }
    if (i + 1 < n) f[9] = target[i + 1] - target[i] == 1 ? 1.0f : 0.0f;
  }
  // Kendall tau between X positions and their exact-match targets.
  std::vector<size_t> matched;
  for (size_t i = 0; i < n; ++i)
    if (exact_at_target[i]) matched.push_back(i);
  if (matched.size() >= 2) {
    long agree = 0, pairs = 0;
    for (size_t p = 0; p < matched.size(); ++p)
      for (size_t q = p + 1; q < matched.size(); ++q) {
        const long d = target[matched[q]] - target[matched[p]];
        agree += d > 0 ? 1 : d < 0 ? -1 : 0;
        ++pairs;
      }
    s.tau = double(agree) / double(pairs);
  }
  s.maxsim /= double(n);
  s.exact /= double(n);
  s.idf_maxsim /= std::max(idf_sum, 1e-9);
  s.idf_exact /= std::max(idf_sum, 1e-9);
  s.kept = n > 1 ? double(kept) / double(n - 1) : 1.0;
  s.target = std::move(target);
  return s;
}

// DirectionFeatures::matched of X (known identities) against Y: matched
// exactly (feature 2), or aligned (j*, `target`) to this piece in another case
// ("Open" to "open") that the lexicon reads alike: "NO", which no word list
// holds, is no negator beside "No".
void read_matches(std::span<const long> target, std::span<const uint32_t> x_ids, std::span<const uint32_t> y_ids,
                  const TokenInfo& x_info, const TokenInfo& y_info, const text::CaseFolds& folds,
                  const TokenTable& tokens, DirectionFeatures& out) {
  out.matched.assign(out.length, 0);
  out.folded_idf.resize(out.length);
  for (size_t i = 0; i < out.length; ++i) {
    const size_t j = size_t(target[i]);
    const uint32_t folded = folds.fold(x_ids[i]);
    out.folded_idf[i] = folded == x_ids[i] ? x_info[i].idf : std::min(x_info[i].idf, tokens.info(folded).idf);
    out.matched[i] = out.tokens[i * kTokenFeatures + 2] >= 0.5f ||
                     (folded == folds.fold(y_ids[j]) && same_reading(x_info[i], y_info[j]));
  }
}

// The features of a checked map, its columns already in reading order.
AlignmentFeatures pair_features(const SimilarityMap& map, const PairContext& context, const TokenTable& tokens,
                                const Lexicon& lexicon, const text::CaseFolds* case_folds,
                                const text::SurfaceSpellings* whole_words) {
  const size_t n = map.rows(), m = map.cols();
  const auto values = map.values();
  const bool known = !context.query_ids.empty() && !context.candidate_ids.empty();
  const auto isa = kernels::best_isa();
  // Comparatives and flip-only words count only for minimal_flip, which texts far apart in length
  // never are (a query and a passage): they are not read there.
  const bool comparatives = n <= 2 * m + 8 && m <= 2 * n + 8;
  const auto a_info = token_info(context.query_ids, n, known, tokens, lexicon, whole_words, comparatives);
  const auto b_info = token_info(context.candidate_ids, m, known, tokens, lexicon, whole_words, comparatives);
  auto negators = [](const TokenInfo& info) {
    return std::count_if(info.begin(), info.end(), [](const TokenTable::Info& t) { return t.negator; });
  };
  const auto a_negators = negators(a_info), b_negators = negators(b_info);
  auto adverbs = [](const TokenInfo& info) {
    return std::count_if(info.begin(), info.end(), [](const TokenTable::Info& t) { return t.negating_adverb; });
  };
  AlignmentFeatures out;
  auto fwd = read_direction(align_rows(values, n, m, context.query_ids, context.candidate_ids, known, isa), n, m,
                            context.query_ids, context.candidate_ids, a_info, b_info, a_negators > b_negators,
                            whole_words != nullptr, lexicon,
                            out.forward);
  auto bwd = read_direction(align_columns(values, n, m, context.query_ids, context.candidate_ids, known, isa), m, n,
                            context.candidate_ids, context.query_ids, b_info, a_info, b_negators > a_negators,
                            whole_words != nullptr, lexicon,
                            out.backward);
  // Matches ignoring case only where minimal_flip reads them: a polarity flip or a negator more
  // (elsewhere it stops before), and some piece folds (else feature 2 says the same).
  if (known && case_folds != nullptr && !case_folds->empty() &&
      (a_negators != b_negators || adverbs(a_info) != adverbs(b_info) || fwd.polarity_flips > 0 || bwd.polarity_flips > 0 || fwd.unread_flips > 0 ||
       bwd.unread_flips > 0)) {
    read_matches(fwd.target, context.query_ids, context.candidate_ids, a_info, b_info, *case_folds, tokens,
                 out.forward);
    read_matches(bwd.target, context.candidate_ids, context.query_ids, b_info, a_info, *case_folds, tokens,
                 out.backward);
  }
  const SoftAlignVerifier f2;
  const float f2_fwd = f2.score(map), f2_bwd = soft_align_columns(values, n, m, f2.lambda(), f2.tau(), isa);
  const bool pooled_known = std::isfinite(context.pooled_cosine);
  auto mean = [](double x, double y) { return float((x + y) / 2); };
  auto low = [](double x, double y) { return float(std::min(x, y)); };
  out.pair = {pooled_known ? context.pooled_cosine : 0.0f,
              pooled_known ? 1.0f : 0.0f,
              mean(fwd.maxsim, bwd.maxsim),
              low(fwd.maxsim, bwd.maxsim),
              mean(fwd.idf_maxsim, bwd.idf_maxsim),
              low(fwd.idf_maxsim, bwd.idf_maxsim),
              mean(fwd.exact, bwd.exact),
              low(fwd.exact, bwd.exact),
              mean(fwd.idf_exact, bwd.idf_exact),
              low(fwd.idf_exact, bwd.idf_exact),
              float(std::abs(std::log(double(n) / double(m)))),
              float(std::log(1.0 + double(n + m)) / 5.0),
              mean(fwd.tau, bwd.tau),
              mean(fwd.kept, bwd.kept),
              mean(f2_fwd, f2_bwd),
              float(std::max(fwd.worst_missing, bwd.worst_missing)),
              mean(fwd.worst_missing, bwd.worst_missing),
              float(std::min<size_t>(std::max(fwd.unmatched_numbers, bwd.unmatched_numbers), 2)) / 2.0f,
              float(std::min<size_t>(std::max(fwd.polarity_flips, bwd.polarity_flips), 2)) / 2.0f};
  return out;
}

}  // namespace

const std::unordered_set<uint32_t>& coordinator_pieces() {
  static const std::unordered_set<uint32_t> pieces = [] {
    std::unordered_set<uint32_t> set;
    for (const char* word : {"and", "or"})
      for (const auto& piece : piece_forms(word)) set.insert(token_identity(piece));
    return set;
  }();
  return pieces;
}

std::vector<size_t> coordination_order(std::span<const uint32_t> x_ids, std::span<const uint32_t> y_ids) {
  constexpr size_t kLongest = 4;  // pieces per conjunct
  const size_t n = x_ids.size(), m = y_ids.size();
  // The coordinators of the shorter text (a rerank's query), found by hash;
  // the longer text is then searched by plain comparison.
  std::vector<uint32_t> present;
  for (uint32_t id : n <= m ? x_ids : y_ids)
    if (coordinator_pieces().count(id) != 0 && std::find(present.begin(), present.end(), id) == present.end())
      present.push_back(id);
  std::vector<size_t> order;
  if (present.empty()) return order;
  std::vector<uint8_t> moved(m, 0);
  auto same = [](std::span<const uint32_t> a, std::span<const uint32_t> b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  };
  // Y's pieces [at - length, at) and [at + 1, at + 1 + length), empty past an end.
  auto y_before = [&](size_t at, size_t length) {
    return at >= length ? y_ids.subspan(at - length, length) : y_ids.first(0);
  };
  auto y_after = [&](size_t at, size_t length) {
    return at + 1 + length <= m ? y_ids.subspan(at + 1, length) : y_ids.first(0);
  };
  std::vector<size_t> y_at;  // where Y holds X's coordinator
  for (size_t k = 1; k + 1 < n; ++k) {
    if (std::find(present.begin(), present.end(), x_ids[k]) == present.end()) continue;
    y_at.clear();
    for (size_t j = 1; j + 1 < m; ++j)
      if (y_ids[j] == x_ids[k]) y_at.push_back(j);
    bool found = false;
    // Longest conjuncts first: "by value or by reference" swaps as two
    // two-piece conjuncts, not as "value or by".
    for (size_t total = 2 * kLongest; total >= 2 && !found; --total)
      for (size_t p = std::min(kLongest, total - 1); p >= 1 && !found; --p) {
        const size_t q = total - p;
        if (q > kLongest || p > k || k + 1 + q > n) continue;
        const auto first = x_ids.subspan(k - p, p), second = x_ids.subspan(k + 1, q);
        if (same(first, second)) continue;
        // Y reads X's order somewhere: nothing to undo.
        if (std::any_of(y_at.begin(), y_at.end(),
                        [&](size_t c) { return same(y_before(c, p), first) && same(y_after(c, q), second); }))
          continue;
        for (size_t c : y_at) {
          if (!same(y_before(c, q), second) || !same(y_after(c, p), first)) continue;
          const size_t s = c - q, span = q + 1 + p;
          if (std::any_of(moved.begin() + long(s), moved.begin() + long(s + span), [](uint8_t v) { return v; }))
            continue;
          if (order.empty()) order.resize(m), std::iota(order.begin(), order.end(), size_t(0));
          // Y holds "second coordinator first" from s: read it as "first coordinator second".
          for (size_t t = 0; t < p; ++t) order[s + t] = c + 1 + t;
          order[s + p] = c;
          for (size_t t = 0; t < q; ++t) order[s + p + 1 + t] = s + t;
          std::fill(moved.begin() + long(s), moved.begin() + long(s + span), uint8_t(1));
          found = true;
          break;
        }
      }
  }
  return order;
}

AlignmentFeatures alignment_features(const SimilarityMap& map, const PairContext& context, const IdfTable& idf,
                                     const Lexicon& lexicon, const text::CaseFolds* case_folds,
                                     const text::SurfaceSpellings* whole_words) {
  return alignment_features(map, context, TokenTable(idf, lexicon), lexicon, case_folds, whole_words);
}

AlignmentFeatures alignment_features(const SimilarityMap& map, const PairContext& context, const TokenTable& tokens,
                                     const Lexicon& lexicon, const text::CaseFolds* case_folds,
                                     const text::SurfaceSpellings* whole_words) {
  VERITY_CHECK(!map.empty(), ConfigError, "alignment features: empty map");
  const size_t n = map.rows(), m = map.cols();
  VERITY_CHECK(context.query_ids.empty() || context.query_ids.size() == n, ConfigError,
               "alignment features: ", context.query_ids.size(), " query token ids for a map of ", n, " rows");
  VERITY_CHECK(context.candidate_ids.empty() || context.candidate_ids.size() == m, ConfigError,
               "alignment features: ", context.candidate_ids.size(), " candidate token ids for a map of ", m,
               " columns");
  const bool known = !context.query_ids.empty() && !context.candidate_ids.empty();
  if (!known) return pair_features(map, context, tokens, lexicon, case_folds, whole_words);
  // One text is read in the other's order, the same one whichever is the query,
  // so that F5(a, b) stays F5(b, a): the text whose identities sort later.
  const auto& q = context.query_ids;
  const auto& c = context.candidate_ids;
  const bool reorder_query = std::lexicographical_compare(c.begin(), c.end(), q.begin(), q.end());
  auto order = reorder_query ? coordination_order(c, q) : coordination_order(q, c);
  if (order.empty()) return pair_features(map, context, tokens, lexicon, case_folds, whole_words);
  const auto values = map.values();
  std::vector<float> cells(n * m);
  std::vector<uint32_t> ids(order.size());
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j)
      cells[i * m + j] = reorder_query ? values[order[i] * m + j] : values[i * m + order[j]];
  const auto& moved = reorder_query ? q : c;
  for (size_t k = 0; k < order.size(); ++k) ids[k] = moved[order[k]];
  PairContext reordered = context;
  (reorder_query ? reordered.query_ids : reordered.candidate_ids) = ids;
  return pair_features(SimilarityMap(n, m, std::move(cells)), reordered, tokens, lexicon, case_folds,
                       whole_words);
}

std::vector<float> pooled_comparison(std::span<const float> a, std::span<const float> b) {
  VERITY_CHECK(a.size() == b.size(), ConfigError, "pooled comparison: vectors of ", a.size(), " and ", b.size(),
               " values");
  if (a.empty()) return {};
  double na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) na += double(a[i]) * a[i], nb += double(b[i]) * b[i];
  if (!(na > 0 && nb > 0 && std::isfinite(na) && std::isfinite(nb))) return {};
  const float ia = float(1.0 / std::sqrt(na)), ib = float(1.0 / std::sqrt(nb));
  std::vector<float> out(2 * a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const float u = a[i] * ia, v = b[i] * ib;
    out[i] = u * v;
    out[a.size() + i] = std::abs(u - v);
  }
  return out;
}

bool identity_signal(const AlignmentFeatures& f) {
  if (f.pair.size() != kPairFeatures) return true;  // unknown: keep the gate
  constexpr float kAll = 1.0f - 1e-4f;
  // Most tokens matched exactly both ways, in another order: a swap, also one
  // with a few words changed (PAWS's), which a band must not release.
  constexpr float kMostly = 0.6f;
  const bool reordered = f.pair[7] >= kMostly && f.pair[12] < kAll;  // exact share min, order agreement
  return f.pair[17] > 0 || f.pair[18] > 0 || reordered;
}

bool minimal_flip(const AlignmentFeatures& f, float common_idf) {
  if (f.pair.size() != kPairFeatures) return false;
  const DirectionFeatures* sides[2] = {&f.forward, &f.backward};
  // Features without per-token negators (built by hand) count the flagged extra negators instead.
  const bool counts_known = f.forward.negators.size() == f.forward.length && f.backward.negators.size() == f.backward.length;
  // Without per-token matches (built by hand, or no case folds) a match is feature 2's: exact, case included.
  const bool matches_known = f.forward.matched.size() == f.forward.length && f.backward.matched.size() == f.backward.length;
  size_t negators[2] = {0, 0}, flagged_negators = 0;
  for (int side = 0; side < 2; ++side) {
    const auto& d = *sides[side];
    if (d.tokens.size() != d.length * kTokenFeatures || d.flipped.size() != d.length) return false;
    if (counts_known)
      negators[side] = size_t(std::count_if(d.negators.begin(), d.negators.end(), [](uint8_t k) {
        return k == DirectionFeatures::kNegator || k == DirectionFeatures::kNegatingAdverb;
      }));
    flagged_negators += size_t(std::count(d.flipped.begin(), d.flipped.end(), DirectionFeatures::kFlippedNegator));
  }
  const size_t extra_negators =
      counts_known ? std::max(negators[0], negators[1]) - std::min(negators[0], negators[1]) : flagged_negators;
  const auto flipped_antonym = [](const DirectionFeatures& d) {
    return std::find(d.flipped.begin(), d.flipped.end(), DirectionFeatures::kFlippedAntonym) != d.flipped.end();
  };
  if (f.pair[18] <= 0 && extra_negators == 0 && !flipped_antonym(f.forward) && !flipped_antonym(f.backward))
    return false;
  // An opposite pair flags a token on each side.
  size_t antonyms[2] = {0, 0};
  for (int side = 0; side < 2; ++side) {
    const auto& d = *sides[side];
    // The text with more negators: its negators may all be matched ("not ... not" against
    // "not"), each to the other's, so they are counted, not placed; the rest of a contracted
    // one goes with it ("Don't take" / "Take").
    const bool more_negators = negators[side] > negators[1 - side];
    float last_aligned = -1.0f;
    for (size_t t = 0; t < d.length; ++t) {
      const float* x = d.tokens.data() + t * kTokenFeatures;
      const bool exact = matches_known ? d.matched[t] != 0 : x[2] >= 0.5f;
      const bool common = (d.folded_idf.size() == d.length ? d.folded_idf[t] : x[3]) < common_idf;
      const bool counted = more_negators && d.negators[t] != 0;
      if (exact && !counted) {  // the same words in another order: a converse ("A below B" / "B above A"), not a flip
        if (x[5] < last_aligned - 1e-6f) return false;
        last_aligned = x[5];
      }
      antonyms[side] += d.flipped[t] == DirectionFeatures::kFlippedAntonym;
      if (!exact && !d.flipped[t] && !common && !counted) return false;
    }
  }
  return (std::max(antonyms[0], antonyms[1]) + extra_negators) % 2 == 1;
}

}  // namespace verity::verify
