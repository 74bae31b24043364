#include "text/surface.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "text/case_folds.hpp"
#include "text/sentencepiece.hpp"

namespace verity::text {
namespace {

std::vector<uint32_t> ids(const std::vector<std::string>& pieces) {
  std::vector<uint32_t> out;
  for (const auto& p : pieces) out.push_back(piece_identity(p));
  return out;
}

TEST(SurfaceText, SetsCaseSpacingApostrophesAndSentencePunctuationAside) {
  EXPECT_EQ(surface_text("What is Machine Learning ?"), "what is machine learning");
  EXPECT_EQ(surface_text("  what is machine\tlearning?"), "what is machine learning");
  EXPECT_EQ(surface_text("What\u2019s the time?"), surface_text("What's the time"));
  EXPECT_EQ(surface_text("Why isnt NaCl a metal?"), surface_text("Why isn't NaCl a Metal?"));
  EXPECT_EQ(surface_text("Is being \"early\" a good habit?"), surface_text("Is being early a good habit?"));
  EXPECT_EQ(surface_text("\u201CWhere is it?\u201D \u2014 he asked."), "where is it he asked");
  EXPECT_EQ(surface_text("Peter (1903 - 1967) was a jazz - reedist"), "peter 1903 1967 was a jazz reedist");
  EXPECT_EQ(surface_text("STRASSE"), surface_text("Stra\u00DFe"));  // case folding, not only lower-casing
  EXPECT_EQ(surface_text("?!..."), "");
}

TEST(SurfaceText, KeepsWhatChangesANumberOrASymbol) {
  EXPECT_NE(surface_text("It costs 3.5 dollars"), surface_text("It costs 35 dollars"));
  EXPECT_EQ(surface_text("It costs 3.5 dollars."), "it costs 3.5 dollars");
  EXPECT_NE(surface_text("1,000 people"), surface_text("1000 people"));
  EXPECT_NE(surface_text("at 10:30"), surface_text("at 1030"));
  EXPECT_NE(surface_text("It is -5 outside"), surface_text("It is 5 outside"));
  EXPECT_EQ(surface_text("1903-1967"), "1903-1967");
  EXPECT_NE(surface_text("Learn C++"), surface_text("Learn C"));
  EXPECT_NE(surface_text("Learn C#"), surface_text("Learn C"));
  EXPECT_NE(surface_text("a 5% rise"), surface_text("a 5 rise"));
  EXPECT_NE(surface_text("What does ~ mean?"), surface_text("What does % mean?"));
  EXPECT_EQ(surface_text("and/or"), "and/or");
  EXPECT_EQ(surface_text(std::string("a\xff b")), "a\xff b");  // ill-formed bytes kept as they are
}

TEST(SurfaceSpellings, SentencePieceTextsMatchOnTheirSurfaceOnly) {
  SurfaceSpellings s;
  const std::vector<std::string> vocabulary = {"<unk>", "<s>", "</s>", "\u2581What", "\u2581what", "\u2581is",
                                               "\u2581Machine", "\u2581machine", "\u2581Learn", "ing", "\u2581learn",
                                               "?", "\u2581?", "\u2581not"};
  EXPECT_TRUE(s.add_sentencepiece(vocabulary, 3));
  EXPECT_FALSE(s.add_sentencepiece(vocabulary, 3));  // nothing new
  const auto upper = ids({"\u2581What", "\u2581is", "\u2581Machine", "\u2581Learn", "ing", "?"});
  const auto lower = ids({"\u2581what", "\u2581is", "\u2581machine", "\u2581learn", "ing", "\u2581?"});
  EXPECT_EQ(s.surface(upper), "what is machine learning");
  EXPECT_TRUE(s.same_surface(upper, lower));
  EXPECT_TRUE(s.same_surface(lower, upper));
  // Another word, a word more, or a word split differently ("learn ing" is two words) is no match.
  EXPECT_FALSE(s.same_surface(upper, ids({"\u2581what", "\u2581is", "\u2581not", "\u2581machine", "\u2581learn",
                                          "ing"})));
  EXPECT_FALSE(s.same_surface(upper, ids({"\u2581what", "\u2581is", "\u2581machine", "\u2581learn", "\u2581?"})));
  // Unknown text, a piece of no registered vocabulary and an empty side never match.
  EXPECT_FALSE(s.same_surface(ids({"\u2581what", "<unk>"}), ids({"\u2581what", "<unk>"})));
  EXPECT_EQ(s.surface(ids({"\u2581what", "<unk>"})), std::nullopt);
  EXPECT_FALSE(s.same_surface(ids({"\u2581what", "\u2581zebra"}), ids({"\u2581what", "\u2581zebra"})));
  EXPECT_FALSE(s.same_surface({}, {}));
  EXPECT_FALSE(s.same_surface(ids({"?"}), ids({"\u2581?"})));  // no content on either side
  // The other special pieces spell nothing.
  EXPECT_TRUE(s.same_surface(ids({"<s>", "\u2581what", "</s>"}), ids({"\u2581what"})));
}

TEST(SurfaceSpellings, WordPieceJoinsContinuationsAndSkipsSpecials) {
  SurfaceSpellings s;
  const std::vector<std::string> vocabulary = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "play", "##ing", "playing", "."};
  const std::vector<std::string> specials = {"[PAD]", "[CLS]", "[SEP]"};
  s.add_wordpiece(vocabulary, "##", "[UNK]", specials);
  EXPECT_TRUE(s.same_surface(ids({"[CLS]", "play", "##ing", ".", "[SEP]"}), ids({"playing"})));
  EXPECT_FALSE(s.same_surface(ids({"play", "play"}), ids({"playing"})));
  EXPECT_FALSE(s.same_surface(ids({"[UNK]"}), ids({"[UNK]"})));
}

// Which pieces go on inside one word: what a lexicon reading whole words
// asks (verify::alignment_features' whole_words).
TEST(SurfaceSpellings, PiecesJoinInsideAWordOnly) {
  SurfaceSpellings s;
  s.add_sentencepiece(std::vector<std::string>{"<unk>", "<s>", "\u2581under", "min", "ing", "\u2581(", ")", "'", "t",
                                               "\u2581in", "2", "\u00e9t\u00e9"},
                      2);
  const auto id = [](const char* piece) { return piece_identity(piece); };
  ASSERT_NE(s.spelling_of(id("\u2581under")), nullptr);
  EXPECT_EQ(*s.spelling_of(id("\u2581under")), " under");
  EXPECT_EQ(*s.spelling_of(id("min")), "min");
  EXPECT_EQ(s.spelling_of(id("<unk>")), nullptr);  // unknown text
  EXPECT_EQ(s.spelling_of(id("<s>")), nullptr);    // special
  EXPECT_EQ(s.spelling_of(id("never seen")), nullptr);
  EXPECT_TRUE(s.joins(id("\u2581under"), id("min")));
  EXPECT_TRUE(s.joins(id("min"), id("ing")));
  EXPECT_FALSE(s.joins(id("min"), id("\u2581under")));  // a word mark starts a word
  EXPECT_FALSE(s.joins(id("\u2581("), id("min")));      // after a bracket
  EXPECT_FALSE(s.joins(id("min"), id(")")));
  EXPECT_FALSE(s.joins(id("'"), id("t")));
  EXPECT_TRUE(s.joins(id("\u2581in"), id("2")));  // letter to digit
  EXPECT_TRUE(s.joins(id("\u2581in"), id("\u00e9t\u00e9")));  // a letter of several bytes
  EXPECT_FALSE(s.joins(id("\u2581under"), id("<s>")));
  EXPECT_FALSE(s.joins(id("<unk>"), id("min")));
  SurfaceSpellings w;  // WordPiece: "##" continues a word, anything else starts one
  const std::vector<std::string> specials = {"[CLS]"};
  w.add_wordpiece(std::vector<std::string>{"[UNK]", "[CLS]", "under", "##mining", "right"}, "##", "[UNK]", specials);
  EXPECT_TRUE(w.joins(id("under"), id("##mining")));
  EXPECT_FALSE(w.joins(id("under"), id("right")));
  EXPECT_FALSE(w.joins(id("[CLS]"), id("##mining")));
}

TEST(SurfaceSpellings, APieceSpelledTwoWaysNeverMatches) {
  SurfaceSpellings s;
  s.add_sentencepiece(std::vector<std::string>{"<unk>", "\u2581the", "cat"}, 1);  // "cat" continues a word
  const auto the_cat = ids({"\u2581the", "cat"});
  EXPECT_TRUE(s.same_surface(the_cat, the_cat));
  const std::vector<std::string> specials;
  EXPECT_TRUE(s.add_wordpiece(std::vector<std::string>{"[UNK]", "cat"}, "##", "[UNK]", specials));  // starts one
  EXPECT_FALSE(s.same_surface(the_cat, the_cat));
}

TEST(SurfaceSpellings, TextsFarApartInLengthAreNotSpelled) {
  SurfaceSpellings s;
  s.add_sentencepiece(std::vector<std::string>{"<unk>", "\u2581a", "."}, 1);
  std::vector<uint32_t> query = ids({"\u2581a"}), passage = query;
  passage.insert(passage.end(), 40, piece_identity("."));  // the same surface, 41 pieces against 1
  EXPECT_EQ(s.surface(passage), s.surface(query));
  EXPECT_FALSE(s.same_surface(query, passage));
  passage.resize(20);
  EXPECT_TRUE(s.same_surface(query, passage));
}

// same_surface turns most pairs away on their ASCII letters before spelling
// them in full; that shortcut must agree with comparing the full surfaces,
// also where NFKC or case folding changes the letters ("ﬁ", "ß", a combining
// accent) and where a piece spells nothing known.
TEST(SurfaceSpellings, TheShortcutAgreesWithTheFullSurfaces) {
  SurfaceSpellings s;
  const std::vector<std::string> vocabulary = {
      "<unk>", "<s>", "\u2581the", "\u2581The", "\u2581THE", "\u2581cafe", "\u2581caf\u00e9", "\u0301",
      "\u2581strasse", "\u2581stra\u00dfe", "\u2581\ufb01ne", "\u2581fine", "\u2581Fine", "\u2581is", "\u2581IS",
      "?", "\u2581?", "'", "\u2581don", "t", "\u2581dont", "\u25813", ".", "5", "\u258135", "\u2581C", "++",
      "\u2581c", "\u2581\u2460", "\u25811", "s", "S"};
  s.add_sentencepiece(vocabulary, 2);
  const std::vector<std::vector<std::string>> same_surface_pieces = {
      {"\u2581the", "\u2581The", "\u2581THE"}, {"\u2581is", "\u2581IS"},
      {"\u2581fine", "\u2581Fine", "\u2581\ufb01ne"}, {"s", "S"}, {"?", "\u2581?"},
      {"\u2581strasse", "\u2581stra\u00dfe"}, {"\u25811", "\u2581\u2460"}};
  std::mt19937 rng(3);
  std::uniform_int_distribution<size_t> piece(0, vocabulary.size() - 1), length(1, 5);
  size_t matches = 0, compared = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<std::string> a, b;
    for (size_t k = length(rng); k > 0; --k) a.push_back(vocabulary[piece(rng)]);
    for (size_t k = length(rng); k > 0; --k) b.push_back(vocabulary[piece(rng)]);
    // Half the trials compare a text with itself, some pieces swapped for others of the same surface.
    if (trial % 2 == 0) {
      b = a;
      for (auto& p : b)
        for (const auto& group : same_surface_pieces)
          if (std::find(group.begin(), group.end(), p) != group.end()) p = group[rng() % group.size()];
    }
    const auto sa = s.surface(ids(a)), sb = s.surface(ids(b));
    const bool expected = sa && sb && !sa->empty() && *sa == *sb;
    ASSERT_EQ(s.same_surface(ids(a), ids(b)), expected) << (sa ? *sa : "(none)") << " / " << (sb ? *sb : "(none)");
    matches += expected, ++compared;
  }
  // Both answers occur often, so the comparison above tested something.
  EXPECT_GT(matches, compared / 4);
  EXPECT_LT(matches, compared);
  // The cases the shortcut must leave to the full comparison.
  EXPECT_TRUE(s.same_surface(ids({"\u2581caf\u00e9"}), ids({"\u2581cafe", "\u0301"})));
  EXPECT_TRUE(s.same_surface(ids({"\u2581strasse"}), ids({"\u2581stra\u00dfe"})));
  EXPECT_TRUE(s.same_surface(ids({"\u2581\ufb01ne"}), ids({"\u2581Fine"})));
  EXPECT_TRUE(s.same_surface(ids({"\u2581\u2460"}), ids({"\u25811"})));
  EXPECT_FALSE(s.same_surface(ids({"\u2581cafe"}), ids({"\u2581caf\u00e9"})));
  EXPECT_FALSE(s.same_surface(ids({"\u25813", ".", "5"}), ids({"\u258135"})));
}

