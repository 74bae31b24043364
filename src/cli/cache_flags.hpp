#pragma once
// Cache options shared by `serve --cache`, `cache ...` and `cache-eval`.
#include <CLI/CLI.hpp>
#include <string>

#include "cache/cache.hpp"

namespace verity::cli {

// Adds --PREFIXverifier, --PREFIXcandidates, ... writing into o; `prefix` is
// "cache-" where the command has other options of the same name (serve).
void add_cache_flags(CLI::App* cmd, cache::CacheOptions& o, const std::string& prefix);

}  // namespace verity::cli
