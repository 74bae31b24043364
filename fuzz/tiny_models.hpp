#pragma once
// Small models the harnesses and the seed generator build the same way, so the
// committed seeds match what the harnesses load next to the fuzzed bytes.
#include <memory>
#include <string>

#include "encode/glove.hpp"

namespace verity::fuzz {

// tests/support/tiny_glove.hpp's model directory under dir; returns its path.
std::string make_tiny_glove(const std::string& dir);

// Writes an F3 verifier (map 8, channels 2/2/2, fixed seed) to path.
void write_tiny_f3(const std::string& path);

// The BM25 + docs index of tests/fixtures/tiny_beir (no encoder) under dir, and
// with models/use-lite present a second one with dense and token parts; returns
// the directory with the most parts.
std::string make_tiny_index(const std::string& dir);

}  // namespace verity::fuzz
