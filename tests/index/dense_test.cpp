#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "index/dense_flat.hpp"
#include "index/dense_hnsw.hpp"
#include "index/dense_index.hpp"

using namespace verity;
using namespace verity::index;

namespace {

std::vector<float> random_vectors(size_t n, size_t d, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::vector<float> v(n * d);
  for (auto& x : v) x = g(rng);
  return v;
}

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "verity_dense_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// Brute-force cosine top-k written independently of FlatIndex.
std::vector<std::vector<size_t>> brute_force(const std::vector<float>& base,
                                             const std::vector<float>& queries, size_t d,
                                             size_t k) {
  auto norm = [&](const float* v) {
    double s = 0;
    for (size_t i = 0; i < d; ++i) s += double(v[i]) * v[i];
    return std::sqrt(s);
  };
  size_t n = base.size() / d, nq = queries.size() / d;
  std::vector<std::vector<size_t>> out(nq);
  for (size_t q = 0; q < nq; ++q) {
    std::vector<std::pair<double, size_t>> all;
    for (size_t p = 0; p < n; ++p) {
      double s = 0;
      for (size_t i = 0; i < d; ++i) s += double(queries[q * d + i]) * base[p * d + i];
      all.push_back({-s / (norm(&queries[q * d]) * norm(&base[p * d])), p});
    }
    std::sort(all.begin(), all.end());
    for (size_t r = 0; r < k; ++r) out[q].push_back(all[r].second);
  }
  return out;
}

void flip_byte(const std::string& path, size_t offset) {
  std::string bytes = read_file(path);
  bytes[offset] ^= 0x5a;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void truncate_file(const std::string& path, size_t keep) {
  std::filesystem::resize_file(path, keep);
}

}  // namespace

TEST(FlatIndex, MatchesBruteForce) {
  const size_t d = 24, n = 500, nq = 37, k = 7;
  auto base = random_vectors(n, d, 1), queries = random_vectors(nq, d, 2);
  auto index = make_dense_index("flat", d);
  index->add(base);
  auto res = index->search(queries, k);
  auto truth = brute_force(base, queries, d, k);
  ASSERT_EQ(res.n_queries, nq);
  for (size_t q = 0; q < nq; ++q) {
    for (size_t r = 0; r < k; ++r) EXPECT_EQ(res.ids_of(q)[r], int64_t(truth[q][r])) << q;
    for (size_t r = 1; r < k; ++r) EXPECT_GE(res.scores_of(q)[r - 1], res.scores_of(q)[r]);
    EXPECT_LE(res.scores_of(q)[0], 1.0001f);
  }
}

TEST(FlatIndex, ExternalIdsAndShortResults) {
  auto index = make_dense_index("flat", 2);
  std::vector<float> v = {1, 0, 0, 1, 1, 1};
  std::vector<int64_t> ids = {100, 5, 7};  // non-negative: -1 marks an empty slot
  index->add(v, ids);
  std::vector<float> q = {3, 0.1f};
  auto res = index->search(q, 5);
  EXPECT_EQ(res.ids_of(0)[0], 100);
  EXPECT_EQ(res.ids_of(0)[1], 7);
  EXPECT_EQ(res.ids_of(0)[2], 5);
  EXPECT_EQ(res.ids_of(0)[3], -1);
  EXPECT_TRUE(std::isinf(res.scores_of(0)[4]));
  EXPECT_NEAR(res.scores_of(0)[1], (3 + 0.1) / std::sqrt(9.01) / std::sqrt(2.0), 1e-5);
}

TEST(DenseIndex, RejectsBadInput) {
  for (const char* spec : {"flat", "hnsw"}) {
    auto index = make_dense_index(spec, 3);
    std::vector<float> v = {1, 2, 3, 4, std::numeric_limits<float>::quiet_NaN(), 6};
    try {
      index->add(v);
      FAIL() << spec << ": NaN accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("vector 1 component 1"), std::string::npos) << e.what();
    }
    EXPECT_EQ(index->size(), 0u) << "a rejected batch must add nothing";
    v[4] = std::numeric_limits<float>::infinity();
    EXPECT_THROW(index->add(v), ConfigError);
    std::vector<float> five(5, 1.0f);
    EXPECT_THROW(index->add(five), ConfigError);
    std::vector<int64_t> one_id = {1};
    std::vector<float> two(6, 1.0f);
    EXPECT_THROW(index->add(two, one_id), ConfigError);
  }
}

TEST(DenseIndex, FactoryErrorsAndSpecRoundTrip) {
  auto expect_error = [](const std::string& spec, const std::string& needle) {
    try {
      make_dense_index(spec, 8);
      FAIL() << spec;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("ivf", "valid: flat, hnsw");
  expect_error("hnsw:X=3", "valid: M, efc, ef, seed, threads");
  expect_error("hnsw:M=abc", "not a non-negative integer");
  expect_error("hnsw:M=1", "outside");
  expect_error("hnsw:M", "key=value");
  expect_error("hnsw:M=8,M=9", "given twice");
  expect_error("flat:x=1", "no keys");
  auto h = make_dense_index("hnsw:M=32,efc=200,ef=100", 8);
  EXPECT_EQ(h->spec(), "hnsw:M=32,efc=200,ef=100,seed=100,threads=0");
  EXPECT_EQ(make_dense_index(h->spec(), 8)->spec(), h->spec());
  EXPECT_EQ(make_dense_index("flat", 8)->spec(), "flat");
  EXPECT_THROW(make_dense_index("flat", 0), ConfigError);
}

TEST(HnswIndex, RecallAgainstFlat) {
  const size_t d = 32, n = 5000, nq = 200, k = 10;
  auto base = random_vectors(n, d, 3), queries = random_vectors(nq, d, 4);
  auto flat = make_dense_index("flat", d);
  auto hnsw = make_dense_index("hnsw:M=16,efc=200,ef=100", d);
  flat->add(base);
  auto t0 = std::chrono::steady_clock::now();
  hnsw->add(base);
  auto t1 = std::chrono::steady_clock::now();
  double recall = recall_at_k(*hnsw, *flat, queries, k);
  auto t2 = std::chrono::steady_clock::now();
  hnsw->search(queries, k);
  auto t3 = std::chrono::steady_clock::now();
  std::printf("[ measure  ] hnsw build %zu×%zu: %.1f ms; %zu queries: %.2f ms; recall@10=%.4f\n",
              n, d, std::chrono::duration<double, std::milli>(t1 - t0).count(), nq,
              std::chrono::duration<double, std::milli>(t3 - t2).count(), recall);
  EXPECT_GE(recall, 0.95);
  // A deliberately starved graph must do worse: the measurement can fail.
  auto weak = make_dense_index("hnsw:M=2,efc=2,ef=1", d);
  weak->add(base);
  EXPECT_LT(recall_at_k(*weak, *flat, queries, k), recall);
}

TEST(DenseIndex, SaveLoadRoundTrip) {
  const size_t d = 16, n = 300, nq = 20, k = 5;
  auto base = random_vectors(n, d, 5), queries = random_vectors(nq, d, 6);
  std::vector<int64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = int64_t(1000 + 3 * i);
  for (const char* spec : {"flat", "hnsw:M=8,efc=100,ef=50,threads=1"}) {
    auto index = make_dense_index(spec, d);
    index->add(base, ids);
    const std::string path = temp_path("roundtrip.vdns");
    index->save(path);
    auto loaded = load_dense_index(path);
    EXPECT_EQ(loaded->spec(), index->spec());
    EXPECT_EQ(loaded->size(), n);
    EXPECT_EQ(loaded->dim(), d);
    auto a = index->search(queries, k), b = loaded->search(queries, k);
    EXPECT_EQ(a.ids, b.ids) << spec;
    EXPECT_EQ(a.scores, b.scores) << spec;
    // Appending after a load keeps working.
    auto extra = random_vectors(3, d, 7);
    loaded->add(extra);
    EXPECT_EQ(loaded->size(), n + 3);
    EXPECT_EQ(loaded->search(std::span(extra).subspan(0, d), 1).ids[0], int64_t(n));
  }
}

TEST(DenseIndex, DamagedFilesAreFormatErrors) {
  const size_t d = 8;
  auto base = random_vectors(50, d, 8);
  for (const char* spec : {"flat", "hnsw"}) {
    auto index = make_dense_index(spec, d);
    index->add(base);
    const std::string path = temp_path("damaged.vdns");
    index->save(path);
    const size_t size = std::filesystem::file_size(path);
    for (size_t keep : {size_t(10), size / 2, size - 1}) {
      index->save(path);
      truncate_file(path, keep);
      EXPECT_THROW(load_dense_index(path), FormatError) << spec << " keep=" << keep;
    }
    index->save(path);
    flip_byte(path, size - 100);  // inside the last data section
    EXPECT_THROW(load_dense_index(path), FormatError) << spec;
    index->save(path);
    flip_byte(path, 5);  // version
    EXPECT_THROW(load_dense_index(path), FormatError) << spec;
  }
  std::ofstream(temp_path("other.bin"), std::ios::binary) << "NOPE1234567890123456789";
  EXPECT_THROW(load_dense_index(temp_path("other.bin")), FormatError);
}

namespace {
// Where section `tag` of a SectionFile image lies: its header and its payload.
struct SectionAt {
  size_t header = 0, payload = 0, length = 0;
};
SectionAt find_section(const std::string& image, std::string_view tag) {
  for (size_t pos = 16; pos + 16 <= image.size();) {
    uint64_t len;
    std::memcpy(&len, image.data() + pos + 8, 8);
    size_t payload = pos + 16;
    payload += (64 - payload % 64) % 64;
    if (image.compare(pos, 4, tag) == 0) return {pos, payload, size_t(len)};
    pos = payload + size_t(len);
  }
  return {};
}
}  // namespace

// Found by fuzz/dense_index.cpp: hnswlib trusts its dump, so a graph whose checksums
// are intact but whose links, entry point or labels are not read out of bounds in
// searchKnn. Each such damage must be a FormatError at load.
TEST(HnswIndex, DamagedGraphBehindValidChecksumsIsRefused) {
  const size_t d = 4, n = 30;
  auto index = make_dense_index("hnsw:M=4,efc=16,ef=16,threads=1", d);
  index->add(random_vectors(n, d, 9));
  const std::string path = temp_path("graph.vdns");
  index->save(path);
  const std::string good = read_file(path);
  const SectionAt section = find_section(good, "HNSW");
  const size_t hnsw = section.payload, len = section.length;
  ASSERT_GT(len, 96u);
  size_t size_per_element, label_offset;
  std::memcpy(&size_per_element, good.data() + hnsw + 24, 8);
  std::memcpy(&label_offset, good.data() + hnsw + 32, 8);
  const size_t level0 = hnsw + 96;
  auto put32 = [](std::string& s, size_t at, uint32_t v) { std::memcpy(s.data() + at, &v, 4); };
  auto put64 = [](std::string& s, size_t at, uint64_t v) { std::memcpy(s.data() + at, &v, 8); };
  const std::vector<std::pair<std::string, std::function<void(std::string&)>>> damage = {
      {"neighbour id", [&](std::string& s) { put32(s, level0 + 4, 9999); }},
      {"link count", [&](std::string& s) { put32(s, level0, 60000); }},
      {"entry point", [&](std::string& s) { put32(s, hnsw + 52, 9999); }},
      {"label", [&](std::string& s) { put64(s, level0 + 3 * size_per_element + label_offset, 500); }},
      {"upper-level size", [&](std::string& s) { put32(s, level0 + n * size_per_element, 7); }},
  };
  for (const auto& [what, apply] : damage) {
    std::string bad = good;
    apply(bad);
    const uint32_t crc = crc32c(bad.data() + hnsw, len);  // the checksum still matches
    std::memcpy(bad.data() + section.header + 4, &crc, 4);
    write_file_atomic(path, bad);
    EXPECT_THROW(load_dense_index(path), FormatError) << what;
  }
  write_file_atomic(path, good);
  auto loaded = load_dense_index(path);
  EXPECT_EQ(loaded->search(random_vectors(1, d, 10), 5).ids.size(), 5u);
}

// Found by fuzz/dense_index.cpp: a file whose IDS. held a negative id loaded, and
// search returned it where -1 means an empty result slot.
TEST(DenseIndex, NegativeIdsAreRefused) {
  const size_t d = 4;
  for (const char* kind : {"flat", "hnsw:M=4,efc=16,ef=16,threads=1"}) {
    auto index = make_dense_index(kind, d);
    const std::vector<int64_t> bad = {3, -2};
    EXPECT_THROW(index->add(random_vectors(2, d, 1), bad), ConfigError) << kind;
    EXPECT_EQ(index->size(), 0u) << kind;
    const std::vector<int64_t> ids = {5, 6, 7};
    index->add(random_vectors(3, d, 2), ids);
    const std::string path = temp_path("negative_id.vdns");
    index->save(path);
    std::string image = read_file(path);
    const SectionAt section = find_section(image, "IDS.");
    ASSERT_EQ(section.length, 3 * sizeof(int64_t)) << kind;
    const int64_t negative = -768;
    std::memcpy(image.data() + section.payload + 8, &negative, 8);
    const uint32_t crc = crc32c(image.data() + section.payload, section.length);
    std::memcpy(image.data() + section.header + 4, &crc, 4);
    write_file_atomic(path, image);
    try {
      load_dense_index(path);
      FAIL() << kind << ": loaded";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("IDS.[1] is -768"), std::string::npos) << e.what();
    }
  }
}
