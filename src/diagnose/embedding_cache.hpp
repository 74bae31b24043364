#pragma once
// Pooled, L2-normalized embeddings keyed by text hash, kept in memory for a
// run and on disk between runs. The disk file is keyed by the encoder's
// fingerprint: fnv1a64 of its spec, its dim and the bytes of its embedding
// of a fixed probe text, so changed weights never reuse stale vectors.
//
// File format ("VEMB", version 1, a SectionFile):
//   PARM  u64 dim, u64 count, u64 fingerprint
//   HASH  u64[count]   fnv1a64 of each text's bytes, strictly increasing
//   VECS  f32[count * dim]
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "encode/encoder.hpp"

namespace verity::diagnose {

class EmbeddingCache {
 public:
  // cache_dir empty: memory only. Otherwise loads <cache_dir>/diagnose-emb-<fp>.vemb
  // if present; a damaged file is logged and ignored (it is only a cache).
  EmbeddingCache(const encode::Encoder& encoder, std::string cache_dir, size_t batch_size = 32);

  // Row i of the result is the embedding of texts[i] (rows x dim, normalized).
  // Encodes only the texts not cached yet.
  std::vector<float> embed(std::span<const std::string> texts);
  // Writes the disk file atomically if anything new was encoded.
  void save() const;

  size_t dim() const { return dim_; }
  uint64_t fingerprint() const { return fingerprint_; }
  size_t hits() const { return hits_; }
  size_t encoded() const { return encoded_; }
  const std::string& path() const { return path_; }

  static uint64_t text_hash(std::string_view text);
  static uint64_t encoder_fingerprint(const encode::Encoder& encoder);

 private:
  void load();
  const encode::Encoder& encoder_;
  size_t dim_, batch_size_;
  uint64_t fingerprint_;
  std::string path_;
  std::unordered_map<uint64_t, std::vector<float>> vectors_;
  size_t hits_ = 0, encoded_ = 0;
  bool dirty_ = false;
};

}  // namespace verity::diagnose
