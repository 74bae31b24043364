// Parse-based generators: subject/object role swap, active->passive, synonym substitution.
// Every output must re-parse completely with Link Grammar, otherwise the sentence is skipped.
#include <algorithm>
#include <map>
#include <set>

#include "perturb/edit.hpp"
#include "perturb/generators.hpp"
#include "perturb/inflect.hpp"
#include "perturb/link_parser.hpp"
#include "perturb/wordnet.hpp"

namespace verity::perturb {
namespace {

const std::map<std::string, std::string> kToObjectCase = {
    {"i", "me"}, {"he", "him"}, {"she", "her"}, {"we", "us"}, {"they", "them"}, {"who", "whom"}};
const std::map<std::string, std::string> kToSubjectCase = {
    {"me", "I"}, {"him", "he"}, {"her", "she"}, {"us", "we"}, {"them", "they"}, {"whom", "who"}};

// Links that attach pre-head material to a noun-phrase head: determiners,
// adjectives, noun modifiers, possessives, adverbs of adjectives.
bool np_internal(const std::string& label) {
  static const std::vector<std::string> prefixes = {"D", "A", "AN", "E", "YS", "YP", "GN", "L", "NM"};
  for (const auto& p : prefixes)
    if (label.starts_with(p)) return true;
  return false;
}

bool is_object_link(const std::string& label) {
  return label.size() >= 1 && label[0] == 'O' &&
         !(label.size() >= 2 && (label[1] == 'F' || label[1] == 'N' || label[1] == 'D' || label[1] == 'T'));
}

bool is_plain_subject_link(const std::string& label) {  // Ss, Sp, SX; not inverted SI or filler SF
  return label.size() >= 2 && label[0] == 'S' && (label[1] == 's' || label[1] == 'p' || label[1] == 'X');
}

struct NounPhrase {
  size_t head = 0, first = 0;  // word indices
  size_t begin = 0, end = 0;   // bytes
};

// The head plus its pre-modifiers, or nullopt when anything else hangs off the
// phrase (relative clauses, prepositional modifiers): swapping those is unsafe.
std::optional<NounPhrase> noun_phrase(const Parse& p, size_t head, const ParsedLink& role_link) {
  std::set<size_t> members = {head};
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& l : p.links)
      if (members.count(l.right) && !members.count(l.left) && l.left < head && !p.words[l.left].wall &&
          np_internal(l.label)) {
        members.insert(l.left);
        grew = true;
      }
  }
  for (const auto& l : p.links) {
    bool in_l = members.count(l.left) > 0, in_r = members.count(l.right) > 0;
    if (in_l == in_r) continue;
    if (&l == &role_link) continue;
    size_t outside = in_l ? l.right : l.left;
    if (p.words[outside].wall) continue;  // Wd, RW ...
    return std::nullopt;
  }
  size_t first = *members.begin(), last = *members.rbegin();
  if (last != head || last - first + 1 != members.size()) return std::nullopt;  // must be contiguous
  return NounPhrase{head, first, p.words[first].begin, p.words[head].end};
}

// The subject must open the sentence (or follow a comma): a subject that starts
// mid-phrase means Link Grammar split a longer subject we would tear apart.
bool clause_initial(const Parse& p, const NounPhrase& np) {
  if (np.first == 0) return true;
  const ParsedWord& prev = p.words[np.first - 1];
  return prev.wall || prev.word == ",";
}

// What follows the object must be the end, punctuation, or something attached to
// the verb chain (an adjunct); otherwise the "object" is part of a longer phrase.
bool object_ends_clause(const Parse& p, const NounPhrase& np, const std::vector<size_t>& verbs) {
  size_t next = np.head + 1;
  if (next >= p.words.size() || p.words[next].wall) return true;
  const std::string& w = p.words[next].word;
  if (w == "." || w == "," || w == ";" || w == "!" || w == "?") return true;
  for (const auto& l : p.links)
    if (l.right == next && std::find(verbs.begin(), verbs.end(), l.left) != verbs.end()) return true;
  return false;
}

