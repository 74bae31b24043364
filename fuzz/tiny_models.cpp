#include "tiny_models.hpp"

#include <filesystem>

#include "core/io.hpp"
#include "data/beir.hpp"
#include "encode/registry.hpp"
#include "fuzz_support.hpp"
#include "search/index_builder.hpp"
#include "../tests/support/tiny_glove.hpp"
#include "verify/learned.hpp"

namespace verity::fuzz {
namespace fs = std::filesystem;

std::string make_tiny_glove(const std::string& dir) { return verity_test::make_tiny_glove(dir); }

void write_tiny_f3(const std::string& path) {
  verify::CnnConfig c;
  c.map_size = 8;
  c.channels = {2, 2, 2};
  auto v = verify::LearnedVerifier::untrained_cnn(c, 1);
  v->mark_trained("fuzz fixture: untrained weights");
  v->save(path);
}

std::string make_tiny_index(const std::string& dir) {
  const auto corpus = data::load_corpus(source_dir() + "/tests/fixtures/tiny_beir/corpus.jsonl");
  search::IndexBuildOptions o;
  search::build_index(corpus, dir + "/bm25", o);
  const std::string use_lite = source_dir() + "/models/use-lite";
  if (!fs::exists(use_lite + "/verity.json")) return dir + "/bm25";
  o.dense = o.tokens = true;
  o.encoder = "use-lite:" + use_lite;
  search::build_index(corpus, dir + "/full", o);
  return dir + "/full";
}

}  // namespace verity::fuzz
