#pragma once
// Per-document token vectors for stage-2 verification (late interaction).
// Each document holds a variable number of d-dimensional token vectors,
// stored compactly in one of three precisions:
//   fp32  4·d bytes per token vector, exact (the reference);
//   fp16  2·d bytes, IEEE half with round-to-nearest-even: relative error
//         ≤ 2^-11 ≈ 4.9e-4 per component in half's normal range (|x| ≥ 2^-14),
//         absolute error ≤ 2^-25 below it; |x| > 65504 is rejected;
//   int8  d + 4 bytes: a per-vector scale s = max|x|/127 and q = round(x/s)
//         in [-127, 127]; absolute error per component ≤ s/2.
//
// On-disk format: a SectionFile with magic "VTOK", version 1:
//   META  u64 dim | u32 precision (0 fp32, 1 fp16, 2 int8) | u64 documents | u64 tokens
//   OFFS  u64[documents + 1]   token offsets; OFFS[0] = 0, non-decreasing, last = tokens
//   DATA  tokens × dim codes   f32 / u16 half bits / i8
//   SCAL  f32[tokens]          int8 only: the per-vector scale
//   TIDS  u32[tokens]          optional: token identities (verify::token_identity of the piece)
//   POOL  f32[documents × dim] optional: L2-normalized pooled vectors
// TIDS and POOL let stage 2 give context-aware verifiers (F5) exact token
// matches and the pooled cosine; stores written without them still load.
// The file is memory-mapped on load; offsets, sizes and scales are validated
// once, so get()/decode() need no further checks beyond the document range.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/section_file.hpp"

namespace verity::index {

enum class TokenPrecision : uint32_t { fp32 = 0, fp16 = 1, int8 = 2 };

std::string_view to_string(TokenPrecision p);
// "fp32" | "fp16" | "int8"; anything else is a ConfigError listing those.
TokenPrecision parse_token_precision(std::string_view name);
// Bytes one stored token vector of dimension dim takes (codes + scale).
size_t bytes_per_token_vector(TokenPrecision p, size_t dim);

// Collects documents in memory and writes the file atomically on save().
class TokenStoreBuilder {
 public:
  TokenStoreBuilder(size_t dim, TokenPrecision precision);
  // Appends one document of n = tokens.size()/dim token vectors (n may be 0)
  // and returns its document number. Non-finite components, and for fp16
  // values beyond ±65504, throw ConfigError naming document, token and component.
  // ids (n token identities) and pooled (dim values) are optional, but given
  // for every document or for none.
  uint64_t add_document(std::span<const float> tokens, std::span<const uint32_t> ids = {},
                        std::span<const float> pooled = {});
  void save(const std::string& path) const;
  size_t num_documents() const { return offsets_.size() - 1; }
  size_t num_tokens() const { return offsets_.back(); }

 private:
  size_t dim_;
  TokenPrecision precision_;
  std::vector<uint64_t> offsets_{0};
  std::vector<std::byte> codes_;
  std::vector<float> scales_;
  bool with_ids_ = false, with_pooled_ = false;
  std::vector<uint32_t> ids_;
  std::vector<float> pooled_;
};

class TokenStore {
 public:
  // Maps and validates the file; damage or inconsistency throws FormatError.
  explicit TokenStore(const std::string& path);
  size_t dim() const { return dim_; }
  TokenPrecision precision() const { return precision_; }
  size_t num_documents() const { return offsets_.size() - 1; }
  size_t num_tokens() const { return size_t(offsets_.back()); }
  size_t num_tokens(uint64_t doc) const;
  // Dequantized token vectors of doc, [num_tokens(doc) × dim] row-major.
  std::vector<float> get(uint64_t doc) const;
  // Same into a caller buffer of exactly num_tokens(doc) × dim floats.
  void decode(uint64_t doc, std::span<float> out) const;
  // doc's codes as stored (no copy): n × dim values of precision() (f32,
  // u16 half bits or i8) and, for int8, n scales (nullptr otherwise).
  struct RawRows {
    const std::byte* codes = nullptr;
    const float* scales = nullptr;
    size_t n = 0;
  };
  RawRows raw(uint64_t doc) const;
  // doc's token identities and normalized pooled vector; empty when the
  // store was written without them.
  std::span<const uint32_t> ids(uint64_t doc) const;
  std::span<const float> pooled(uint64_t doc) const;
  bool has_ids() const { return !ids_.empty() || num_tokens() == 0; }
  bool has_pooled() const { return !pooled_.empty(); }
  const std::string& path() const { return file_.path(); }

 private:
  void check_doc(uint64_t doc) const;
  SectionFile file_;
  size_t dim_ = 0;
  TokenPrecision precision_ = TokenPrecision::fp32;
  std::span<const uint64_t> offsets_;
  std::span<const std::byte> codes_;
  std::span<const float> scales_;
  std::span<const uint32_t> ids_;
  std::span<const float> pooled_;
};

// IEEE 754 binary16 conversions (round to nearest even), exposed for tests.
uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);
// n halves to floats, with the CPU's F16C instruction when it has one.
void decode_halves(const uint16_t* in, float* out, size_t n);

}  // namespace verity::index
