// Rule-based generators that need no parse: spatial/temporal relations and quantities.
#include "perturb/generators.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string_view>

#include "perturb/edit.hpp"

namespace verity::perturb {
namespace {

using detail::WordSpan;

struct Relation {
  std::vector<std::string> words;  // lowercase, consecutive words
  std::string opposite;
};

// Each entry reverses a spatial or temporal relation. Both directions are listed
// so the table reads as the rule set (docs/PERTURB.md quotes it).
const std::vector<Relation>& relations() {
  static const std::vector<Relation> table = {
      {{"in", "front", "of"}, "behind"}, {{"behind"}, "in front of"},
      {{"left"}, "right"},               {{"right"}, "left"},
      {{"above"}, "below"},              {{"below"}, "above"},
      {{"over"}, "under"},               {{"under"}, "over"},
      {{"beneath"}, "above"},            {{"underneath"}, "above"},
      {{"before"}, "after"},             {{"after"}, "before"},
      {{"earlier"}, "later"},            {{"later"}, "earlier"},
      {{"inside"}, "outside"},           {{"outside"}, "inside"},
      {{"north"}, "south"},              {{"south"}, "north"},
      {{"east"}, "west"},                {{"west"}, "east"},
      {{"northern"}, "southern"},        {{"southern"}, "northern"},
      {{"eastern"}, "western"},          {{"western"}, "eastern"},
      {{"top"}, "bottom"},               {{"bottom"}, "top"},
      {{"upper"}, "lower"},              {{"lower"}, "upper"},
      {{"ascending"}, "descending"},     {{"descending"}, "ascending"},
      {{"upstream"}, "downstream"},      {{"downstream"}, "upstream"},
      {{"inner"}, "outer"},              {{"outer"}, "inner"},
      {{"preceding"}, "following"},      {{"following"}, "preceding"},
  };
  return table;
}

bool in(const std::string& word, std::initializer_list<std::string_view> set) {
  for (auto w : set)
    if (word == w) return true;
  return false;
}

bool is_number_word(const std::string& w) {
  if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0]))) return true;
  return in(w, {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "million"});
}

// Words next to the relation, with "" past the sentence or across punctuation
// ("money left over." has no word after "over").
struct Neighbours {
  std::string prev, next, next2;
};
Neighbours neighbours(std::string_view s, const std::vector<WordSpan>& w, size_t first, size_t last) {
  auto joined = [&](size_t a, size_t b) {  // only spaces between word a and word b
    for (size_t k = w[a].end; k < w[b].begin; ++k)
      if (s[k] != ' ') return false;
    return true;
  };
  Neighbours n;
  if (first > 0 && joined(first - 1, first)) n.prev = w[first - 1].lower;
  if (last + 1 < w.size() && joined(last, last + 1)) {
    n.next = w[last + 1].lower;
    if (last + 2 < w.size() && joined(last + 1, last + 2)) n.next2 = w[last + 2].lower;
  }
  return n;
}

bool capitalized(std::string_view s, const WordSpan& word) {
  return std::isupper(static_cast<unsigned char>(s[word.begin])) != 0;
}