bool nominal(const ParsedWord& w) {
  static const std::set<std::string> pronouns = {"i", "me", "you", "he", "him", "she", "her", "it",
                                                 "we", "us", "they", "them"};
  return w.tag.starts_with("n") || w.tag.starts_with("p") || w.tag.starts_with("m") || w.tag.starts_with("f") ||
         w.tag.starts_with("b") || w.tag.starts_with("l") || w.tag.starts_with("y") ||
         w.tag.starts_with("s") || w.tag.starts_with("t") ||
         (w.tag.empty() && (pronouns.count(detail::to_lower(w.word)) ||
                            (!w.word.empty() && std::isupper(static_cast<unsigned char>(w.word[0])))));
}

// Whether a present-tense verb should take the -s form for this subject phrase.
bool third_singular(const ParsedWord& head, const std::string& role_label) {
  std::string w = detail::to_lower(head.word);
  if (w == "he" || w == "she" || w == "it" || w == "him" || w == "her") return true;
  if (w == "i" || w == "me" || w == "you" || w == "we" || w == "us" || w == "they" || w == "them") return false;
  // Os/Ss singular, Ou mass nouns ("apoptosis") also take the -s form.
  return role_label.size() >= 2 && (role_label[1] == 's' || role_label[1] == 'u');
}

// The present-tense form agreeing in the other number: bites<->bite, hasn't<->haven't.
std::string flip_number(const std::string& verb) {
  std::string lv = detail::to_lower(verb);
  std::string suffix;
  if (lv.ends_with("n't")) {
    suffix = "n't";
    lv.resize(lv.size() - 3);
  }
  static const std::map<std::string, std::string> irregular = {
      {"is", "are"}, {"are", "is"}, {"was", "were"}, {"were", "was"}, {"has", "have"},
      {"have", "has"}, {"does", "do"}, {"do", "does"}, {"am", "is"}};
  std::string out;
  if (auto it = irregular.find(lv); it != irregular.end()) out = it->second;
  else if (!suffix.empty()) return "";  // "can't", "won't": modals do not agree
  else if (lv.ends_with("s") && wn_base_form(lv, WordClass::verb) != lv) out = wn_base_form(lv, WordClass::verb);
  else out = detail::third_person(lv);
  return detail::match_case(verb, out + suffix);
}

struct Clause {
  const ParsedLink* subject_link = nullptr;
  const ParsedLink* object_link = nullptr;
  NounPhrase subject, object;
  size_t finite_verb = 0, object_verb = 0;
};

std::optional<Clause> find_clause(const Parse& p, bool allow_aux_chain, std::string& why) {
  why = "no_subject";
  for (const auto& s_link : p.links) {
    if (!is_plain_subject_link(s_link.label)) continue;
    size_t v = s_link.right;
    std::vector<size_t> verbs = {v};
    if (allow_aux_chain)  // "has bitten", "will bite": the object hangs off the last verb
      for (size_t k = 0; k < verbs.size() && k < 4; ++k)
        for (const auto& l : p.links)
          if (l.left == verbs[k] && detail::is_auxiliary(detail::to_lower(p.words[verbs[k]].word)) &&
              (l.label.starts_with("PP") || l.label.starts_with("I")))
            verbs.push_back(l.right);
    why = "no_object";
    for (size_t verb : verbs)
      for (const auto& o_link : p.links) {
        if (o_link.left != verb || !is_object_link(o_link.label)) continue;
        // Contracted verbs ("That's", "We've") are glued to the subject; nominal heads only
        // ("more", "that" as objects make nonsense when moved).
        for (size_t vv : verbs)
          if (p.words[vv].word.starts_with("'")) {
            why = "contracted_verb";
            return std::nullopt;
          }
        if (!nominal(p.words[s_link.left]) || !nominal(p.words[o_link.right])) {
          why = "non_nominal_head";
          return std::nullopt;
        }
        auto subj = noun_phrase(p, s_link.left, s_link);
        auto obj = noun_phrase(p, o_link.right, o_link);
        if (!subj || !obj || !clause_initial(p, *subj) || !object_ends_clause(p, *obj, verbs)) {
          why = "complex_noun_phrase";
          return std::nullopt;
        }
        return Clause{&s_link, &o_link, *subj, *obj, v, verb};
      }
    return std::nullopt;  // only the main clause's first subject is considered
  }
  return std::nullopt;
}

