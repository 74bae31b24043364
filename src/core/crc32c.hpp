#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace verity {
// CRC-32C (Castagnoli). Pass the previous value to continue a running checksum.
uint32_t crc32c(const void* data, size_t n, uint32_t prev = 0);
// 64-bit FNV-1a, for content hashes used as cache keys (not for integrity).
uint64_t fnv1a64(const void* data, size_t n, uint64_t prev = 14695981039346656037ull);
// A 64-bit hash as 16 lowercase hex digits, zero-padded (as manifests and cache names print it).
std::string hex64(uint64_t v);
}  // namespace verity