TEST(SwappedName, OneCapitalizedWordInsideSwappedForAnother) {
  const auto swap = swapped_name("How do I install Python on Windows?", "How do I install Java on Windows?");
  ASSERT_TRUE(swap.has_value());
  EXPECT_EQ(swap->from, "Python");
  EXPECT_EQ(swap->to, "Java");
  // Case, spacing and sentence punctuation elsewhere do not count; the swapped words keep their spelling.
  const auto cased = swapped_name("what is the weather in Canada", "What is the weather in GERMANY ?");
  ASSERT_TRUE(cased.has_value());
  EXPECT_EQ(cased->to, "GERMANY");
  EXPECT_TRUE(swapped_name("Do you tip your Glovo courier?", "Do you tip your \u00c9tienne courier?"));
  // A small letter first and a capital after it is a name too.
  const auto device = swapped_name("How do I reset my iPhone?", "How do I reset my iPad?");
  ASSERT_TRUE(device.has_value());
  EXPECT_EQ(device->from, "iPhone");
  EXPECT_EQ(device->to, "iPad");
  EXPECT_TRUE(swapped_name("Can I sell it on eBay?", "Can I sell it on Amazon?"));
}

TEST(SwappedName, NoSwapWhereTheDifferenceIsAnotherKind) {
  EXPECT_FALSE(swapped_name("He studied with Willi Muenzenberg.", "He studied with Willy Muenzenberg."));  // near
  EXPECT_FALSE(swapped_name("The West Zhou state", "The Western Zhou state"));  // one the start of the other
  EXPECT_FALSE(swapped_name("Python is fun", "Java is fun"));                   // the first word
  EXPECT_FALSE(swapped_name("How do I install python?", "How do I install Java?"));  // one not capitalized
  EXPECT_FALSE(swapped_name("Is 16GB of RAM enough?", "Is 8GB of RAM enough?"));      // a number's unit
  EXPECT_FALSE(swapped_name("Is Paris in France?", "Is Paris in Europe today?"));    // a word more
  EXPECT_FALSE(swapped_name("Is Paris near Lyon?", "Is Rome near Milan?"));         // two words
  EXPECT_FALSE(swapped_name("Is it Open?", "Is it open?"));                         // only case
  EXPECT_FALSE(swapped_name("Is it Open?", "Is it Open?"));
  EXPECT_FALSE(swapped_name("Buy an iPhone 6", "Buy an iPhone 7"));  // a number: not a capital
  EXPECT_FALSE(swapped_name("", ""));
}