// Whether a matched relation word is used as a reversible spatial or temporal
// relation here. The hand-checked sample (docs/perturb_checklist.md) showed the
// cases rejected below: names (Middle East, No Child Left Behind), "over" as
// during / more than / control over, rank and comparative senses (bottom 55,
// lower rates), locative "before" (testified before Congress), phrasal verbs
// (go after, left over) and idioms (never before).
bool relation_use(std::string_view s, const std::vector<WordSpan>& w, size_t first, size_t last,
                  const Relation& rel) {
  const std::string& word = w[first].lower;
  const Neighbours n = neighbours(s, w, first, last);
  // Both ends of a coordinated pair ("left and right", "outer- and inner") would
  // become the same word.
  const std::string opposite_key = rel.opposite == "in front of" ? "front" : rel.opposite;
  for (size_t k = first >= 3 ? first - 3 : 0; k < std::min(w.size(), last + 4); ++k) {
    if (k >= first && k <= last) continue;
    const std::string& other = w[k].lower;
    if (other == opposite_key || other.rfind(opposite_key + "-", 0) == 0 ||
        other.find("-" + opposite_key) != std::string::npos)
      return false;
  }
  const bool compass = in(word, {"north", "south", "east", "west", "northern", "southern", "eastern", "western"});
  // Part of a name: capitalized inside the sentence, or a compass word opening
  // one ("North Korea ...", "West Nile virus").
  if (first > 0 && capitalized(s, w[first])) return false;
  if (compass && last + 1 < w.size() && capitalized(s, w[last + 1]) && n.next != "") return false;
  if (compass && (n.prev == "middle" || n.prev == "far" || n.prev == "near")) return false;

  // "year after year", "issue before issue", "above all", "rose above" are idioms.
  if (!n.prev.empty() && n.prev == n.next) return false;
  if (n.next == "all" || (word == "above" && in(n.prev, {"rise", "rises", "rose", "risen", "rising"}))) return false;
  if (word == "left" || word == "right") {
    // "the right of every person" is an entitlement; "to the right of" a direction.
    const bool after_article = n.prev == "the" || n.prev == "a";
    const bool direction_phrase = after_article && first >= 2 && in(w[first - 2].lower, {"to", "on", "at"});
    if (after_article && !direction_phrase) return false;
    if (in(n.next, {"of", "side", "hand", "wing", "arm", "leg", "eye", "ear", "ventricle", "hemisphere", "corner",
                    "edge", "half", "lane", "turn"}))
      return true;
    // "to/on/at the right", but not "come to the right country" (right = correct).
    if (!direction_phrase) return false;
    return word == "left" || n.next.empty() ||
           in(n.next, {"and", "or", "but", "is", "are", "was", "were", "at", "in", "on", "to", "from", "with", "by",
                       "as", "while", "when", "where", "then", "there", "above", "below", "under", "over", "near",
                       "about", "diagonally", "of"});
  }
  if (word == "over" || word == "under") {
    // Mostly non-spatial in running text (during, more than, control over, under the
    // law, under God, in preference to): only "over/under" + determiner + a concrete
    // noun, or a one-letter name ("X is over Y").
    const bool letter_name = last + 1 < w.size() && w[last + 1].lower.size() == 1 && capitalized(s, w[last + 1]);
    if (letter_name) return true;
    if (!in(n.next, {"the", "a", "an", "his", "her", "its", "their", "our", "my", "your", "this", "that", "these",
                     "those"}))
      return false;
    if (n.next2.empty() || is_number_word(n.next2) ||
        in(n.next2, {"there", "here", "time", "way", "next", "past", "last", "coming", "previous", "following",
                     "course", "years", "decade", "decades", "century", "period", "weekend", "summer", "winter",
                     "long", "short", "rest", "life", "lifetime", "day", "days", "night", "weeks", "months",
                     "hours", "generations", "centuries", "control", "influence", "direction", "supervision",
                     "leadership", "auspices", "terms", "law", "laws", "act", "rule", "rules", "guidance", "care",
                     "age", "threat", "pressure", "umbrella", "name", "impression", "assumption", "mandate",
                     "program", "plan", "agreement", "treaty", "contract", "license", "condition", "conditions",
                     "circumstances", "oath", "penalty", "same", "other", "previous", "current", "new", "old",
                     "objections", "objection", "protest"}))
      return false;
    return !in(n.prev, {"control", "power", "authority", "influence", "jurisdiction", "sovereignty", "say",
                        "left", "take", "takes", "took", "taken", "taking", "win", "won", "victory", "priority",
                        "preference", "advantage", "edge", "debate", "concern", "concerns", "dispute", "fight",
                        "struggle", "go", "went", "gone", "going", "hand", "handed", "turn", "turned", "turning",
                        "fall", "fell", "pass", "passed", "get", "got", "think", "thought", "all", "chosen",
                        "choose", "chose", "prevail", "prevailed", "triumph", "triumphed", "worry", "worried",
                        "operate", "operating", "operates", "operated", "fought", "argue", "argued", "sign",
                        "signed", "presided", "preside", "presides", "reign", "reigned", "rule", "ruled"});
  }
  if (word == "before" || word == "after") {
    // "never before."; "after 224 years" is a duration, not a point in time
    if (n.next.empty() ||
        (is_number_word(n.next) && in(n.next2, {"year", "years", "month", "months", "week", "weeks", "day", "days",
                                                "hour", "hours", "minute", "minutes", "decade", "decades",
                                                "century", "centuries"})))
      return false;
    if (in(n.prev, {"never", "ever", "go", "goes", "went", "gone", "going", "come", "comes", "came", "coming",
                    "look", "looks", "looked", "looking", "named", "take", "takes", "took", "taken", "testify",
                    "testified", "testifies", "appear", "appears", "appeared", "stand", "stands", "stood",
                    "standing", "lie", "lies", "lay", "bow", "bowed", "kneel", "knelt", "bring", "brought",
                    "run", "ran", "chase", "chased", "seek", "sought", "lust", "hanker"}))
      return false;
    // Locative "before you", "before Congress": a person or body, not an event.
    if (in(n.next, {"you", "me", "us", "him", "her", "them", "god", "congress", "court", "committee", "senate",
                    "house", "judge", "jury", "parliament", "council", "board", "audience", "eyes"}))
      return false;
    return !(word == "before" && n.next == "you" && n.next2 == "know");
  }
  if (word == "lower") {  // mostly a comparative ("lower rates") or a verb ("lower the rate")
    return in(n.next, {"left", "right", "lefthand", "righthand", "position", "positions", "part", "parts", "half", "end", "side", "level", "levels", "layer",
                       "layers", "floor", "deck", "lip", "jaw", "lobe", "lobes", "limb", "limbs", "leg", "legs",
                       "body", "back", "abdomen", "bound", "boundary", "edge", "corner", "panel", "row",
                       "quadrant", "portion", "reaches", "surface", "chamber", "bank", "shelf", "branch"});
  }
  if (word == "top" || word == "bottom")  // before a noun mostly a rank ("top commanders", "bottom rate")
    return n.next.empty() || in(n.next, {"of", "left", "right", "lefthand", "righthand", "position", "positions",
                                         "row", "rows", "shelf", "layer", "layers", "half", "corner", "edge",
                                         "panel", "floor", "drawer", "surface", "side", "and", "or"});
  if (word == "earlier" || word == "later") return !in(n.next, {"today", "tonight", "this", "on", "than"});
  if (word == "preceding" || word == "following")  // "they were following him" is a verb
    return !in(n.prev, {"is", "are", "was", "were", "be", "been", "am", "not", "by"});
  if (word == "behind" || word == "in") {  // "left behind", "the idea behind" are not locations
    for (size_t k = first >= 3 ? first - 3 : 0; k < first; ++k)
      if (in(w[k].lower, {"leave", "leaves", "leaving", "left"})) return false;
    return !n.next.empty() &&
           !in(n.prev, {"left", "leave", "leaves", "leaving", "fall", "fell", "fallen", "lag", "lagged", "lagging",
                        "idea", "ideas", "reason", "reasons", "logic", "thinking", "force", "forces", "motive",
                        "motives", "story", "principle", "principles", "science", "rationale", "mind", "minds",
                        "purpose", "intent", "spirit", "momentum", "weight", "support", "united", "unite",
                        "rally", "rallied", "stand", "stood", "stands", "get", "got", "put", "be"});
  }
  return true;
}

