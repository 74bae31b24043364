#pragma once
// A process-wide table that tokenizers add to and scorers read: readers take
// an immutable snapshot (one lock, then no locking while they use it), and a
// writer replaces the snapshot only when it adds something. Used by the case
// folds and the surface spellings (text/case_folds.hpp, text/surface.hpp).
#include <memory>
#include <mutex>
#include <utility>

namespace verity::text::detail {

template <class Table>
class SnapshotRegistry {
 public:
  std::shared_ptr<const Table> snapshot() {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }
  // update(const Table& now) returns std::optional<Table>: the next table, or
  // nullopt when it would add nothing. Writers are serialized.
  template <class Update>
  void update(Update&& update) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto next = update(*current_)) current_ = std::make_shared<const Table>(std::move(*next));
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<const Table> current_ = std::make_shared<const Table>();
};

// One registry per table type, never destroyed: readers may outlive static destruction order.
template <class Table>
SnapshotRegistry<Table>& registry_of() {
  static auto* r = new SnapshotRegistry<Table>;
  return *r;
}

}  // namespace verity::text::detail
