#pragma once
// Document ids, titles and texts kept beside the indexes, so search results,
// verification and explain can show and re-encode the text. mmap-loaded.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/section_file.hpp"

namespace verity::index {

class DocStoreWriter {
 public:
  void add(std::string_view id, std::string_view title, std::string_view text);
  void write(const std::string& path) const;  // atomic
  size_t size() const { return id_offsets_.size() - 1; }

 private:
  std::string ids_, titles_, texts_;
  std::vector<uint64_t> id_offsets_{0}, title_offsets_{0}, text_offsets_{0};
};

class DocStore {
 public:
  explicit DocStore(const std::string& path);
  size_t size() const { return count_; }
  std::string_view id(size_t doc) const { return field(ids_, id_offsets_, doc); }
  std::string_view title(size_t doc) const { return field(titles_, title_offsets_, doc); }
  std::string_view text(size_t doc) const { return field(texts_, text_offsets_, doc); }
  // Index of a document id, or -1 when absent.
  int64_t find(std::string_view id) const;
  const std::string& path() const { return file_.path(); }

 private:
  std::string_view field(std::span<const char> blob, std::span<const uint64_t> offsets,
                         size_t doc) const;
  SectionFile file_;
  size_t count_ = 0;
  std::span<const char> ids_, titles_, texts_;
  std::span<const uint64_t> id_offsets_, title_offsets_, text_offsets_;
  std::unordered_map<std::string_view, uint32_t> by_id_;
};

}  // namespace verity::index
