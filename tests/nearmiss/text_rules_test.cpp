#include <gtest/gtest.h>

#include "nearmiss/spatial_converse.hpp"
#include "nearmiss/text_utils.hpp"

using namespace verity::nearmiss;

TEST(NearmissText, SplitsSentencesKeepingAbbreviations) {
  auto s = split_sentences(
      "Mr. Smith met Dr. Jones in the U.S. yesterday. It rained!\nThen it\nstopped? \"Yes,\" he said.\n\n"
      "A new paragraph without a period");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0], "Mr. Smith met Dr. Jones in the U.S. yesterday.");
  EXPECT_EQ(s[1], "It rained!");
  EXPECT_EQ(s[2], "Then it stopped?");
  EXPECT_EQ(s[3], "\"Yes,\" he said.");
  EXPECT_EQ(s[4], "A new paragraph without a period");
}

TEST(NearmissText, NormalizeAndFilter) {
  EXPECT_EQ(normalize_sentence("  The  Cat\tsat. "), "the cat sat.");
  EXPECT_EQ(word_count(" a b  c "), 3u);
  std::string why;
  EXPECT_TRUE(usable_prose_sentence("The dog bit the man in the park.", 5, 40));
  EXPECT_FALSE(usable_prose_sentence("The dog bit.", 5, 40, &why));
  EXPECT_EQ(why, "too_short");
  EXPECT_FALSE(usable_prose_sentence("[Laughter] The dog bit the man in the park.", 5, 40, &why));
  EXPECT_EQ(why, "markup");
  EXPECT_FALSE(usable_prose_sentence("CHAPTER ONE OF THE GREAT BOOK IS HERE.", 5, 40, &why));
  EXPECT_EQ(why, "all_caps");
  EXPECT_FALSE(usable_prose_sentence("The dog bit the man in the park", 5, 40, &why));
  EXPECT_EQ(why, "no_final_punctuation");
}

TEST(NearmissSpatialConverse, SwapsAgentsAndInvertsDirections) {
  EXPECT_EQ(spatial_converse("A is to the left of B."), "B is to the right of A.");
  EXPECT_EQ(spatial_converse("K is to the upper left of Q."), "Q is to the lower right of K.");
  EXPECT_EQ(spatial_converse("X is to the bottom-left of Y."), "Y is to the top-right of X.");
  EXPECT_EQ(spatial_converse("The object M is positioned directly above the object K."),
            "The object K is positioned directly below the object M.");
  EXPECT_EQ(spatial_converse("G is positioned below H and to the left."),
            "H is positioned above G and to the right.");
  EXPECT_EQ(spatial_converse("T is diagonally above W to the right at a 45 degree."),
            "W is diagonally below T to the left at a 45 degree.");
  EXPECT_EQ(spatial_converse("P presents upper right to T."), "T presents lower left to P.");
}

TEST(NearmissSpatialConverse, DeclinesWhatTheRulesCannotInvert) {
  std::string why;
  EXPECT_FALSE(spatial_converse("A is at the 3 o'clock position relative to B.", &why));
  EXPECT_EQ(why, "unsupported_word");
  EXPECT_FALSE(spatial_converse("H is over there and C is on the top of it.", &why));
  EXPECT_EQ(why, "unsupported_word");
  EXPECT_FALSE(spatial_converse("A is in the front right corner of B.", &why));
  EXPECT_EQ(why, "unsupported_word");
  EXPECT_FALSE(spatial_converse("D and K are parallel, and D is under K.", &why));
  EXPECT_EQ(why, "subject");
  EXPECT_FALSE(spatial_converse("A is to the left of B and C.", &why));
  EXPECT_EQ(why, "agents");
  EXPECT_FALSE(spatial_converse("A is near B.", &why));
  EXPECT_EQ(why, "no_direction");
}
