#include "index/doc_store.hpp"

namespace verity::index {
namespace {
constexpr std::string_view kMagic = "VDOC";
constexpr uint32_t kVersion = 1;
}  // namespace

void DocStoreWriter::add(std::string_view id, std::string_view title, std::string_view text) {
  ids_.append(id);
  titles_.append(title);
  texts_.append(text);
  id_offsets_.push_back(ids_.size());
  title_offsets_.push_back(titles_.size());
  text_offsets_.push_back(texts_.size());
}

void DocStoreWriter::write(const std::string& path) const {
  SectionWriter w(path, kMagic, kVersion);
  w.add("IDS.", ids_.data(), ids_.size());
  w.add("TITL", titles_.data(), titles_.size());
  w.add("TEXT", texts_.data(), texts_.size());
  w.add_array<uint64_t>("IDOF", id_offsets_);
  w.add_array<uint64_t>("TIOF", title_offsets_);
  w.add_array<uint64_t>("TXOF", text_offsets_);
  w.commit();
}

DocStore::DocStore(const std::string& path) : file_(path, kMagic, kVersion) {
  ids_ = file_.array<char>("IDS.");
  titles_ = file_.array<char>("TITL");
  texts_ = file_.array<char>("TEXT");
  id_offsets_ = file_.array<uint64_t>("IDOF");
  title_offsets_ = file_.array<uint64_t>("TIOF");
  text_offsets_ = file_.array<uint64_t>("TXOF");
  VERITY_CHECK(!id_offsets_.empty() && id_offsets_.size() == title_offsets_.size() &&
                   id_offsets_.size() == text_offsets_.size(),
               FormatError, path, ": offset tables disagree in length");
  count_ = id_offsets_.size() - 1;
  auto check = [&](std::span<const uint64_t> off, size_t blob, const char* what) {
    VERITY_CHECK(off.front() == 0 && off.back() == blob, FormatError, path, ": ", what,
                 " offsets do not cover the blob");
    for (size_t i = 1; i < off.size(); ++i)
      VERITY_CHECK(off[i - 1] <= off[i], FormatError, path, ": ", what,
                   " offsets decrease at entry ", i);
  };
  check(id_offsets_, ids_.size(), "id");
  check(title_offsets_, titles_.size(), "title");
  check(text_offsets_, texts_.size(), "text");
  by_id_.reserve(count_);
  for (size_t i = 0; i < count_; ++i)
    VERITY_CHECK(by_id_.emplace(id(i), uint32_t(i)).second, FormatError, path,
                 ": duplicate document id '", id(i), "'");
}

std::string_view DocStore::field(std::span<const char> blob, std::span<const uint64_t> offsets,
                                 size_t doc) const {
  VERITY_CHECK(doc < count_, Error, "document index ", doc, " out of range (", count_, " docs)");
  return {blob.data() + offsets[doc], size_t(offsets[doc + 1] - offsets[doc])};
}

int64_t DocStore::find(std::string_view id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? -1 : int64_t(it->second);
}

}  // namespace verity::index
