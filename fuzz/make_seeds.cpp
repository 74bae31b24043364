// Writes the binary seed inputs of the fuzz harnesses: small valid files of each
// format, made by the formats' own writers. The text seeds under fuzz/seeds/ are
// written by hand.
//   fuzz_make_seeds <repo>/fuzz/seeds
#include <cstdio>
#include <filesystem>
#include <random>

#include "cache/cache.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "diagnose/embedding_cache.hpp"
#include "encode/glove.hpp"
#include "encode/safetensors.hpp"
#include "fuzz_support.hpp"
#include "index/bm25.hpp"
#include "index/dense_index.hpp"
#include "index/doc_store.hpp"
#include "index/token_store.hpp"
#include "tiny_models.hpp"
#include "train/token_cache.hpp"
#include "verify/learned.hpp"

using namespace verity;
namespace fs = std::filesystem;

namespace {
std::vector<float> values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = g(rng);
  return v;
}

void copy_seed(const std::string& from, const std::string& out, const std::string& name) {
  make_directories(out);
  fs::copy_file(from, out + "/" + name, fs::copy_options::overwrite_existing);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SEEDS_DIR\n", argv[0]);
    return 2;
  }
  set_quiet(true);
  const std::string seeds = argv[1], tmp = fuzz::scratch_dir();
  try {
    const std::vector<std::string> ids = {"d1", "d2", "d3"};
    const std::vector<std::string> texts = {"The cat sat on the mat.", "Dogs and cats play.",
                                            "Measles vaccine lowers mortality."};
    index::DocStoreWriter docs;
    for (size_t i = 0; i < ids.size(); ++i) docs.add(ids[i], i == 2 ? "" : "Title " + ids[i], texts[i]);
    docs.write(tmp + "/docs.vds");
    copy_seed(tmp + "/docs.vds", seeds + "/doc_store", "three_docs.vds");
    copy_seed(tmp + "/docs.vds", seeds + "/section_file", "doc_store.vds");

    const auto bm25 = index::Bm25Index::build(ids, texts, text::Analyzer::from_spec("english"));
    bm25.save(tmp + "/bm25.vbm");
    copy_seed(tmp + "/bm25.vbm", seeds + "/bm25", "three_docs.vbm");

    auto flat = index::make_dense_index("flat", 4);
    flat->add(values(3 * 4, 1));
    flat->save(tmp + "/flat.vdn");
    copy_seed(tmp + "/flat.vdn", seeds + "/dense_index", "flat.vdn");
    auto hnsw = index::make_dense_index("hnsw:M=4,efc=8,ef=8,threads=1", 4);
    hnsw->add(values(12 * 4, 2));
    hnsw->save(tmp + "/hnsw.vdn");
    copy_seed(tmp + "/hnsw.vdn", seeds + "/dense_index", "hnsw.vdn");
    copy_seed(tmp + "/hnsw.vdn", seeds + "/section_file", "hnsw.vdn");

    for (auto p : {index::TokenPrecision::fp32, index::TokenPrecision::fp16, index::TokenPrecision::int8}) {
      index::TokenStoreBuilder b(4, p);
      b.add_document(values(2 * 4, 3));
      b.add_document({});
      b.add_document(values(3 * 4, 4));
      const std::string name = cat(index::to_string(p), ".vtk");
      b.save(tmp + "/" + name);
      copy_seed(tmp + "/" + name, seeds + "/token_store", name);
    }

    fuzz::write_tiny_f3(tmp + "/f3.vvrf");
    copy_seed(tmp + "/f3.vvrf", seeds + "/learned_verifier", "f3.vvrf");
    verify::VitConfig vc;
    vc.map_size = 8;
    vc.patch = 4;
    vc.dim = 8;
    vc.layers = 1;
    vc.heads = 2;
    vc.mlp_dim = 8;
    auto f4 = verify::LearnedVerifier::untrained_vit(vc, 2);
    f4->mark_trained("fuzz seed: untrained weights");
    f4->save(tmp + "/f4.vvrf");
    copy_seed(tmp + "/f4.vvrf", seeds + "/learned_verifier", "f4.vvrf");

    const auto glove_dir = fuzz::make_tiny_glove(tmp + "/base");
    copy_seed(glove_dir + "/vectors.vgl", seeds + "/glove", "tiny.vgl");

    train::TextBank bank;
    for (const char* t : {"the cat sat", "a dog ran"}) bank.add(t);
    bank.set_tokens(0, values(3 * 4, 5), 4);
    bank.set_tokens(1, values(2 * 4, 6), 4);
    train::save_token_cache(bank, tmp + "/tokens.vtkc", "glove:fuzz");
    copy_seed(tmp + "/tokens.vtkc", seeds + "/token_cache", "two_texts.vtkc");

    const auto glove = encode::load_glove(glove_dir);
    {
      diagnose::EmbeddingCache cache(*glove, tmp + "/emb");
      const std::vector<std::string> cached = {"the cat sat", "river flooding"};
      cache.embed(cached);
      cache.save();
      copy_seed(cache.path(), seeds + "/embedding_cache", "two_texts.vemb");
    }

    {
      cache::CacheOptions o;
      o.encoder = "glove:" + glove_dir;
      o.verifier = "f1";
      cache::Cache c(tmp + "/cache.sqlite", o);
      c.put("the cat sat", "on the mat", {});
      cache::PutOptions other;
      other.ns = "other";
      other.metadata = R"({"source": "seed"})";
      other.ttl_s = 3600;
      c.put("measles vaccine", "lowers mortality", other);
      c.put("river flooding", "in spring", {});
    }  // closed: the WAL is checkpointed into the one file
    copy_seed(tmp + "/cache.sqlite", seeds + "/cache_store", "three_entries.sqlite");

    const auto f = values(6, 7);
    const std::vector<int64_t> ints = {1, -2, 3};
    const std::vector<uint16_t> halves = {0x3c00, 0xc000};
    encode::write_safetensors(
        tmp + "/t.safetensors",
        {encode::f32_tensor("a.weight", {2, 3}, f),
         {"b.index", encode::DType::I64, {3}, std::as_bytes(std::span<const int64_t>(ints))},
         {"c.half", encode::DType::F16, {2}, std::as_bytes(std::span<const uint16_t>(halves))}},
        {{"format", "pt"}});
    copy_seed(tmp + "/t.safetensors", seeds + "/safetensors", "three_dtypes.safetensors");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