// From token identities: the same answers as from the texts, with case
// elsewhere folded before the cheap test (a folded pair is spelled).
TEST(SurfaceSpellings, SwappedNamesFromPieces) {
  SurfaceSpellings s;
  const std::vector<std::string> vocabulary = {"<unk>", "<s>", "\u2581How", "\u2581how", "\u2581do", "\u2581I",
                                               "\u2581install", "\u2581Install", "\u2581Python", "\u2581Ja", "va",
                                               "\u2581on", "\u2581Windows", "?", "\u2581python"};
  s.add_sentencepiece(vocabulary, 2);
  const auto python = ids({"\u2581How", "\u2581do", "\u2581I", "\u2581install", "\u2581Python", "\u2581on",
                           "\u2581Windows", "?"});
  const auto java = ids({"\u2581how", "\u2581do", "\u2581I", "\u2581Install", "\u2581Ja", "va", "\u2581on",
                         "\u2581Windows"});
  const CaseFolds folds(vocabulary);
  for (const CaseFolds* f : {static_cast<const CaseFolds*>(nullptr), &folds}) {
    const auto swap = s.swapped_name(python, java, f);
    ASSERT_TRUE(swap.has_value());
    EXPECT_EQ(swap->from, "Python");
    EXPECT_EQ(swap->to, "Java");
  }
  auto lower = python;
  lower[4] = piece_identity("\u2581python");
  EXPECT_FALSE(s.swapped_name(python, lower, &folds));  // only case differs
  EXPECT_FALSE(s.swapped_name(python, python, &folds));
  EXPECT_FALSE(s.swapped_name(python, ids({"<unk>", "\u2581do"}), &folds));
  // A long run of differing pieces is set aside unspelled; so is a pair with an unknown piece.
  auto longer = java;
  longer.insert(longer.begin() + 4, 13, piece_identity("va"));
  EXPECT_FALSE(s.swapped_name(python, longer, &folds));
  auto unknown = java;
  unknown[4] = piece_identity("<unk>");
  EXPECT_FALSE(s.swapped_name(python, unknown, &folds));
}