// Text of a noun phrase moved to another position: pronoun case fixed, and a
// capital that only marked the sentence start dropped.
std::string moved_phrase(std::string_view s, const Parse& p, const NounPhrase& np, bool to_subject) {
  std::string text(s.substr(np.begin, np.end - np.begin));
  std::string lower = detail::to_lower(text);
  const auto& cases = to_subject ? kToSubjectCase : kToObjectCase;
  if (np.first == np.head)
    if (auto it = cases.find(lower); it != cases.end()) return it->second;
  const ParsedWord& first = p.words[np.first];
  if (np.begin == 0 && !text.empty() && std::isupper(static_cast<unsigned char>(text[0])) &&
      !first.word.empty() && std::islower(static_cast<unsigned char>(first.word[0])) && lower.rfind("i", 0) != 0)
    text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  else if (np.begin == 0 && lower == "i")
    text = "I";
  return text;
}

std::string sentence_start(std::string text, size_t at) {
  if (at == 0) return detail::capitalize_first(text);
  return text;
}

class RoleSwapPerturber final : public Perturber {
 public:
  std::optional<Perturbation> apply(std::string_view s, Rng&) const override {
    Parse p = link_parse(s);
    if (!p.complete) return skip("no_parse");
    std::string why;
    auto c = find_clause(p, true, why);
    if (!c) return skip(why);
    const auto& subj = c->subject;
    const auto& obj = c->object;
    std::string new_subj = sentence_start(moved_phrase(s, p, obj, true), subj.begin);
    std::string new_obj = moved_phrase(s, p, subj, false);
    if (detail::to_lower(new_subj) == detail::to_lower(moved_phrase(s, p, subj, true)))
      return skip("same_phrase");
    const ParsedWord& fv = p.words[c->finite_verb];
    auto build = [&](const std::string& verb) {
      return std::string(s.substr(0, subj.begin)) + new_subj + std::string(s.substr(subj.end, fv.begin - subj.end)) +
             verb + std::string(s.substr(fv.end, obj.begin - fv.end)) + new_obj + std::string(s.substr(obj.end));
    };
    std::string verb(s.substr(fv.begin, fv.end - fv.begin));
    // Agreement: a present-tense verb follows the new subject's number
    // ("I ask Congress" -> "Congress asks me"); past tense and modals do not agree.
    std::string lv = detail::to_lower(verb);
    bool agrees = !fv.tag.starts_with("v-d") && !detail::is_be_or_modal(lv.ends_with("n't") ? lv.substr(0, lv.size() - 3) : lv);
    if (lv == "is" || lv == "are" || lv == "was" || lv == "were" || lv == "am" || lv.starts_with("isn") ||
        lv.starts_with("aren") || lv.starts_with("wasn") || lv.starts_with("weren"))
      agrees = true;
    if (agrees && third_singular(p.words[subj.head], c->subject_link->label) !=
                      third_singular(p.words[obj.head], c->object_link->label)) {
      verb = flip_number(verb);
      if (verb.empty()) return skip("agreement");
    }
    std::string out = build(verb);
    if (!link_parse(out).complete) return skip("reparse_failed");
    // The edited span runs from the subject's start to the object's end.
    Perturbation result;
    result.type = "role_swap";
    result.span_begin = subj.begin;
    result.span_end = out.size() - (s.size() - obj.end);
    result.original_span = std::string(s.substr(subj.begin, obj.end - subj.begin));
    result.new_span = out.substr(result.span_begin, result.span_end - result.span_begin);
    result.text = std::move(out);
    return result;
  }
  std::string spec() const override { return "role_swap"; }

 private:
  static std::optional<Perturbation> skip(const std::string& why) {
    set_skip_reason(why);
    return std::nullopt;
  }
};

class PassivePerturber final : public Perturber {
 public:
  std::optional<Perturbation> apply(std::string_view s, Rng&) const override {
    Parse p = link_parse(s);
    if (!p.complete) return skip("no_parse");
    std::string why;
    auto c = find_clause(p, false, why);
    if (!c) return skip(why);
    const ParsedWord& v = p.words[c->finite_verb];
    if (!v.tag.starts_with("v")) return skip("no_main_verb");
    std::string verb = detail::to_lower(s.substr(v.begin, v.end - v.begin));
    if (detail::is_auxiliary(verb)) return skip("no_main_verb");
    bool past = v.tag.starts_with("v-d");
    const auto& subj = c->subject;
    const auto& obj = c->object;
    if (s.substr(v.end, obj.begin - v.end).find_first_not_of(' ') != std::string_view::npos)
      return skip("complex_verb_phrase");
    std::string base = wn_base_form(verb, WordClass::verb);
    auto participles = detail::past_forms(base);
    // verb.exc lists past and participle together; "-n" forms are the participles.
    std::stable_partition(participles.begin(), participles.end(),
                          [](const std::string& f) { return f.ends_with("n"); });
    std::string new_subj = sentence_start(moved_phrase(s, p, obj, true), subj.begin);
    std::string agent = moved_phrase(s, p, subj, false);
    std::vector<std::string> bes = past ? std::vector<std::string>{"was", "were"}
                                        : std::vector<std::string>{"is", "are", "am"};
    for (const auto& participle : participles)
      for (const auto& be : bes) {
        std::string out = std::string(s.substr(0, subj.begin)) + new_subj + " " + be + " " + participle +
                          " by " + agent + std::string(s.substr(obj.end));
        if (link_parse(out).complete) return detail::diff_span(s, out, "passive");
      }
    return skip("reparse_failed");
  }
  std::string spec() const override { return "passive"; }

