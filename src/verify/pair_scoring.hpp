#pragma once
// Stage 2 on texts that are already encoded: one query against many
// candidates, through the same map kernel as index search (bf16 products
// where the CPU has them, verify/bf16_maps.hpp) so a text scores the same
// whether it is stored in an index, in the cache, or sent to /verify.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "verify/verifier.hpp"

namespace verity::verify {

// One encoded text, borrowed for the call.
struct TextTokens {
  std::span<const float> tokens;  // n × dim token vectors (any norm)
  std::span<const uint32_t> ids;  // n token identities (token_identity), or empty
  std::span<const float> pooled;  // dim pooled vector (any norm), or empty
};

// Cosine of two vectors of equal size; 0 when either is zero.
float cosine(std::span<const float> a, std::span<const float> b);

// What a context-reading verifier knows of (query, candidate) beside the
// map: their token identities, and their pooled vectors and cosine when both
// have one (NaN otherwise). Borrows from both.
PairContext pair_context(const TextTokens& query, const TextTokens& candidate);

// Verifier scores of query against every candidate, in order. A pair with no
// tokens on one side scores 0. ConfigError when a token block is not a
// multiple of dim or ids do not match the token count.
std::vector<float> score_texts(const Verifier& verifier, const TextTokens& query,
                               std::span<const TextTokens> candidates, size_t dim);

// The map score_texts scores for (query, candidate): what a picture or a
// report of a stage-2 decision must show (bf16 products where used).
SimilarityMap stage2_map(const TextTokens& query, const TextTokens& candidate, size_t dim);

// Scores of the pairs (a[i], b[i]), each map built with the same kernel as
// score_texts, the verifier called once for all of them.
std::vector<float> score_text_pairs(const Verifier& verifier, std::span<const TextTokens> a,
                                    std::span<const TextTokens> b, size_t dim);

}  // namespace verity::verify
