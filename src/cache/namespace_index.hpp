#pragma once
// Nearest cached prompts of one namespace by pooled cosine, with incremental
// insert and delete. Small namespaces are scanned exactly; once a namespace
// holds more than `exact_limit` vectors it moves to an hnswlib HNSW graph
// (each graph costs ~2.6 MB of hnswlib's locks before any vector, too much
// for thousands of small namespaces). Deleted graph nodes are only marked
// (hnswlib 0.6); the graph is rebuilt from its live vectors once the marked
// ones outnumber them (index::HnswGraph).
//
// Not thread-safe by itself: the cache holds a shared lock for search() and
// an exclusive one for add()/remove().
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace verity::cache {

struct AnnOptions {
  size_t exact_limit = 1024;   // exact scan up to this many vectors
  size_t M = 16;               // HNSW graph degree
  size_t ef_construction = 100;
  size_t ef_search = 64;       // max with k
  uint64_t seed = 100;
};

struct Neighbor {
  int64_t id = 0;
  float cosine = 0;
};

class NamespaceIndex {
 public:
  NamespaceIndex(size_t dim, AnnOptions options);
  ~NamespaceIndex();
  NamespaceIndex(NamespaceIndex&&) noexcept;
  NamespaceIndex& operator=(NamespaceIndex&&) noexcept;

  // vector: dim floats, L2-normalized by the caller. Adding an id that is
  // present replaces its vector.
  void add(int64_t id, std::span<const float> vector);
  // Adds many (n × dim row-major) at once; graph insertion runs on `threads`.
  void add_batch(std::span<const int64_t> ids, std::span<const float> vectors, size_t threads);
  // False when the id is not present.
  bool remove(int64_t id);
  bool contains(int64_t id) const;
  // Up to k neighbours, highest cosine first.
  std::vector<Neighbor> search(std::span<const float> query, size_t k) const;
  size_t size() const;             // live vectors
  bool uses_graph() const;         // HNSW (true) or exact scan
  std::vector<int64_t> ids() const;  // live ids, any order
  // The graph as bytes, for a fast reopen; "" in exact mode (rebuilt cheaply).
  std::string serialize_graph() const;
  // Replaces this (empty) index by a serialized graph whose live ids and
  // vectors must be exactly the database's (`ids`, `vectors` n × dim); false,
  // leaving the index empty, when anything differs. A damaged dump is a
  // FormatError naming `where`.
  bool load_graph(std::span<const std::byte> dump, std::span<const int64_t> ids, std::span<const float> vectors,
                  const std::string& where);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::cache
