#include "encode/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace verity::encode {
namespace {

// Same bound as the reference implementation: a header beyond 100 MB is
// treated as corruption rather than allocated.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr size_t kMaxRank = 16;

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8}, {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2}, {DType::I8, "I8", 1},    {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1},
};

const DTypeInfo& info(DType d) {
  for (const auto& i : kDTypes)
    if (i.dtype == d) return i;
  VERITY_ASSERT(false);
  return kDTypes[0];
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3FFu) << 13;
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | mant << 13;  // inf / nan
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  return std::bit_cast<float>(bits);
}

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// product(shape) with overflow detection; returns false on overflow.
bool checked_numel(const std::vector<int64_t>& shape, uint64_t& out) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > UINT64_MAX / uint64_t(d)) return false;
    n *= uint64_t(d);
  }
  out = n;
  return true;
}

}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }
std::string_view dtype_name(DType dtype) { return info(dtype).name; }

DType parse_dtype(std::string_view name, const std::string& context) {
  for (const auto& i : kDTypes)
    if (i.name == name) return i.dtype;
  std::string valid;
  for (const auto& i : kDTypes) valid += (valid.empty() ? "" : ", ") + std::string(i.name);
  throw FormatError(cat(context, ": unsupported dtype '", name, "' (valid: ", valid, ")"));
}

uint64_t TensorView::numel() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  return n;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path) {
  auto bytes = file_.bytes();
  VERITY_CHECK(bytes.size() >= 8, FormatError, path, ": ", bytes.size(),
               " bytes is too short for a safetensors file (needs an 8-byte header length)");
  uint64_t header_len = load<uint64_t>(bytes.data());
  VERITY_CHECK(header_len <= kMaxHeaderBytes, FormatError, path, ": header length ", header_len,
               " exceeds the ", kMaxHeaderBytes, "-byte limit (corrupted or not safetensors)");
  VERITY_CHECK(header_len <= bytes.size() - 8, FormatError, path, ": header length ", header_len,
               " runs past the end of the ", bytes.size(), "-byte file (truncated?)");
  std::string_view header_text(reinterpret_cast<const char*>(bytes.data()) + 8, header_len);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_text);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": header is not valid JSON: ", e.what()));
  }
  VERITY_CHECK(header.is_object(), FormatError, path, ": header must be a JSON object");

  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = bytes.size() - data_start;
  struct Range {
    uint64_t begin, end;
    const std::string* name;
  };
  std::vector<Range> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const auto& entry = it.value();
    if (name == "__metadata__") {
      VERITY_CHECK(entry.is_object(), FormatError, path, ": __metadata__ must be an object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        VERITY_CHECK(m.value().is_string(), FormatError, path, ": __metadata__ field '", m.key(),
                     "' must be a string");
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string ctx = cat(path, ": tensor '", name, "'");
    VERITY_CHECK(entry.is_object(), FormatError, ctx, " must be an object");
    for (const char* field : {"dtype", "shape", "data_offsets"})
      VERITY_CHECK(entry.contains(field), FormatError, ctx, " has no '", field, "' field");
    VERITY_CHECK(entry["dtype"].is_string(), FormatError, ctx, ": 'dtype' must be a string");
    TensorView view;
    view.name = name;
    view.dtype = parse_dtype(entry["dtype"].get<std::string>(), ctx);
    const auto& shape = entry["shape"];
    VERITY_CHECK(shape.is_array() && shape.size() <= kMaxRank, FormatError, ctx,
                 ": 'shape' must be an array of at most ", kMaxRank, " dimensions");
    for (const auto& d : shape) {
      VERITY_CHECK(d.is_number_unsigned() || (d.is_number_integer() && d.get<int64_t>() >= 0),
                   FormatError, ctx, ": 'shape' entries must be non-negative integers, got ",
                   d.dump());
      view.shape.push_back(d.get<int64_t>());
    }
    const auto& offsets = entry["data_offsets"];
    VERITY_CHECK(offsets.is_array() && offsets.size() == 2 && offsets[0].is_number_unsigned() &&
                     offsets[1].is_number_unsigned(),
                 FormatError, ctx, ": 'data_offsets' must be two non-negative integers, got ",
                 offsets.dump());
    uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    VERITY_CHECK(begin <= end, FormatError, ctx, ": data_offsets begin ", begin, " > end ", end);
    VERITY_CHECK(end <= data_size, FormatError, ctx, ": data_offsets end ", end,
                 " is past the ", data_size, "-byte data buffer (truncated file?)");
    uint64_t numel = 0;
    VERITY_CHECK(checked_numel(view.shape, numel) && numel <= UINT64_MAX / dtype_size(view.dtype),
                 FormatError, ctx, ": shape ", shape_text(view.shape), " overflows");
    VERITY_CHECK(end - begin == numel * dtype_size(view.dtype), FormatError, ctx, ": shape ",
                 shape_text(view.shape), " x ", dtype_name(view.dtype), " needs ",
                 numel * dtype_size(view.dtype), " bytes but data_offsets [", begin, ",", end,
                 ") hold ", end - begin);
    view.data = bytes.subspan(data_start + begin, end - begin);
    auto [pos, inserted] = tensors_.emplace(name, std::move(view));
    VERITY_ASSERT(inserted);  // JSON object keys are unique after parsing
    ranges.push_back({begin, end, &pos->first});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const std::string* previous = nullptr;
  for (const auto& r : ranges) {
    VERITY_CHECK(r.begin >= expected, FormatError, path, ": tensor '", *r.name, "' [", r.begin,
                 ",", r.end, ") overlaps tensor '", previous ? *previous : "", "'");
    VERITY_CHECK(r.begin == expected, FormatError, path, ": ", r.begin - expected,
                 " unreferenced bytes before tensor '", *r.name, "' at offset ", expected);
    expected = r.end;
    previous = r.name;
  }
  VERITY_CHECK(expected == data_size, FormatError, path, ": data buffer has ", data_size,
               " bytes but the tensors cover only ", expected);
}

