#include "index/token_store.hpp"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "core/cpu_features.hpp"
#include "core/error.hpp"

namespace verity::index {

namespace {
constexpr std::string_view kMagic = "VTOK";
constexpr uint32_t kVersion = 1;
constexpr float kHalfMax = 65504.0f;
}  // namespace

uint16_t float_to_half(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past 65504: infinity
  if (abs < 0x38800000u) {
    // Below half's normal range: count units of 2^-24, rounding to even
    // (nearbyint under the default rounding mode). 1024 units is exactly the
    // smallest normal, whose encoding 0x0400 follows on naturally.
    const float units = std::nearbyint(std::bit_cast<float>(abs) * 16777216.0f);
    return uint16_t(sign | uint16_t(units));
  }
  const uint32_t mantissa = abs & 0x7fffffu;
  const uint32_t exponent = (abs >> 23) - 127 + 15;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // carry may bump the exponent
  return uint16_t(sign | half);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float v = std::ldexp(float(mantissa), -24);
    return sign ? -v : v;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

namespace {
// Stage 2 decodes ~100 documents per query: use the F16C conversion
// instruction when the CPU has it (checked once), else the portable routine.
__attribute__((target("f16c,avx"))) void decode_halves_f16c(const uint16_t* in, float* out,
                                                           size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) out[i] = half_to_float(in[i]);
}
}  // namespace

void decode_halves(const uint16_t* in, float* out, size_t n) {
  static const bool has_f16c = cpu_has_f16c() && __builtin_cpu_supports("avx");
  if (has_f16c) return decode_halves_f16c(in, out, n);
  for (size_t i = 0; i < n; ++i) out[i] = half_to_float(in[i]);
}

std::string_view to_string(TokenPrecision p) {
  switch (p) {
    case TokenPrecision::fp32: return "fp32";
    case TokenPrecision::fp16: return "fp16";
    case TokenPrecision::int8: return "int8";
  }
  return "?";
}

TokenPrecision parse_token_precision(std::string_view name) {
  if (name == "fp32") return TokenPrecision::fp32;
  if (name == "fp16") return TokenPrecision::fp16;
  if (name == "int8") return TokenPrecision::int8;
  throw ConfigError(cat("token store precision '", name, "' is unknown (valid: fp32, fp16, int8)"));
}

size_t bytes_per_token_vector(TokenPrecision p, size_t dim) {
  switch (p) {
    case TokenPrecision::fp32: return 4 * dim;
    case TokenPrecision::fp16: return 2 * dim;
    case TokenPrecision::int8: return dim + sizeof(float);
  }
  return 0;
}

namespace {
size_t code_bytes(TokenPrecision p) {
  return p == TokenPrecision::fp32 ? 4 : p == TokenPrecision::fp16 ? 2 : 1;
}
}  // namespace

TokenStoreBuilder::TokenStoreBuilder(size_t dim, TokenPrecision precision)
    : dim_(dim), precision_(precision) {
  VERITY_CHECK(dim > 0, ConfigError, "token store: dim must be positive");
}

uint64_t TokenStoreBuilder::add_document(std::span<const float> tokens, std::span<const uint32_t> ids,
                                         std::span<const float> pooled) {
  const uint64_t doc = num_documents();
  // Identities and pooled vectors: every document or none (the first decides;
  // for identities the first with tokens, since an empty text has none to give).
  if (doc == 0) with_pooled_ = !pooled.empty();
  const bool has_tokens = !tokens.empty();
  if (has_tokens && !ids_decided_) with_ids_ = !ids.empty(), ids_decided_ = true;
  VERITY_CHECK(!has_tokens || ids.empty() != with_ids_, ConfigError, "token store: document ", doc,
               with_ids_ ? " has no token identities, earlier documents have"
                         : " has token identities, earlier documents have none");
  VERITY_CHECK(pooled.empty() != with_pooled_, ConfigError, "token store: document ", doc,
               with_pooled_ ? " has no pooled vector, earlier documents have" : " has a pooled vector, document 0 has none");
  VERITY_CHECK(ids.empty() || ids.size() * dim_ == tokens.size(), ConfigError, "token store: document ", doc, " has ",
               ids.size(), " token identities for ", tokens.size() / dim_, " token vectors");
  VERITY_CHECK(pooled.empty() || pooled.size() == dim_, ConfigError, "token store: document ", doc,
               " pooled vector has ", pooled.size(), " values, dim=", dim_);
  VERITY_CHECK(tokens.size() % dim_ == 0, ConfigError, "token store: document ", doc, " has ",
               tokens.size(), " floats, not a multiple of dim=", dim_);
  const size_t n = tokens.size() / dim_;
  for (size_t i = 0; i < tokens.size(); ++i) {
    VERITY_CHECK(std::isfinite(tokens[i]), ConfigError, "token store: document ", doc, " token ",
                 i / dim_, " component ", i % dim_, " is not finite (", tokens[i], ")");
    VERITY_CHECK(precision_ != TokenPrecision::fp16 || std::fabs(tokens[i]) <= kHalfMax,
                 ConfigError, "token store: document ", doc, " token ", i / dim_, " component ",
                 i % dim_, " = ", tokens[i], " exceeds the fp16 range (±65504)");
  }
  const size_t old = codes_.size();
  codes_.resize(old + n * dim_ * code_bytes(precision_));
  std::byte* out = codes_.data() + old;
  switch (precision_) {
    case TokenPrecision::fp32:
      if (!tokens.empty()) std::memcpy(out, tokens.data(), tokens.size_bytes());  // an empty span may be null
      break;
    case TokenPrecision::fp16:
      for (size_t i = 0; i < tokens.size(); ++i) {
        const uint16_t h = float_to_half(tokens[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      break;
    case TokenPrecision::int8:
      for (size_t t = 0; t < n; ++t) {
        const float* v = tokens.data() + t * dim_;
        float max_abs = 0;
        for (size_t c = 0; c < dim_; ++c) max_abs = std::max(max_abs, std::fabs(v[c]));
        const float scale = max_abs / 127.0f;
        scales_.push_back(scale);
        for (size_t c = 0; c < dim_; ++c) {
          const float q = scale > 0 ? std::nearbyint(v[c] / scale) : 0.0f;
          out[t * dim_ + c] = std::byte(uint8_t(int8_t(std::clamp(q, -127.0f, 127.0f))));
        }
      }
      break;
  }
  offsets_.push_back(offsets_.back() + n);
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  if (!pooled.empty()) {
    double norm = 0;
    for (float v : pooled) {
      VERITY_CHECK(std::isfinite(v), ConfigError, "token store: document ", doc, " pooled vector is not finite");
      norm += double(v) * v;
    }
    const float inv = norm > 0 ? float(1.0 / std::sqrt(norm)) : 0.0f;
    for (float v : pooled) pooled_.push_back(v * inv);
  }
  return doc;
}

void TokenStoreBuilder::save(const std::string& path) const {
  SectionWriter out(path, kMagic, kVersion);
  ByteWriter meta;
  meta.write<uint64_t>(dim_);
  meta.write<uint32_t>(uint32_t(precision_));
  meta.write<uint64_t>(num_documents());
  meta.write<uint64_t>(num_tokens());
  out.add("META", meta);
  out.add_array("OFFS", std::span<const uint64_t>(offsets_));
  out.add("DATA", codes_.data(), codes_.size());
  if (precision_ == TokenPrecision::int8) out.add_array("SCAL", std::span<const float>(scales_));
  if (with_ids_) out.add_array("TIDS", std::span<const uint32_t>(ids_));
  if (with_pooled_) out.add_array("POOL", std::span<const float>(pooled_));
  out.commit();
}

TokenStore::TokenStore(const std::string& path) : file_(path, kMagic, kVersion) {
  auto meta = file_.reader("META");
  dim_ = meta.read<uint64_t>();
  const auto precision = meta.read<uint32_t>();
  const auto documents = meta.read<uint64_t>();
  const auto tokens = meta.read<uint64_t>();
  VERITY_CHECK(dim_ > 0 && dim_ <= (1u << 20), FormatError, path, ": META dim=", dim_,
               " is out of range");
  VERITY_CHECK(precision <= 2, FormatError, path, ": META precision=", precision,
               " is unknown (0 fp32, 1 fp16, 2 int8)");
  precision_ = TokenPrecision(precision);
  offsets_ = file_.array<uint64_t>("OFFS");
  VERITY_CHECK(offsets_.size() == documents + 1, FormatError, path, ": OFFS holds ",
               offsets_.size(), " offsets, expected documents+1 = ", documents + 1);
  VERITY_CHECK(offsets_[0] == 0, FormatError, path, ": OFFS[0]=", offsets_[0], ", expected 0");
  for (size_t i = 1; i < offsets_.size(); ++i)
    VERITY_CHECK(offsets_[i] >= offsets_[i - 1], FormatError, path, ": OFFS[", i, "]=",
                 offsets_[i], " is below OFFS[", i - 1, "]=", offsets_[i - 1]);
  VERITY_CHECK(offsets_.back() == tokens, FormatError, path, ": last offset ", offsets_.back(),
               " != META tokens=", tokens);
  codes_ = file_.section("DATA");
  VERITY_CHECK(tokens <= codes_.size() && codes_.size() == tokens * dim_ * code_bytes(precision_),
               FormatError, path, ": DATA holds ", codes_.size(), " bytes, expected tokens×dim×",
               code_bytes(precision_), " = ", tokens, "×", dim_, "×", code_bytes(precision_));
  if (precision_ == TokenPrecision::int8) {
    scales_ = file_.array<float>("SCAL");
    VERITY_CHECK(scales_.size() == tokens, FormatError, path, ": SCAL holds ", scales_.size(),
                 " scales, expected ", tokens);
    for (size_t i = 0; i < scales_.size(); ++i)
      VERITY_CHECK(std::isfinite(scales_[i]) && scales_[i] >= 0, FormatError, path, ": SCAL[", i,
                   "]=", scales_[i], " is not a finite non-negative scale");
  }
  if (file_.has("TIDS")) {
    ids_ = file_.array<uint32_t>("TIDS");
    VERITY_CHECK(ids_.size() == tokens, FormatError, path, ": TIDS holds ", ids_.size(), " token identities, expected ",
                 tokens);
  }
  if (file_.has("POOL")) {
    pooled_ = file_.array<float>("POOL");
    VERITY_CHECK(pooled_.size() == documents * dim_, FormatError, path, ": POOL holds ", pooled_.size(),
                 " values, expected documents×dim = ", documents, "×", dim_);
    for (size_t i = 0; i < pooled_.size(); ++i)
      VERITY_CHECK(std::isfinite(pooled_[i]), FormatError, path, ": POOL value ", i, " is not finite");
  }
}

std::span<const uint32_t> TokenStore::ids(uint64_t doc) const {
  check_doc(doc);
  if (ids_.empty()) return {};
  return ids_.subspan(size_t(offsets_[doc]), size_t(offsets_[doc + 1] - offsets_[doc]));
}

std::span<const float> TokenStore::pooled(uint64_t doc) const {
  check_doc(doc);
  if (pooled_.empty()) return {};
  return pooled_.subspan(size_t(doc) * dim_, dim_);
}

void TokenStore::check_doc(uint64_t doc) const {
  VERITY_CHECK(doc < num_documents(), ConfigError, path(), ": document ", doc,
               " out of range (", num_documents(), " documents)");
}

size_t TokenStore::num_tokens(uint64_t doc) const {
  check_doc(doc);
  return size_t(offsets_[doc + 1] - offsets_[doc]);
}

std::vector<float> TokenStore::get(uint64_t doc) const {
  std::vector<float> out(num_tokens(doc) * dim_);
  decode(doc, out);
  return out;
}

TokenStore::RawRows TokenStore::raw(uint64_t doc) const {
  const size_t n = num_tokens(doc), first = size_t(offsets_[doc]);
  return {codes_.data() + first * dim_ * code_bytes(precision_),
          precision_ == TokenPrecision::int8 ? scales_.data() + first : nullptr, n};
}

void TokenStore::decode(uint64_t doc, std::span<float> out) const {
  const size_t n = num_tokens(doc), first = size_t(offsets_[doc]);
  VERITY_CHECK(out.size() == n * dim_, ConfigError, path(), ": decode buffer for document ", doc,
               " holds ", out.size(), " floats, needs ", n * dim_);
  const std::byte* in = codes_.data() + first * dim_ * code_bytes(precision_);
  switch (precision_) {
    case TokenPrecision::fp32:
      if (!out.empty()) std::memcpy(out.data(), in, out.size_bytes());  // an empty span may be null
      break;
    case TokenPrecision::fp16:
      decode_halves(reinterpret_cast<const uint16_t*>(in), out.data(), out.size());
      break;
    case TokenPrecision::int8:
      for (size_t t = 0; t < n; ++t) {
        const float scale = scales_[first + t];
        for (size_t c = 0; c < dim_; ++c)
          out[t * dim_ + c] = float(int8_t(uint8_t(in[t * dim_ + c]))) * scale;
      }
      break;
  }
}

}  // namespace verity::index
