#include "diagnose/embedding_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/crc32c.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"

namespace verity::diagnose {
namespace {
constexpr char kMagic[] = "VEMB";
constexpr uint32_t kVersion = 1;
constexpr size_t kEncodeChunk = 256;  // texts per encode call; bounds memory
constexpr char kProbe[] = "The quick brown fox jumps over the lazy dog; 42 cells did not divide.";

void normalize(std::span<float> v) {
  double ss = 0;
  for (float x : v) ss += double(x) * x;
  if (ss == 0) return;
  float inv = float(1.0 / std::sqrt(ss));
  for (float& x : v) x *= inv;
}
}  // namespace

uint64_t EmbeddingCache::text_hash(std::string_view text) { return fnv1a64(text.data(), text.size()); }

uint64_t EmbeddingCache::encoder_fingerprint(const encode::Encoder& encoder) {
  std::string spec = encoder.spec();
  uint64_t h = fnv1a64(spec.data(), spec.size());
  size_t dim = encoder.dim();
  h = fnv1a64(&dim, sizeof dim, h);
  encode::EncodeOptions opt;
  opt.with_tokens = false;
  std::string probe = kProbe;
  auto enc = encoder.encode(std::span(&probe, 1), opt);
  return fnv1a64(enc.pooled.data(), enc.pooled.size() * sizeof(float), h);
}

EmbeddingCache::EmbeddingCache(const encode::Encoder& encoder, std::string cache_dir, size_t batch_size)
    : encoder_(encoder), dim_(encoder.dim()), batch_size_(batch_size),
      fingerprint_(encoder_fingerprint(encoder)) {
  if (cache_dir.empty()) return;
  char name[64];
  std::snprintf(name, sizeof name, "/diagnose-emb-%016llx.vemb", (unsigned long long)fingerprint_);
  path_ = cache_dir + name;
  if (file_exists(path_)) {
    try {
      load();
    } catch (const Error& e) {
      log("embedding cache ", path_, " is unreadable, ignoring it: ", e.what());
      vectors_.clear();
    }
  }
}

void EmbeddingCache::load() {
  SectionFile file(path_, kMagic, kVersion);
  auto parm = file.reader("PARM");
  uint64_t dim = parm.read<uint64_t>(), count = parm.read<uint64_t>(), fp = parm.read<uint64_t>();
  VERITY_CHECK(dim == dim_, FormatError, path_, ": PARM dim=", dim, ", encoder dim=", dim_);
  VERITY_CHECK(fp == fingerprint_, FormatError, path_, ": PARM fingerprint does not match the encoder");
  auto hashes = file.array<uint64_t>("HASH");
  auto vecs = file.array<float>("VECS");
  VERITY_CHECK(hashes.size() == count, FormatError, path_, ": HASH has ", hashes.size(),
               " entries, PARM count=", count);
  VERITY_CHECK(vecs.size() == count * dim_, FormatError,
               path_, ": VECS has ", vecs.size(), " floats, expected ", count * dim_);
  vectors_.reserve(count);
  for (size_t i = 0; i < count; ++i)
    vectors_.emplace(hashes[i], std::vector<float>(vecs.begin() + i * dim_, vecs.begin() + (i + 1) * dim_));
}

std::vector<float> EmbeddingCache::embed(std::span<const std::string> texts) {
  std::vector<std::string> missing;
  std::unordered_map<uint64_t, bool> queued;
  for (const auto& t : texts) {
    uint64_t h = text_hash(t);
    if (vectors_.count(h)) {
      ++hits_;
    } else if (queued.emplace(h, true).second) {
      missing.push_back(t);
    }
  }
  if (!missing.empty()) {
    encode::EncodeOptions opt;
    opt.with_tokens = false;
    opt.batch_size = batch_size_;
    Progress progress("encoding", missing.size());
    for (size_t start = 0; start < missing.size(); start += kEncodeChunk) {
      check_interrupt();
      size_t n = std::min(kEncodeChunk, missing.size() - start);
      auto enc = encoder_.encode(std::span(missing).subspan(start, n), opt);
      VERITY_CHECK(enc.dim == dim_ && enc.batch == n, Error, "encoder returned ", enc.batch, "x",
                   enc.dim, " for ", n, " texts of dim ", dim_);
      for (size_t b = 0; b < n; ++b) {
        auto row = enc.pooled_row(b);
        std::vector<float> v(row.begin(), row.end());
        normalize(v);
        vectors_[text_hash(missing[start + b])] = std::move(v);
      }
      progress.add(n);
    }
    progress.finish();
    encoded_ += missing.size();
    dirty_ = true;
  }
  std::vector<float> out(texts.size() * dim_);
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto& v = vectors_.at(text_hash(texts[i]));
    std::copy(v.begin(), v.end(), out.begin() + i * dim_);
  }
  return out;
}

void EmbeddingCache::save() const {
  if (path_.empty() || !dirty_) return;
  make_directories(path_.substr(0, path_.rfind('/')));
  std::vector<uint64_t> hashes;
  hashes.reserve(vectors_.size());
  for (const auto& [h, v] : vectors_) hashes.push_back(h);
  std::sort(hashes.begin(), hashes.end());
  std::vector<float> vecs;
  vecs.reserve(hashes.size() * dim_);
  for (uint64_t h : hashes) {
    const auto& v = vectors_.at(h);
    vecs.insert(vecs.end(), v.begin(), v.end());
  }
  ByteWriter parm;
  parm.write<uint64_t>(dim_);
  parm.write<uint64_t>(hashes.size());
  parm.write<uint64_t>(fingerprint_);
  SectionWriter w(path_, kMagic, kVersion);
  w.add("PARM", parm);
  w.add_array<uint64_t>("HASH", hashes);
  w.add_array<float>("VECS", vecs);
  w.commit();
}

}  // namespace verity::diagnose
