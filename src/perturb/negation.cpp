// Negation: remove an existing not/n't/never, else add "not" (with do-support),
// or swap an adjective for its WordNet antonym.
#include <map>

#include "perturb/edit.hpp"
#include "perturb/generators.hpp"
#include "perturb/inflect.hpp"
#include "perturb/link_parser.hpp"
#include "perturb/wordnet.hpp"

namespace verity::perturb {
namespace {

using detail::WordSpan;

// The auxiliary left after dropping "n't" (irregular ones; others just lose "n't").
const std::map<std::string, std::string>& contraction_bases() {
  static const std::map<std::string, std::string> m = {
      {"can't", "can"}, {"won't", "will"}, {"shan't", "shall"}, {"cannot", "can"}};
  return m;
}

// "does run" -> "runs", "do run" -> "run", "did run" -> "ran"; empty when unsure.
std::string collapse_do_support(const std::string& aux, const std::string& verb) {
  if (aux == "does") return detail::third_person(verb);
  if (aux == "do") return verb;
  if (aux == "did") {
    auto forms = detail::past_forms(verb);
    // verb.exc lists past and participle together ("went", "gone"); pick the one
    // that is not a participle-looking "-en"/"-n" form when there is a choice.
    for (const auto& f : forms)
      if (forms.size() == 1 || !f.ends_with("n")) return f;
  }
  return "";
}

std::optional<Perturbation> remove_negation(std::string_view s, const std::vector<WordSpan>& w) {
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string& t = w[i].lower;
    std::string aux;
    size_t aux_begin = w[i].begin, neg_end = w[i].end;
    if (auto it = contraction_bases().find(t); it != contraction_bases().end()) {
      aux = it->second;
    } else if (t.size() > 3 && t.ends_with("n't") && t != "ain't") {
      aux = t.substr(0, t.size() - 3);
    } else if ((t == "not" || t == "never") && i > 0 && detail::is_auxiliary(w[i - 1].lower)) {
      aux = w[i - 1].lower;
      aux_begin = w[i - 1].begin;
    } else if (t == "never") {  // "She never smiles" -> "She smiles"
      size_t end = w[i].end;
      while (end < s.size() && s[end] == ' ') ++end;
      std::string rest;
      return detail::replace_span(s, w[i].begin, end, "", "negation");
    } else {
      continue;
    }
    std::string_view aux_surface = s.substr(aux_begin, w[i].end - aux_begin);
    // do-support disappears with the negation when a bare verb follows.
    if ((aux == "do" || aux == "does" || aux == "did") && i + 1 < w.size()) {
      std::string verb = collapse_do_support(aux, w[i + 1].lower);
      if (!verb.empty() && wn_known(w[i + 1].lower, WordClass::verb) &&
          wn_base_form(w[i + 1].lower, WordClass::verb) == w[i + 1].lower)
        return detail::replace_span(s, aux_begin, w[i + 1].end,
                                    detail::match_case(aux_surface, verb), "negation");
    }
    return detail::replace_span(s, aux_begin, neg_end, detail::match_case(aux_surface, aux),
                                "negation");
  }
  return std::nullopt;
}

bool is_subject_link(const std::string& label) {
  // Ss, Sp, SX (I am), Ss*s ...; not SI (inverted questions) or SF (filler "it"/"there" is fine).
  return label.size() >= 2 && label[0] == 'S' && (label[1] == 's' || label[1] == 'p' || label[1] == 'X' ||
                                                  label[1] == 'F') &&
         !(label.size() >= 3 && label[1] == 'F' && label[2] == 'I');
}

std::optional<Perturbation> add_not(std::string_view s, const Parse& parse) {
  for (const auto& link : parse.links) {
    if (!is_subject_link(link.label)) continue;
    const ParsedWord& v = parse.words[link.right];
    std::string verb = detail::to_lower(s.substr(v.begin, v.end - v.begin));
    // An auxiliary just before the verb ("will experience") takes the "not".
    if (link.right > 0 && !parse.words[link.right - 1].wall) {
      const ParsedWord& prev = parse.words[link.right - 1];
      std::string aux = detail::to_lower(s.substr(prev.begin, prev.end - prev.begin));
      if (detail::is_auxiliary(aux))
        return detail::replace_span(s, prev.begin, prev.end, std::string(s.substr(prev.begin, prev.end - prev.begin)) + " not",
                                    "negation");
    }
    bool perfect = false;
    for (const auto& l : parse.links)
      if (l.left == link.right && l.label.starts_with("PP")) perfect = true;
    if (detail::is_be_or_modal(verb) || (perfect && detail::is_auxiliary(verb)))
      return detail::replace_span(s, v.begin, v.end, std::string(s.substr(v.begin, v.end - v.begin)) + " not",
                                  "negation");
    if (v.tag.empty() || v.tag[0] != 'v') return std::nullopt;
    std::string base = wn_base_form(verb, WordClass::verb);
    std::string aux = v.tag.starts_with("v-d") ? "did"
                      : (link.label.size() >= 2 && link.label[1] == 's') ? "does"
                                                                          : "do";
    std::string repl = detail::match_case(s.substr(v.begin, v.end - v.begin), aux) + " not " + base;
    return detail::replace_span(s, v.begin, v.end, repl, "negation");
  }
  return std::nullopt;
}

std::vector<Perturbation> antonym_swaps(std::string_view s, const Parse& parse) {
  std::vector<Perturbation> out;
  for (size_t i = 0; i < parse.words.size(); ++i) {
    const ParsedWord& pw = parse.words[i];
    if (pw.wall || !pw.tag.starts_with("a")) continue;
    std::string surface(s.substr(pw.begin, pw.end - pw.begin));
    auto ants = wn_antonyms(detail::to_lower(surface), WordClass::adjective);
    if (ants.empty()) continue;
    std::string repl = detail::match_case(surface, ants.front());
    size_t b = pw.begin;
    // Keep the article right: "an honest" -> "a dishonest".
    if (i > 0 && !parse.words[i - 1].wall)
      repl = detail::with_article(s, parse.words[i - 1].begin, parse.words[i - 1].end, pw.begin, repl, b);
    out.push_back(detail::replace_span(s, b, pw.end, repl, "negation"));
  }
  return out;
}

class NegationPerturber final : public Perturber {
 public:
  explicit NegationPerturber(NegationMode mode) : mode_(mode) {}
  std::optional<Perturbation> apply(std::string_view s, Rng& rng) const override {
    auto words = detail::split_words(s);
    if (mode_ != NegationMode::antonym_only)
      if (auto removed = remove_negation(s, words)) return removed;
    // "shows no benefit" -> "does not show no benefit" would be a double negative.
    for (const auto& w : words)
      if (w.lower == "no" || w.lower == "none" || w.lower == "nothing" || w.lower == "neither" ||
          w.lower == "nor" || w.lower == "without") {
        set_skip_reason("other_negative_word");
        return std::nullopt;
      }
    Parse parse = link_parse(s);
    if (!parse.complete) {
      set_skip_reason("no_parse");
      return std::nullopt;
    }
    std::vector<Perturbation> cands;
    if (mode_ != NegationMode::antonym_only)
      if (auto added = add_not(s, parse)) cands.push_back(std::move(*added));
    if (mode_ != NegationMode::not_only) {
      auto ants = antonym_swaps(s, parse);
      if (!ants.empty()) cands.push_back(std::move(ants[rng.below(ants.size())]));
    }
    if (cands.empty()) {
      set_skip_reason(mode_ == NegationMode::antonym_only ? "no_antonym" : "no_finite_verb");
      return std::nullopt;
    }
    return cands[rng.below(cands.size())];
  }
  std::string spec() const override {
    return mode_ == NegationMode::not_only       ? "negation"
           : mode_ == NegationMode::antonym_only ? "negation:mode=antonym"
                                                 : "negation:mode=mixed";
  }

 private:
  NegationMode mode_;
};

}  // namespace

std::unique_ptr<Perturber> make_negation_perturber(NegationMode mode) {
  return std::make_unique<NegationPerturber>(mode);
}

}  // namespace verity::perturb
