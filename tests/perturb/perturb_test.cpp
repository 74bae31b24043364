#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "perturb/perturber.hpp"
#include "perturb/wordnet.hpp"

namespace verity::perturb {
namespace {

std::optional<Perturbation> run(const std::string& spec, const std::string& s, uint64_t seed = 1) {
  Rng rng(seed);
  return make_perturber(spec)->apply(s, rng);
}

void expect_span_consistent(const std::string& input, const Perturbation& p) {
  ASSERT_LE(p.span_end, p.text.size());
  EXPECT_EQ(p.text.substr(p.span_begin, p.span_end - p.span_begin), p.new_span);
  // Putting the original span back restores the input exactly.
  std::string restored = p.text.substr(0, p.span_begin) + p.original_span + p.text.substr(p.span_end);
  EXPECT_EQ(restored, input);
}

std::string text_of(const std::string& spec, const std::string& s) {
  auto p = run(spec, s);
  if (!p) return "<skip:" + Perturber::skip_reason() + ">";
  expect_span_consistent(s, *p);
  EXPECT_EQ(p->type, spec.substr(0, spec.find(':')));
  return p->text;
}

TEST(Negation, AddsNotAfterCopula) {
  EXPECT_EQ(text_of("negation", "The drug is effective."), "The drug is not effective.");
  auto p = run("negation", "The drug is effective.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->original_span, "is");
  EXPECT_EQ(p->new_span, "is not");
  EXPECT_EQ(p->span_begin, 9u);
}

TEST(Negation, RemovesContraction) {
  EXPECT_EQ(text_of("negation", "She can't swim"), "She can swim");
  EXPECT_EQ(text_of("negation", "It won't work."), "It will work.");
  EXPECT_EQ(text_of("negation", "The test isn't valid."), "The test is valid.");
}

TEST(Negation, DoSupport) {
  EXPECT_EQ(text_of("negation", "He runs"), "He does not run");
  EXPECT_EQ(text_of("negation", "They walked home."), "They did not walk home.");
  EXPECT_EQ(text_of("negation", "He doesn't run."), "He runs.");
  EXPECT_EQ(text_of("negation", "They do not eat meat."), "They eat meat.");
}

TEST(Negation, ModalsAndNever) {
  EXPECT_EQ(text_of("negation", "The patients will recover."), "The patients will not recover.");
  EXPECT_EQ(text_of("negation", "She never smiles."), "She smiles.");
  EXPECT_EQ(text_of("negation", "The drug has not been tested."), "The drug has been tested.");
}

TEST(Negation, AntonymFromWordNet) {
  EXPECT_EQ(text_of("negation:mode=antonym", "The drug is effective."), "The drug is ineffective.");
  EXPECT_EQ(text_of("negation:mode=antonym", "It was an honest answer."), "It was a dishonest answer.");
  EXPECT_EQ(text_of("negation:mode=antonym", "The cat sat."), "<skip:no_antonym>");
}

TEST(WordNet, AntonymPairsAreDirectSingleWordsOnceEach) {
  const auto pairs = perturb::wn_antonym_pairs();
  EXPECT_GT(pairs.size(), 2000u);
  EXPECT_TRUE(std::is_sorted(pairs.begin(), pairs.end()));
  EXPECT_EQ(std::adjacent_find(pairs.begin(), pairs.end()), pairs.end());
  auto has = [&](std::string a, std::string b) {
    if (b < a) std::swap(a, b);
    return std::binary_search(pairs.begin(), pairs.end(), std::pair{a, b});
  };
  EXPECT_TRUE(has("open", "closed"));
  EXPECT_TRUE(has("increase", "decrease"));
  EXPECT_TRUE(has("maximum", "minimum"));
  EXPECT_FALSE(has("big", "large"));  // synonyms are not antonyms
  for (const auto& [a, b] : pairs) {
    ASSERT_LT(a, b);
    ASSERT_EQ(a.find_first_of("_- "), std::string::npos) << a;
    ASSERT_EQ(b.find_first_of("_- "), std::string::npos) << b;
  }
}

TEST(RoleSwap, SwapsNounPhrases) {
  EXPECT_EQ(text_of("role_swap", "The dog bit the man."), "The man bit the dog.");
  EXPECT_EQ(text_of("role_swap", "The big dog chased a small cat."), "A small cat chased the big dog.");
  auto p = run("role_swap", "The dog bit the man.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->original_span, "The dog bit the man");
  EXPECT_EQ(p->new_span, "The man bit the dog");
}

TEST(RoleSwap, PronounCase) {
  EXPECT_EQ(text_of("role_swap", "She saw him."), "He saw her.");
  EXPECT_EQ(text_of("role_swap", "They helped me."), "I helped them.");
}

TEST(RoleSwap, AgreementFixedOrSkipped) {
  EXPECT_EQ(text_of("role_swap", "The dogs chase the cat."), "The cat chases the dogs.");
  EXPECT_EQ(text_of("role_swap", "The cat has chased the dogs."), "The dogs have chased the cat.");
  EXPECT_EQ(text_of("role_swap", "I ask Congress to act."), "Congress asks me to act.");
  EXPECT_EQ(text_of("role_swap", "DUSP4 decreases apoptosis."), "Apoptosis decreases DUSP4.");
  EXPECT_EQ(text_of("role_swap", "We have built a new economy."), "A new economy has built us.");
  // Contracted verbs are glued to the subject: skip rather than emit "X've doubled us".
  EXPECT_EQ(text_of("role_swap", "We've doubled child support collections."), "<skip:contracted_verb>");
}

TEST(RoleSwap, SkipsWithoutObject) {
  EXPECT_EQ(text_of("role_swap", "The dog slept."), "<skip:no_object>");
  EXPECT_EQ(text_of("role_swap", "Of the of and the."), "<skip:no_parse>");
}

TEST(Spatial, ReversesRelations) {
  EXPECT_EQ(text_of("spatial", "The cup is left of the plate"), "The cup is right of the plate");
  EXPECT_EQ(text_of("spatial", "We ate before the show."), "We ate after the show.");
  EXPECT_EQ(text_of("spatial", "After dinner we left."), "Before dinner we left.");
  EXPECT_EQ(text_of("spatial", "The car is in front of the house."), "The car is behind the house.");
  EXPECT_EQ(text_of("spatial", "The car is behind the house."), "The car is in front of the house.");
  // "left" as a verb is not a direction.
  EXPECT_EQ(text_of("spatial", "He left early."), "<skip:no_relation_use>");
}

// Each sentence below was emitted by the first spatial rule and judged bad in the
// hand-checked sample (docs/perturb_checklist.md): none of them holds a reversible relation.
TEST(Spatial, SkipsNamesIdiomsAndNonSpatialSenses) {
  for (const char* s : {
           "We must convince North Korea to abandon its nuclear ambitions.",  // names
           "Democracies in the Middle East will not look like our own.",
           "She will travel to Israel and the West Bank for meetings.",
           "These genes encourage West Nile virus replication.",
           "It began with the No Child Left Behind Act.",
           "We can cut the deficit in half over the next 5 years.",  // over = during
           "Welfare cases have dropped by more than half over the past decade.",
           "The death rate of children over 15 is high.",  // over = more than
           "Patients want more control over their health decisions.",
           "The protein is expressed under the control of the Sox2 promoter.",
           "There is still money left over.",  // particle
           "I refuse to leave any child behind.",
           "Never before has our Nation enjoyed so much prosperity.",  // idioms
           "And before you know it, production will grow.",
           "After 224 years, the revolution continues.",
           "The Chairman has testified before Congress that rates will rise.",  // locative before
           "I first stood before you at this rostrum.",
           "We must train forces to go after terrorist cells.",  // phrasal verb
           "Monocytes have a lower inflammatory capacity.",  // comparative or verb "lower"
           "So we must lower the rate to 10 percent.",
           "Of the top 55 officials, we have captured 45.",  // rank
           "Education is my top priority.",
           "This call of history has come to the right country.",  // right = correct
           "Later today I asked the Attorney General to act.",
           "Freedom is the right of every person.",  // entitlement
           "We are One Nation, under God.",  // second sample, over/under outside space
           "Activity stays stable over several hundred hours.",
           "Every one of us wishes this war were over and won.",
           "Forces are operating under a mandate from the United Nations.",
           "Commit 4,000 hours over the rest of your lifetime.",
           "Coherence is enhanced for visible stimuli over invisible stimuli.",
           "Many of its top commanders have been removed.",
           "That is the idea behind the accounts.",
           "Cells migrate toward the outer- and inner follicular areas.",  // coordinated pair
           "Year after year, the tax code grows.",  // idioms
           "One commitment is necessary above all.",
           "We rose above partisan differences.",
           "I refuse to leave any child behind in America.",
       })
    EXPECT_EQ(text_of("spatial", s), "<skip:no_relation_use>") << s;
}

TEST(Spatial, KeepsRealRelations) {
  const std::pair<const char*, const char*> cases[] = {
      {"The lamp hangs over the table.", "The lamp hangs under the table."},
      {"The cat sleeps under a chair.", "The cat sleeps over a chair."},
      {"The town lies north of the river.", "The town lies south of the river."},
      {"North of the river lies the town.", "South of the river lies the town."},
      {"The tumour was in the lower lobe.", "The tumour was in the upper lobe."},
      {"The flag is at the top of the hill.", "The flag is at the bottom of the hill."},
      {"Turn to the right and stop.", "Turn to the left and stop."},
      {"Symptoms began long before the surgery.", "Symptoms began long after the surgery."},
      {"The car stopped behind the bus.", "The car stopped in front of the bus."},
      // The article agrees with the new word.
      {"They were made for an earlier time.", "They were made for a later time."},
      {"It sits in a lower chamber.", "It sits in an upper chamber."},
      // StepGame's phrasing: single-letter names (a capital A is not an article) and grid positions.
      {"It lies with the object A below the object B.", "It lies with the object A above the object B."},
      {"W presents lower left to C.", "W presents upper left to C."},
      {"O is sitting at the top position to R.", "O is sitting at the bottom position to R."},
      {"X is over Y.", "X is under Y."},
  };
  for (const auto& [input, expected] : cases) EXPECT_EQ(text_of("spatial", input), expected) << input;
}

TEST(Numeric, ChangesQuantity) {
  auto p = run("numeric", "The trial enrolled 120 patients.");
  ASSERT_TRUE(p);
  expect_span_consistent("The trial enrolled 120 patients.", *p);
  EXPECT_EQ(p->original_span, "120");
  EXPECT_NE(p->new_span, "120");
  EXPECT_FALSE(p->new_span.empty());
  auto w = run("numeric", "Three dogs barked.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->original_span, "Three");
  EXPECT_TRUE(std::isupper(static_cast<unsigned char>(w->new_span[0])));
  EXPECT_EQ(text_of("numeric", "One dog barked."), "<skip:no_quantity>");
}

TEST(Passive, ActiveToPassive) {
  EXPECT_EQ(text_of("passive", "The dog bit the man."), "The man was bitten by the dog.");
  EXPECT_EQ(text_of("passive", "She saw them."), "They were seen by her.");
  EXPECT_EQ(text_of("passive", "The dog slept."), "<skip:no_object>");
}

TEST(Synonym, ReplacesModifierAndReparses) {
  auto p = run("synonym", "The big dog ran quickly.");
  ASSERT_TRUE(p);
  expect_span_consistent("The big dog ran quickly.", *p);
  EXPECT_TRUE(p->original_span == "big" || p->original_span == "quickly") << p->original_span;
  EXPECT_TRUE(reparses(p->text)) << p->text;
}

// Each case is a swap seen in the first near-miss build, where the member's own first
// sense is another meaning; the reciprocal-sense rule must drop it and keep true synonyms.
TEST(Synonym, KeepsOnlyMembersWhoseFirstSenseMatches) {
  auto has = [](const std::vector<std::string>& v, const std::string& w) {
    return std::find(v.begin(), v.end(), w) != v.end();
  };
  EXPECT_TRUE(has(wn_synonyms("partly", WordClass::adverb), "partially"));
  EXPECT_TRUE(has(wn_synonyms("mostly", WordClass::adverb), "largely"));
  EXPECT_TRUE(has(wn_synonyms("reliable", WordClass::adjective), "dependable"));
  // Rare members have no SemCor-tagged sense, so their sense order says nothing.
  EXPECT_FALSE(has(wn_synonyms("somatic", WordClass::adjective), "corporal"));
  EXPECT_FALSE(has(wn_synonyms("excessive", WordClass::adjective), "inordinate"));
  EXPECT_FALSE(has(wn_synonyms("fatty", WordClass::adjective), "fat"));
  EXPECT_FALSE(has(wn_synonyms("shortsighted", WordClass::adjective), "short"));
  EXPECT_FALSE(has(wn_synonyms("economic", WordClass::adjective), "economical"));
  EXPECT_FALSE(has(wn_synonyms("exceptional", WordClass::adjective), "olympian"));
}

TEST(Synonym, LeavesFunctionAdverbsAlone) {
  // "as" -> "equally", "never" -> "ne'er" and "very" -> "real" are WordNet first-sense
  // synonyms; before the rule, seeds 0-5 picked them in 5 of 12 cases here.
  for (const char* s : {"He served as an advisor and never visited the big capital.",
                        "He was very happy and never visited the big capital."})
    for (uint64_t seed = 0; seed < 6; ++seed) {
      auto p = run("synonym", s, seed);
      ASSERT_TRUE(p);
      EXPECT_EQ(p->original_span, "big") << p->text;
    }
  // WordNet's first sense of "partly" also holds the bare adverb "part".
  for (uint64_t seed = 0; seed < 6; ++seed) {
    auto p = run("synonym", "The gorge is partly within the city boundary.", seed);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->new_span, "partially") << p->text;
  }
}

TEST(Perturber, DeterministicWithSeed) {
  const std::string s = "In 2019 the 45 mice lived 3.5 years before 12 of them were moved to 7 cages.";
  for (const char* kind : {"numeric", "spatial"}) {
    auto a = run(kind, s, 42), b = run(kind, s, 42);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->text, b->text);
  }
  std::set<std::string> outputs;
  for (uint64_t seed = 0; seed < 20; ++seed) outputs.insert(run("numeric", s, seed)->text);
  EXPECT_GT(outputs.size(), 3u);  // the seed actually matters
}

// Found by fuzz/perturb.cpp: an empty sentence crashed Link Grammar (sentence_split).
TEST(Perturber, SentencesWithoutWordsAreDeclined) {
  for (const auto& kind : perturber_kinds())
    for (const std::string s : {std::string(), std::string("   \t"), std::string("\0\0The cat sat.", 15)}) {
      EXPECT_FALSE(run(kind, s)) << kind;
      EXPECT_FALSE(Perturber::skip_reason().empty()) << kind;
    }
  EXPECT_FALSE(reparses(""));
}

TEST(Perturber, FactoryRejectsUnknown) {
  EXPECT_THROW(make_perturber("negate"), ConfigError);
  EXPECT_THROW(make_perturber("negation:mode=sometimes"), ConfigError);
  EXPECT_THROW(make_perturber("spatial:x=1"), ConfigError);
  for (const auto& k : perturber_kinds()) EXPECT_EQ(make_perturber(k)->spec(), k);
}

}  // namespace
}  // namespace verity::perturb

namespace verity::perturb {
namespace {

std::string run_cli(const std::string& args, int& rc) {
  std::string cmd = std::string(VERITY_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  rc = WEXITSTATUS(pclose(pipe));
  return out;
}

TEST(PerturbCli, WritesJsonlAndSummary) {
  auto dir = std::filesystem::temp_directory_path() / "verity_perturb_cli";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "in.jsonl") << "{\"text\": \"The cup is left of the plate.\"}\n"
                                  << "{\"text\": \"Nothing to reverse here.\"}\n";
  int rc = 0;
  std::string out = run_cli("perturb --quiet --json --type spatial --input " + (dir / "in.jsonl").string() +
                                " --output " + (dir / "out.jsonl").string(),
                            rc);
  ASSERT_EQ(rc, 0) << out;
  auto summary = nlohmann::json::parse(out);
  EXPECT_EQ(summary["emitted"], 1);
  EXPECT_EQ(summary["skip_reasons"]["no_relation_word"], 1);
  std::ifstream in(dir / "out.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["perturbed"], "The cup is right of the plate.");
  EXPECT_EQ(j["span"][0], 11);
  EXPECT_EQ(j["span"][1], 16);
  EXPECT_EQ(j["original_span"], "left");
  EXPECT_FALSE(std::getline(in, line));
}

TEST(PerturbCli, BadJsonNamesFileAndLine) {
  auto dir = std::filesystem::temp_directory_path() / "verity_perturb_cli_bad";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bad.jsonl") << "{\"text\": \"ok\"}\n{not json\n";
  int rc = 0;
  std::string out = run_cli("perturb --type negation --input " + (dir / "bad.jsonl").string() + " --output " +
                                (dir / "out.jsonl").string(),
                            rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("bad.jsonl:2"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.jsonl"));
}

}  // namespace
}  // namespace verity::perturb
