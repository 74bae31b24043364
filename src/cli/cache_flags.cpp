#include "cli/cache_flags.hpp"

namespace verity::cli {

void add_cache_flags(CLI::App* cmd, cache::CacheOptions& o, const std::string& prefix) {
  const std::string p = "--" + prefix;
  cmd->add_option(p + "encoder", o.encoder,
                  "Encoder spec; default: the one the database records, or use-lite for a new database");
  cmd->add_option(p + "verifier", o.verifier, "Verifier that decides hits (make_verifier spec)")
      ->envname("VERITY_CACHE_VERIFIER")
      ->capture_default_str();
  cmd->add_option(p + "candidates", o.candidates, "Nearest entries the verifier scores per lookup")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option(p + "cosine-floor", o.cosine_floor, "Pooled cosine below which a candidate is not verified")
      ->check(CLI::Range(-1.0, 1.0))
      ->capture_default_str();
  cmd->add_option(p + "fallback-threshold", o.fallback_threshold,
                  "Hit threshold when the verifier has no calibrated default and the request gives none")
      ->capture_default_str();
  cmd->add_option(p + "max-entries", o.max_entries, "Entries per namespace before LRU eviction (0 = no cap)")
      ->envname("VERITY_CACHE_MAX_ENTRIES")
      ->capture_default_str();
  cmd->add_option(p + "max-bytes", o.max_bytes,
                  "Bytes (texts and vectors) per namespace before LRU eviction (0 = no cap)")
      ->envname("VERITY_CACHE_MAX_BYTES")
      ->capture_default_str();
  cmd->add_option(p + "durability", o.durability,
                  "full: fsync every commit (survives power loss); normal: survives a process crash only")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();
  cmd->add_option(p + "check", o.check, "SQLite check when opening: none, quick or full")
      ->check(CLI::IsMember({"none", "quick", "full"}))
      ->capture_default_str();
  cmd->add_option(p + "encoder-threads", o.encoder_threads,
                  "Torch threads per encode call (0 = runtime default); requests already run in parallel")
      ->capture_default_str();
  cmd->add_option(p + "put-threads", o.put_threads, "Concurrent encode calls of a bulk put (0 = all cores)")
      ->capture_default_str();
}

}  // namespace verity::cli
