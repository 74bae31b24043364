#pragma once
// Converse of a two-agent spatial statement (StepGame style): swap the two
// agent names and invert every direction word, e.g.
//   "A is to the upper left of B."  ->  "B is to the lower right of A."
// Why this preserves meaning: the rewrite describes the point-reflected
// configuration with the agents renamed; the vector from the (new) first
// agent to the (new) second is then exactly the original vector from A to B,
// so any statement about the relative position of A and B keeps its truth
// value. Inverted words (whole words, also inside hyphenated ones):
//   left<->right, lefthand<->righthand, above<->below, upper<->lower,
//   top<->bottom, up<->down, over<->under, north<->south, east<->west.
// Declined (nullopt, reason in *reason): not exactly two distinct one-letter
// agents ("agents"), the sentence does not start with an agent subject
// ("subject"), no direction word ("no_direction"), or words whose inversion
// is not in the table (clock positions / other numbers except "45" degrees,
// front, back, behind, there, between, center): "unsupported_word".
#include <optional>
#include <string>
#include <string_view>

namespace verity::nearmiss {

std::optional<std::string> spatial_converse(std::string_view sentence, std::string* reason = nullptr);

}  // namespace verity::nearmiss