 private:
  static std::optional<Perturbation> skip(const std::string& why) {
    set_skip_reason(why);
    return std::nullopt;
  }
};

// Function-like modifiers: WordNet lists synonyms for them ("as" -> "equally",
// "through" -> "done", "second" -> "2nd", "all" -> "altogether"), but the swap changes
// grammar, register or a quantity, not just wording. Adverbs must be derived "-ly"
// adverbs; particles and degree words ("up", "very", "never") never are.
bool function_modifier(std::string_view w, bool adverb) {
  static const std::set<std::string_view> words = {
      "all", "any", "both", "each", "early", "every", "few", "first", "second", "third",
      "fourth", "fifth", "last", "next", "former", "latter", "likely", "many", "much",
      "more", "most", "only", "other", "own", "same", "several", "some", "such"};
  if (words.contains(w)) return true;
  return adverb && !w.ends_with("ly");
}

// Synonyms replace adverbs and attributive adjectives only: nouns, verbs,
// numbers and relation words carry the claim and stay untouched.
class SynonymPerturber final : public Perturber {
 public:
  std::optional<Perturbation> apply(std::string_view s, Rng& rng) const override {
    Parse p = link_parse(s);
    if (!p.complete) {
      set_skip_reason("no_parse");
      return std::nullopt;
    }
    std::vector<Perturbation> cands;
    for (size_t i = 0; i < p.words.size(); ++i) {
      const ParsedWord& w = p.words[i];
      if (w.wall || w.tag.empty()) continue;
      bool adverb = w.tag.starts_with("e");
      bool attributive = false;
      for (const auto& l : p.links)
        if (l.left == i && l.label.starts_with("A") && !l.label.starts_with("AN")) attributive = true;
      if (!adverb && !attributive) continue;
      std::string surface(s.substr(w.begin, w.end - w.begin));
      std::string lower = detail::to_lower(surface);
      WordClass cls = adverb ? WordClass::adverb : WordClass::adjective;
      if (wn_base_form(lower, cls) != lower) continue;  // comparatives: "bigger" -> skip
      if (function_modifier(lower, adverb)) continue;
      auto syns = wn_synonyms(lower, cls);
      if (adverb)  // "partly" -> "part": the replacement must be an "-ly" adverb too
        std::erase_if(syns, [](const std::string& w) { return !w.ends_with("ly"); });
      if (syns.empty()) continue;
      std::string repl = detail::match_case(surface, syns[rng.below(syns.size())]);
      size_t b = w.begin;
      if (i > 0 && !p.words[i - 1].wall)
        repl = detail::with_article(s, p.words[i - 1].begin, p.words[i - 1].end, w.begin, repl, b);
      Perturbation cand = detail::replace_span(s, b, w.end, repl, "synonym");
      if (link_parse(cand.text).complete) cands.push_back(std::move(cand));
    }
    if (cands.empty()) {
      set_skip_reason("no_synonym");
      return std::nullopt;
    }
    return cands[rng.below(cands.size())];
  }
  std::string spec() const override { return "synonym"; }
};

}  // namespace

std::unique_ptr<Perturber> make_role_swap_perturber() { return std::make_unique<RoleSwapPerturber>(); }
std::unique_ptr<Perturber> make_passive_perturber() { return std::make_unique<PassivePerturber>(); }
std::unique_ptr<Perturber> make_synonym_perturber() { return std::make_unique<SynonymPerturber>(); }

}  // namespace verity::perturb
