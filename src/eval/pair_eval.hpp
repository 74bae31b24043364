#pragma once
// Scoring text pairs (a_i, b_i) with a stage-2 verifier on their token maps,
// or with the encoder's pooled cosine (verifier == nullptr), and the
// per-source metrics of `verity pairs-eval`.
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "data/labelled_pairs.hpp"
#include "encode/encoder.hpp"
#include "eval/pair_metrics.hpp"
#include "verify/verifier.hpp"

namespace verity::eval {

// Texts are encoded in chunks of `chunk` pairs (each distinct text of a chunk
// once), so memory stays bounded; maps, token identities and pooled cosines go
// to the verifier through verify::score_text_pairs. Progress on stderr under
// `label`; SIGINT stops between chunks (Interrupted).
std::vector<float> score_pairs(std::span<const std::string> a, std::span<const std::string> b,
                               const encode::Encoder& encoder, const verify::Verifier* verifier,
                               size_t chunk = 64, const std::string& label = "scoring pairs");
// Several scorers over one encoding pass: result[s][i] is scorer s on pair i.
std::vector<std::vector<float>> score_pairs_many(std::span<const std::string> a, std::span<const std::string> b,
                                                 const encode::Encoder& encoder,
                                                 std::span<const verify::Verifier* const> verifiers, size_t chunk = 64,
                                                 const std::string& label = "scoring pairs");

// Scores of labelled pairs, in order.
std::vector<std::vector<float>> score_labelled_pairs(std::span<const data::LabelledPair> pairs,
                                                     const encode::Encoder& encoder,
                                                     std::span<const verify::Verifier* const> verifiers,
                                                     size_t chunk = 64);

}  // namespace verity::eval