TEST(TransposedWords, TwoWordsTradePlaces) {
  const auto route = transposed_words("flights from Boston to Denver", "Flights from DENVER to Boston?");
  ASSERT_TRUE(route.has_value());
  EXPECT_EQ(route->first, "boston");
  EXPECT_EQ(route->second, "denver");
  EXPECT_TRUE(transposed_words("Are foxes afraid of badgers?", "Are badgers afraid of foxes?"));
  EXPECT_TRUE(transposed_words("the dog bit the man", "the man bit the dog"));  // articles between: no coordination
  EXPECT_TRUE(transposed_words("Is Paris bigger than London?", "Is London bigger than Paris?"));
  EXPECT_TRUE(transposed_words("Wine is cheap in Spain and dear in Italy.",  // a coordinator, not just before
                               "Wine is cheap in Italy and dear in Spain."));
  EXPECT_FALSE(transposed_words("It was published in 1631 and printed by Allde.",  // ... and just before
                                "It was printed in 1631 and published by Allde."));
}

TEST(TransposedWords, NoTranspositionWhereTheOrderSaysNothing) {
  EXPECT_FALSE(transposed_words("Should I learn Python or Java first?", "Should I learn Java or Python first?"));
  EXPECT_FALSE(transposed_words("the difference between a virus and a bacterium",
                                "the difference between a bacterium and a virus"));  // an article aside
  EXPECT_FALSE(transposed_words("The 14th, 16th and 117th lines", "The 117th, 16th and 14th lines"));
  EXPECT_FALSE(transposed_words("salt vs sugar", "sugar vs salt"));
  EXPECT_FALSE(transposed_words("Pass it by value or by reference?", "Pass it by reference or by value?"));
  EXPECT_TRUE(transposed_words("It was announced in May and was published in June.",  // "was" is no preposition
                               "It was published in May and was announced in June."));
  EXPECT_FALSE(transposed_words("How can I learn chess fast online?", "How can I learn chess online fast?"));  // neighbours
  EXPECT_FALSE(transposed_words("so it is in the box", "so in is it the box"));  // two stop words
  EXPECT_FALSE(transposed_words("flights from Boston to Denver", "flights from Denver to Chicago"));
  EXPECT_FALSE(transposed_words("flights from Boston to Denver", "flights from Boston to Denver"));
  EXPECT_FALSE(transposed_words("flights from Boston to Denver", "cheap flights from Denver to Boston"));
  EXPECT_FALSE(transposed_words("a b c d", "d b c a b"));
  EXPECT_FALSE(transposed_words("", ""));
}

