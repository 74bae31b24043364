#pragma once
// Directory outputs (index and model directories) are built in a sibling staging
// directory and then put in place. These keep that step crash-safe: a process
// killed at any instant leaves the old complete directory or the new complete one
// at the target, and the next writer clears what a killed one left beside it.
#include <cstddef>
#include <string>

namespace verity {

// Moves the directory `staging` to `target`. An existing target is swapped with
// the staging directory in one rename (renameat2 RENAME_EXCHANGE) and then removed,
// so no instant exists without a complete directory at target. Filesystems that
// cannot exchange fall back to rename-aside-then-rename (a brief window without
// one). Throws Error naming both paths.
void replace_directory(const std::string& staging, const std::string& target);

// Removes "<path>.tmp.<pid>[.*]" and "<path>.old.<pid>[.*]" siblings (files or directories)
// whose process no longer runs: what a killed writer of `path` left behind.
// Returns how many were removed. Never throws.
size_t remove_stale_siblings(const std::string& path);

}  // namespace verity
