// Rule-based generators that need no parse: spatial/temporal relations and quantities.
#include "perturb/generators.hpp"

#include <array>
#include <cmath>
#include <cstdio>

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

// "left"/"right" are also a verb ("he left") and an entitlement ("the right to vote"):
// only treat them as directions next to "of", "side", "hand", or after "to"/"on"/"at the".
bool direction_context(const std::vector<WordSpan>& w, size_t i) {
  const std::string next = i + 1 < w.size() ? w[i + 1].lower : "";
  const std::string prev = i > 0 ? w[i - 1].lower : "";
  if (next == "of" || next == "side" || next == "hand" || next == "wing" || next == "arm" ||
      next == "leg" || next == "eye" || next == "ear" || next == "ventricle" || next == "hemisphere")
    return true;
  return prev == "the" && i >= 2 && (w[i - 2].lower == "to" || w[i - 2].lower == "on" || w[i - 2].lower == "at");
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
    for (size_t i = 0; i < w.size(); ++i) {
      for (const auto& rel : relations()) {
        if (i + rel.words.size() > w.size()) continue;
        bool match = true;
        for (size_t k = 0; k < rel.words.size(); ++k)
          if (w[i + k].lower != rel.words[k]) match = false;
        if (!match) continue;
        if ((rel.words[0] == "left" || rel.words[0] == "right") && !direction_context(w, i)) continue;
        hits.push_back({i, i + rel.words.size() - 1, &rel});
        i += rel.words.size() - 1;
        break;
      }
    }
    if (hits.empty()) {
      set_skip_reason("no_relation_word");
      return std::nullopt;
    }
    const Hit& h = hits[rng.below(hits.size())];
    size_t b = w[h.first].begin, e = w[h.last].end;
    std::string repl = detail::match_case(s.substr(b, w[h.first].end - b), h.rel->opposite);
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