// From token identities: the same answers as from the texts.
TEST(SurfaceSpellings, TranspositionsFromPieces) {
  SurfaceSpellings s;
  const std::vector<std::string> vocabulary = {"<unk>", "<s>", "\u2581flights", "\u2581Flights", "\u2581from",
                                               "\u2581Bos", "ton", "\u2581to", "\u2581Denver", "?"};
  s.add_sentencepiece(vocabulary, 2);
  const auto there = ids({"\u2581flights", "\u2581from", "\u2581Bos", "ton", "\u2581to", "\u2581Denver"});
  const auto back = ids({"\u2581Flights", "\u2581from", "\u2581Denver", "\u2581to", "\u2581Bos", "ton", "?"});
  const CaseFolds folds(vocabulary);
  for (const CaseFolds* f : {static_cast<const CaseFolds*>(nullptr), &folds}) {
    const auto t = s.transposed(there, back, f);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->first, "boston");
    EXPECT_EQ(t->second, "denver");
  }
  EXPECT_FALSE(s.transposed(there, there, &folds));
  // A run of differing pieces longer than 64 is set aside unspelled; so is a pair with an unknown piece.
  const auto apart = [&](size_t between) {
    auto x = there, y = back;
    x.insert(x.begin() + 4, between, piece_identity("\u2581to"));
    y.insert(y.begin() + 3, between, piece_identity("\u2581to"));
    return s.transposed(x, y, &folds).has_value();
  };
  EXPECT_TRUE(apart(20));
  EXPECT_FALSE(apart(70));
  auto unknown = back;
  unknown[2] = piece_identity("<unk>");
  EXPECT_FALSE(s.transposed(there, unknown, &folds));
}

TEST(ChangedNumbers, NumbersChangedInValue) {
  const auto port = changed_numbers("Is port 6379 open by default?", "is port 6380 open by default");
  ASSERT_TRUE(port.has_value());
  EXPECT_EQ(port->from, "6379");
  EXPECT_EQ(port->to, "6380");
  const auto minutes = changed_numbers("The meeting lasted thirteen minutes.", "The meeting lasted Thirty minutes");
  ASSERT_TRUE(minutes.has_value());
  EXPECT_EQ(minutes->from, "thirteen minutes");  // the quantity, its unit with it
  EXPECT_EQ(minutes->to, "thirty minutes");
  EXPECT_TRUE(changed_numbers("Take 2.5 mg twice a day", "Take 25 mg twice a day"));
  EXPECT_TRUE(changed_numbers("from 1,000 to 2,000 people", "from 1,000 to 3,000 people"));
  EXPECT_TRUE(changed_numbers("Walk 5 km in 40 minutes", "Walk 6 km in 50 minutes"));  // two numbers
  EXPECT_TRUE(changed_numbers("It is -5 outside", "It is 5 outside"));
  // Read by value, whichever way each side writes it.
  EXPECT_TRUE(changed_numbers("The flight takes ten hours.", "The flight takes 12 hours."));
  EXPECT_TRUE(changed_numbers("ten cats and 4 dogs", "twelve cats and 5 dogs"));
  EXPECT_TRUE(changed_numbers("Take the pill thrice a day.", "Take the pill twice a day."));
  // Glued to a sign, a unit or an ordinal ending.
  const auto ram = changed_numbers("Is 16gb of RAM enough?", "is 8GB of RAM enough");
  ASSERT_TRUE(ram.has_value());
  EXPECT_EQ(ram->from, "16gb");
  EXPECT_EQ(ram->to, "8gb");
  EXPECT_TRUE(changed_numbers("Is a $500 laptop enough?", "Is a $1,500 laptop enough?"));
  EXPECT_TRUE(changed_numbers("Who finished 3rd?", "Who finished 1st?"));
  EXPECT_TRUE(changed_numbers("in the 2nd season", "in the 5th season"));
  EXPECT_TRUE(changed_numbers("a 5% rate", "a 15% rate"));
  EXPECT_TRUE(changed_numbers("costs \u20AC20", "costs \u20AC25"));
  EXPECT_TRUE(changed_numbers("version 1.0.0", "version 1.0"));  // trailing zeros count beside a second '.'
  // Another unit or sign, both sides having one.
  EXPECT_TRUE(changed_numbers("a 16gb phone", "a 16tb phone"));
  EXPECT_TRUE(changed_numbers("The train leaves at 10am.", "The train leaves at 10pm."));
  EXPECT_TRUE(changed_numbers("$20 each", "\u20AC20 each"));
  EXPECT_TRUE(changed_numbers("under 20k", "under 25000"));
  EXPECT_TRUE(changed_numbers("about 0.5k", "about 50"));
  EXPECT_FALSE(changed_numbers("the 1st and 2gb", "the 2gb and 1st"));  // the same quantities reordered
}