class SpatialPerturber final : public Perturber {
 public:
  std::optional<Perturbation> apply(std::string_view s, Rng& rng) const override {
    auto w = detail::split_words(s);
    struct Hit {
      size_t first, last;
      const Relation* rel;
    };
    std::vector<Hit> hits;
    size_t seen = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      for (const auto& rel : relations()) {
        if (i + rel.words.size() > w.size()) continue;
        bool match = true;
        for (size_t k = 0; k < rel.words.size(); ++k)
          if (w[i + k].lower != rel.words[k]) match = false;
        if (!match) continue;
        ++seen;
        if (!relation_use(s, w, i, i + rel.words.size() - 1, rel)) break;
        hits.push_back({i, i + rel.words.size() - 1, &rel});
        i += rel.words.size() - 1;
        break;
      }
    }
    if (hits.empty()) {
      set_skip_reason(seen ? "no_relation_use" : "no_relation_word");
      return std::nullopt;
    }
    const Hit& h = hits[rng.below(hits.size())];
    size_t b = w[h.first].begin, e = w[h.last].end;
    std::string repl = detail::match_case(s.substr(b, w[h.first].end - b), h.rel->opposite);
    // "an earlier time" -> "a later time": the article follows the new word. Lowercase
    // only: in "the object A below" the letter names an object.
    if (h.first > 0) {
      const WordSpan& prev = w[h.first - 1];
      const std::string_view prev_text = s.substr(prev.begin, prev.end - prev.begin);
      if ((prev_text == "a" || prev_text == "an") && s.substr(prev.end, b - prev.end) == " ") {
        size_t article_begin = b;
        std::string agreed = detail::with_article(s, prev.begin, prev.end, b, repl, article_begin);
        // The span grows to the article only where the article changes.
        if (!agreed.starts_with(std::string(prev_text) + " ")) {
          b = article_begin;
          repl = std::move(agreed);
        }
      }
    }
    return detail::replace_span(s, b, e, repl, "spatial");
  }
  std::string spec() const override { return "spatial"; }
};

