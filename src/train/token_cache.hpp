#pragma once
// A file of token vectors per text for one encoder, so repeated frozen
// training runs (seeds, configurations) encode each text once. Torch-free.
//
// Format: SectionFile magic "VTKC" version 1; CONF = JSON {encoder, dim,
// texts}; TEXT = the texts (u32 length + bytes each); NTOK = u32 token count
// per text; ROWS = float32 token rows of all texts, concatenated.
#include <cstddef>
#include <string>

#include "train/verifier_training.hpp"

namespace verity::train {

// Sets the token vectors of every bank text the cache holds; returns how many.
// A missing file holds nothing (0). A cache of another encoder (spec) or
// dimension is a ConfigError naming the file and both specs.
size_t load_token_cache(TextBank& bank, const std::string& path, const std::string& encoder_spec);

// Writes the union of the cache file (if any, same encoder) and the bank's
// encoded texts to `path`, atomically. Returns the number of texts written.
size_t save_token_cache(const TextBank& bank, const std::string& path, const std::string& encoder_spec);

}  // namespace verity::train