TEST(ChangedNumbers, QuantitiesOfSeveralWords) {
  // A unit written as a word of its own, read through the table of unit names.
  const auto bag = changed_numbers("a 10 kg bag", "a 10 lb bag");
  ASSERT_TRUE(bag.has_value());
  EXPECT_EQ(bag->from, "10 kg");
  EXPECT_EQ(bag->to, "10 lb");
  EXPECT_TRUE(changed_numbers("It takes 10 hours", "It takes 10 minutes"));
  EXPECT_TRUE(changed_numbers("a 16 gb phone", "a 16tb phone"));
  EXPECT_TRUE(changed_numbers("costs 10 dollars", "costs 10 euros"));
  EXPECT_TRUE(changed_numbers("costs 10 dollars", "costs $12"));
  // A number of several words.
  EXPECT_TRUE(changed_numbers("twenty five people came", "35 people came"));
  EXPECT_TRUE(changed_numbers("two hundred and ten pages", "two hundred and twelve pages"));
  EXPECT_TRUE(changed_numbers("about 3 million users", "about 3 billion users"));
  EXPECT_TRUE(changed_numbers("a dozen eggs", "two dozen eggs"));
  // "one", and a noun that agrees with the number.
  const auto hours = changed_numbers("Is 1 hour of sleep enough?", "Is 24 hours of sleep enough?");
  ASSERT_TRUE(hours.has_value());
  EXPECT_EQ(hours->from, "1 hour");
  EXPECT_TRUE(changed_numbers("one cat", "two cats"));
  EXPECT_TRUE(changed_numbers("three boxes", "one box"));
  EXPECT_TRUE(changed_numbers("one city", "two cities"));
  EXPECT_TRUE(changed_numbers("Can 1 person lift it?", "Can 3 people lift it?"));
  // Ordinal words, alone or ending a number of several words.
  EXPECT_TRUE(changed_numbers("Who finished first in the race?", "Who finished third in the race?"));
  EXPECT_TRUE(changed_numbers("in the second season", "in the 5th season"));
  EXPECT_TRUE(changed_numbers("her twenty first birthday", "her 18th birthday"));
  EXPECT_TRUE(changed_numbers("the two hundred and fifth day", "the 250th day"));
  EXPECT_FALSE(changed_numbers("first and third", "third and first"));  // the same ordinals reordered
  EXPECT_FALSE(changed_numbers("in the second season", "in 2 seasons"));  // an ordinal against a count
  EXPECT_TRUE(respelled_numbers("Who finished first?", "Who finished 1st?"));
  EXPECT_TRUE(respelled_numbers("her twenty first birthday", "her 21st birthday"));
  EXPECT_TRUE(respelled_numbers("the two hundred and fifth day", "the 205th day"));
  // A unit after a number, not an ordinal: "1 second" / "1 minute".
  EXPECT_TRUE(changed_numbers("wait 1 second", "wait 1 minute"));
  EXPECT_TRUE(respelled_numbers("a thirty second clip", "a 30 second clip"));
  // Not a number of several words: each word must follow the one before.
  EXPECT_TRUE(changed_numbers("five twenty", "five thirty"));
  EXPECT_FALSE(changed_numbers("five twenty", "twenty five"));  // the same numbers reordered
}

TEST(ChangedNumbers, QuantitiesWrittenAnotherWay) {
  EXPECT_FALSE(changed_numbers("a 10 kg bag", "a 10 kilograms bag"));
  EXPECT_FALSE(changed_numbers("a 10kg bag", "a 10 kg bag"));
  EXPECT_FALSE(changed_numbers("twenty five people", "25 people"));
  EXPECT_FALSE(changed_numbers("a hundred people", "100 people"));
  EXPECT_FALSE(changed_numbers("one thousand two hundred", "1,200"));
  EXPECT_FALSE(changed_numbers("$1.5 million", "$1,500,000"));
  EXPECT_TRUE(respelled_numbers("about 2.3 million people", "about 2,300,000 people"));  // no rounding error
  EXPECT_TRUE(respelled_numbers("1.25 dozen eggs", "15 eggs"));
  EXPECT_TRUE(respelled_numbers("2.5 thousand", "2500"));
  EXPECT_FALSE(changed_numbers("costs 10 dollars", "costs $10"));
  EXPECT_FALSE(changed_numbers("twice a day", "2 times a day"));
  EXPECT_TRUE(respelled_numbers("a 10 kg bag", "a 10 kilograms bag"));
  EXPECT_TRUE(respelled_numbers("twenty five dollars", "$25"));
  EXPECT_TRUE(respelled_numbers("two hundred and ten pages", "210 pages"));
  EXPECT_TRUE(respelled_numbers("a dozen eggs", "12 eggs"));
  EXPECT_TRUE(respelled_numbers("It lasts 2 hours", "It lasts two hrs"));
  // A different word after a number is no noun agreeing with it.
  EXPECT_FALSE(changed_numbers("1 cat", "2 dogs"));
  EXPECT_FALSE(changed_numbers("1 cat", "2 cast"));
  EXPECT_FALSE(changed_numbers("1 hour ago", "2 hours later"));
  EXPECT_FALSE(respelled_numbers("the hour", "the hours"));  // no number before it
  EXPECT_FALSE(changed_numbers("the hour", "the hours"));
  EXPECT_FALSE(changed_numbers("a 10 kg bag", "a 10 bag"));  // a unit on one side alone
}