bool SafetensorsFile::has(std::string_view name) const { return tensors_.find(name) != tensors_.end(); }

const TensorView& SafetensorsFile::tensor(std::string_view name) const {
  auto it = tensors_.find(name);
  VERITY_CHECK(it != tensors_.end(), FormatError, path(), ": no tensor '", name, "'");
  return it->second;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& [name, view] : tensors_) out.push_back(name);
  return out;
}

std::vector<float> SafetensorsFile::to_float32(std::string_view name) const {
  const TensorView& t = tensor(name);
  const size_t n = t.numel();
  const std::byte* p = t.data.data();
  std::vector<float> out(n);
  switch (t.dtype) {
    case DType::F32: std::memcpy(out.data(), p, n * 4); break;
    case DType::F64: for (size_t i = 0; i < n; ++i) out[i] = float(load<double>(p + 8 * i)); break;
    case DType::F16: for (size_t i = 0; i < n; ++i) out[i] = half_to_float(load<uint16_t>(p + 2 * i)); break;
    case DType::BF16:
      for (size_t i = 0; i < n; ++i)
        out[i] = std::bit_cast<float>(uint32_t(load<uint16_t>(p + 2 * i)) << 16);
      break;
    default: {
      auto ints = to_int64(name);
      for (size_t i = 0; i < n; ++i) out[i] = float(ints[i]);
    }
  }
  return out;
}

std::vector<int64_t> SafetensorsFile::to_int64(std::string_view name) const {
  const TensorView& t = tensor(name);
  const size_t n = t.numel();
  const std::byte* p = t.data.data();
  std::vector<int64_t> out(n);
  switch (t.dtype) {
    case DType::I64: for (size_t i = 0; i < n; ++i) out[i] = load<int64_t>(p + 8 * i); break;
    case DType::I32: for (size_t i = 0; i < n; ++i) out[i] = load<int32_t>(p + 4 * i); break;
    case DType::I16: for (size_t i = 0; i < n; ++i) out[i] = load<int16_t>(p + 2 * i); break;
    case DType::I8: for (size_t i = 0; i < n; ++i) out[i] = load<int8_t>(p + i); break;
    case DType::U8:
    case DType::BOOL: for (size_t i = 0; i < n; ++i) out[i] = load<uint8_t>(p + i); break;
    default:
      throw FormatError(cat(path(), ": tensor '", name, "' has dtype ", dtype_name(t.dtype),
                            ", expected an integer dtype"));
  }
  return out;
}

TensorToWrite f32_tensor(std::string name, std::vector<int64_t> shape, std::span<const float> values) {
  return {std::move(name), DType::F32, std::move(shape), std::as_bytes(values)};
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<const TensorToWrite*> order;
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->name < b->name; });
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) {
    nlohmann::json meta = nlohmann::json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& t = *order[i];
    const std::string ctx = cat(path, ": tensor '", t.name, "'");
    VERITY_CHECK(!t.name.empty() && t.name != "__metadata__", ConfigError, ctx, ": invalid name");
    VERITY_CHECK(i == 0 || order[i - 1]->name != t.name, ConfigError, ctx, " given twice");
    uint64_t numel = 0;
    VERITY_CHECK(checked_numel(t.shape, numel), ConfigError, ctx, ": invalid shape ",
                 shape_text(t.shape));
    VERITY_CHECK(numel * dtype_size(t.dtype) == t.data.size(), ConfigError, ctx, ": shape ",
                 shape_text(t.shape), " x ", dtype_name(t.dtype), " needs ",
                 numel * dtype_size(t.dtype), " bytes, got ", t.data.size());
    header[t.name] = {{"dtype", std::string(dtype_name(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  AtomicFileWriter out(path);
  uint64_t len = text.size();
  out.write(&len, sizeof len);
  out.write(text);
  for (const auto* t : order) out.write(t->data.data(), t->data.size());
  out.commit();
}

}  // namespace verity::encode