const std::array<const char*, 13> kNumberWords = {"zero", "one", "two", "three", "four",
                                                   "five", "six", "seven", "eight", "nine",
                                                   "ten", "eleven", "twelve"};

// A new value that differs visibly but keeps the number's form: integers stay
// integers (years move by a few years), decimals keep their decimals.
std::string changed_number(std::string_view digits, Rng& rng) {
  std::string plain;
  for (char c : digits)
    if (c != ',') plain += c;
  auto dot = plain.find('.');
  int decimals = dot == std::string::npos ? 0 : static_cast<int>(plain.size() - dot - 1);
  double v = std::stod(plain);
  bool year_like = decimals == 0 && plain.size() == 4 && v >= 1800 && v <= 2100;
  double nv;
  if (year_like) {
    nv = v + static_cast<double>(1 + rng.below(10)) * (rng.below(2) ? 1 : -1);
  } else {
    static const double factors[] = {0.5, 2.0, 3.0, 0.25, 10.0, 0.1, 1.5};
    nv = v * factors[rng.below(std::size(factors))];
    if (decimals == 0) nv = std::round(nv);
    if (nv == v || (decimals == 0 && nv < 2)) nv = v + 2 + static_cast<double>(rng.below(8));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, nv);
  return buf;
}

class NumericPerturber final : public Perturber {
 public:
  std::optional<Perturbation> apply(std::string_view s, Rng& rng) const override {
    auto w = detail::split_words(s);
    std::vector<size_t> cands;
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string& t = w[i].lower;
      bool digits = !t.empty() && std::isdigit(static_cast<unsigned char>(t[0]));
      for (char c : t)
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != ',') digits = false;
      // "1" and "one" would need the noun's number changed too; skip them.
      if (digits && t != "1" && t != "0") cands.push_back(i);
      for (size_t k = 2; k < kNumberWords.size(); ++k)
        if (t == kNumberWords[k]) cands.push_back(i);
    }
    if (cands.empty()) {
      set_skip_reason("no_quantity");
      return std::nullopt;
    }
    const WordSpan& ws = w[cands[rng.below(cands.size())]];
    std::string_view orig = s.substr(ws.begin, ws.end - ws.begin);
    std::string repl;
    if (std::isdigit(static_cast<unsigned char>(ws.lower[0]))) {
      repl = changed_number(orig, rng);
    } else {
      size_t k;
      for (k = 2; k < kNumberWords.size() && ws.lower != kNumberWords[k]; ++k) {
      }
      size_t nk = 2 + rng.below(kNumberWords.size() - 3);  // 2..11, skipping k
      if (nk >= k) ++nk;
      repl = detail::match_case(orig, kNumberWords[nk]);
    }
    return detail::replace_span(s, ws.begin, ws.end, repl, "numeric");
  }
  std::string spec() const override { return "numeric"; }
};

}  // namespace

std::unique_ptr<Perturber> make_spatial_perturber() { return std::make_unique<SpatialPerturber>(); }
std::unique_ptr<Perturber> make_numeric_perturber() { return std::make_unique<NumericPerturber>(); }

}  // namespace verity::perturb