TEST(ChangedNumbers, NoChangeWhereTheValueOrTheWordsSayOtherwise) {
  EXPECT_FALSE(changed_numbers("What are your top ten films?", "What are your top 10 films?"));  // written two ways
  EXPECT_FALSE(changed_numbers("about 1,000 people", "about 1000 people"));                       // the same value
  EXPECT_FALSE(changed_numbers("The flight takes ten hours.", "The flight takes 10 hours."));     // the same value
  EXPECT_FALSE(changed_numbers("It costs 3.50 now", "It costs 3.5 now"));                        // the same value
  EXPECT_FALSE(changed_numbers("a 16gb phone", "an 8gb phone"));            // not numbers alone: "a" / "an"
  EXPECT_FALSE(changed_numbers("under 20k", "under 20000"));               // "k" is a thousand
  EXPECT_FALSE(changed_numbers("under 1k", "under 1000rs"));                // a unit on one side alone
  EXPECT_FALSE(changed_numbers("about 1.5k", "about 1,500"));               // the same value
  EXPECT_FALSE(changed_numbers("a 10% rise", "a 10 rise"));                 // a unit on one side alone
  EXPECT_FALSE(changed_numbers("$20 each", "20 each"));                     // a sign on one side alone
  EXPECT_FALSE(changed_numbers("twice a day", "2 a day"));                  // "twice" is 2 times
  EXPECT_FALSE(changed_numbers("an Intel i3 chip", "an Intel i5 chip"));    // a word that holds a digit
  EXPECT_FALSE(changed_numbers("a 2.50 kg bag", "a 2.5 kg bag"));          // the same value
  EXPECT_FALSE(changed_numbers("the 14th, 16th and 117th lines", "the 117th, 16th and 14th lines"));  // reordered
  EXPECT_FALSE(changed_numbers("Is port 6379 open?", "Is port 6380 closed?"));     // another word too
  EXPECT_FALSE(changed_numbers("Is port 6379 open?", "Is port 6379 open?"));       // nothing changed
  EXPECT_FALSE(changed_numbers("Is port 6379 open?", "Is the port 6380 open?"));   // another length
  EXPECT_FALSE(changed_numbers("", ""));
  EXPECT_EQ(english_number_words().front(), "zero");
  EXPECT_EQ(std::count(english_number_words().begin(), english_number_words().end(), "one"), 0);
}

// Every number word of F5's lexicon has a value for the number rules: a
// word added to the list without one would be read as no number.
TEST(ChangedNumbers, EveryNumberWordHasAValue) {
  for (const auto& word : english_number_words()) {
    const bool in_times = word == "twice" || word == "thrice" || word == "half";  // no digits say them
    EXPECT_EQ(changed_numbers("it is " + word, "it is 987654").has_value(), !in_times) << word;
    EXPECT_FALSE(respelled_numbers("it is " + word, "it is 987654")) << word;
  }
}

TEST(RespelledNumbers, OnlyTheSameValuesWrittenAnotherWay) {
  EXPECT_TRUE(respelled_numbers("The flight takes ten hours.", "the flight takes 10 hours"));
  EXPECT_TRUE(respelled_numbers("The warranty lasts 2 years.", "The warranty lasts two years."));
  EXPECT_TRUE(respelled_numbers("about 1,000 people", "about 1000 people"));
  EXPECT_TRUE(respelled_numbers("three cats and 4 dogs", "3 cats and four dogs"));
  EXPECT_TRUE(respelled_numbers("a phone under 20k", "a phone under 20,000"));
  EXPECT_TRUE(respelled_numbers("about 0.25k", "about 250"));
  EXPECT_FALSE(respelled_numbers("The flight takes ten hours.", "The flight takes 12 hours."));  // a change
  EXPECT_FALSE(respelled_numbers("ten cats and 4 dogs", "10 cats and 5 dogs"));  // a change beside it
  EXPECT_FALSE(respelled_numbers("ten hours", "10 days"));                       // another word
  EXPECT_FALSE(respelled_numbers("twice a day", "2 a day"));                     // "twice" is 2 times
  EXPECT_FALSE(respelled_numbers("ten hours", "Ten hours."));                    // the same surface
  EXPECT_FALSE(respelled_numbers("", ""));
}

// From token identities: the same answers as from the texts.
TEST(SurfaceSpellings, ChangedNumbersFromPieces) {
  SurfaceSpellings s;
  const std::vector<std::string> vocabulary = {"<unk>", "<s>", "\u2581Is", "\u2581is", "\u2581port", "\u258163",
                                               "79", "80", "\u2581open", "?", "\u2581ten", "\u258110"};
  s.add_sentencepiece(vocabulary, 2);
  const CaseFolds folds(vocabulary);
  const auto a = ids({"\u2581Is", "\u2581port", "\u258163", "79", "\u2581open", "?"});
  const auto b = ids({"\u2581is", "\u2581port", "\u258163", "80", "\u2581open"});
  for (const CaseFolds* f : {static_cast<const CaseFolds*>(nullptr), &folds}) {
    const auto c = s.changed_numbers(a, b, f);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->from, "6379");
    EXPECT_EQ(c->to, "6380");
  }
  EXPECT_FALSE(s.changed_numbers(a, a, &folds));
  EXPECT_FALSE(s.changed_numbers(ids({"\u2581port", "\u2581ten"}), ids({"\u2581port", "\u258110"}), &folds));
  auto unknown = b;
  unknown[1] = piece_identity("<unk>");
  EXPECT_FALSE(s.changed_numbers(a, unknown, &folds));
}

// readings() spells a pair once and gives what each of the three readings
// gives alone, run limits included (a name swap and a changed number within
// 12 differing pieces, a transposition within 64).
TEST(SurfaceSpellings, ReadingsAgreeWithEachReading) {
  SurfaceSpellings s;
  const std::vector<std::string> vocabulary = {"<unk>", "<s>", "\u2581flights", "\u2581from", "\u2581Boston",
                                               "\u2581to", "\u2581Denver", "\u2581Chicago", "\u25813",
                                               "\u25814", "\u2581pm", "\u2581and", "\u2581three"};
  s.add_sentencepiece(vocabulary, 2);
  const CaseFolds folds(vocabulary);
  const auto base = ids({"\u2581flights", "\u2581from", "\u2581Boston", "\u2581to", "\u2581Denver", "\u25813",
                         "\u2581pm"});
  std::vector<std::vector<uint32_t>> others = {
      base,
      ids({"\u2581flights", "\u2581from", "\u2581Denver", "\u2581to", "\u2581Boston", "\u25813", "\u2581pm"}),
      ids({"\u2581flights", "\u2581from", "\u2581Boston", "\u2581to", "\u2581Chicago", "\u25813", "\u2581pm"}),
      ids({"\u2581flights", "\u2581from", "\u2581Boston", "\u2581to", "\u2581Denver", "\u25814", "\u2581pm"}),
      ids({"<unk>", "\u2581from", "\u2581Boston", "\u2581to", "\u2581Denver", "\u25814", "\u2581pm"}),
      ids({"\u2581flights", "\u2581from", "\u2581Boston", "\u2581to", "\u2581Denver", "\u2581three", "\u2581pm"})};
  // Differing runs of 23 and 22 pieces (20 of "and" between the two places
  // that differ): past 12, within 64. The swap is a transposition; the two
  // changed numbers are read as no change, as changed_numbers reads them.
  auto far_x = base, far_y = others[1];
  far_x.insert(far_x.begin() + 3, 20, piece_identity("\u2581and"));
  far_y.insert(far_y.begin() + 3, 20, piece_identity("\u2581and"));
  std::vector<uint32_t> numbers_x = ids({"\u25813"}), numbers_y = ids({"\u25814"});
  numbers_x.insert(numbers_x.end(), 20, piece_identity("\u2581and"));
  numbers_y.insert(numbers_y.end(), 20, piece_identity("\u2581and"));
  numbers_x.push_back(piece_identity("\u25813")), numbers_y.push_back(piece_identity("\u25814"));
  EXPECT_TRUE(s.readings(far_x, far_y, &folds).transposition);
  EXPECT_TRUE(changed_numbers("3 and and 3", "4 and and 4"));
  for (const auto& [x, y] : {std::pair{far_x, far_y}, std::pair{numbers_x, numbers_y}}) {
    const auto read = s.readings(x, y, &folds);
    EXPECT_EQ(read.transposition, s.transposed(x, y, &folds).has_value());
    EXPECT_EQ(read.name_swap, s.swapped_name(x, y, &folds).has_value());
    EXPECT_EQ(read.number_change, s.changed_numbers(x, y, &folds).has_value());
    EXPECT_FALSE(read.number_change);
  }
  size_t fired = 0;
  for (const auto& other : others)
    for (const CaseFolds* f : {static_cast<const CaseFolds*>(nullptr), &folds}) {
      const auto read = s.readings(base, other, f);
      EXPECT_EQ(read.transposition, s.transposed(base, other, f).has_value());
      EXPECT_EQ(read.name_swap, s.swapped_name(base, other, f).has_value());
      EXPECT_EQ(read.number_change, s.changed_numbers(base, other, f).has_value());
      EXPECT_EQ(read.number_respelling, &other == &others.back());  // "3 pm" / "three pm"
      fired += read.transposition + read.name_swap + read.number_change + read.number_respelling;
    }
  EXPECT_EQ(fired, 8u);  // each of the four, with and without folds
}

TEST(SurfaceSpellings, TokenizersRegisterTheirSpellings) {
  const SentencePieceTokenizer tokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"<x1>", 0}, {"<x2>", 0},
                                          {"<x3>", 0}, {"\u2581Surfacetest", -1}, {"\u2581surfacetest", -1},
                                          {"!", -1}});
  const auto spellings = registered_surface_spellings();
  EXPECT_TRUE(spellings->same_surface(ids({"\u2581Surfacetest", "!"}), ids({"\u2581surfacetest"})));
  EXPECT_EQ(spellings->surface(ids({"<unk>"})), std::nullopt);
}

}  // namespace
}  // namespace verity::text
