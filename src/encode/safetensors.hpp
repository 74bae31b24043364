#pragma once
// Reader and writer for the safetensors format (Hugging Face), written by hand:
//   u64 little-endian N | N bytes of JSON header | raw tensor buffer
// The header maps tensor name -> {"dtype", "shape", "data_offsets": [begin, end)}
// with offsets relative to the buffer start, plus an optional "__metadata__"
// object of string -> string. The reader mmaps the file and validates every
// entry before any tensor is handed out: known dtype, begin <= end, inside the
// file, size == product(shape) * dtype size, no overlaps and no holes (the
// tensors tile the buffer exactly, as the reference implementation requires).
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/io.hpp"

namespace verity::encode {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);  // "F32", "BF16", ...
// Throws FormatError naming context when the name is not a known dtype.
DType parse_dtype(std::string_view name, const std::string& context);

// A tensor inside a mapped file; data points into the mapping (not aligned in
// general: use memcpy or to_float32, never reinterpret_cast to float*).
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::span<const std::byte> data;
  uint64_t numel() const;
};

class SafetensorsFile {
 public:
  // Maps and validates the whole file; throws FormatError naming the file and
  // the tensor or field at fault.
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
  bool has(std::string_view name) const;
  // Throws FormatError "<path>: no tensor '<name>'" when absent.
  const TensorView& tensor(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Copies the tensor as float32, converting F64/F16/BF16 (and integer types).
  std::vector<float> to_float32(std::string_view name) const;
  // Copies an integer tensor (I64/I32/I16/I8/U8/BOOL) as int64.
  std::vector<int64_t> to_int64(std::string_view name) const;

 private:
  MappedFile file_;
  std::map<std::string, TensorView, std::less<>> tensors_;
  std::map<std::string, std::string> metadata_;
};

struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::span<const std::byte> data;  // exactly product(shape) * dtype_size bytes
};

// Convenience for the common case: an F32 tensor over caller-owned floats.
TensorToWrite f32_tensor(std::string name, std::vector<int64_t> shape, std::span<const float> values);

// Writes atomically (temp file + fsync + rename). Tensors are laid out in name
// order; the header is space-padded to a multiple of 8 bytes so F32/F64 data
// is aligned in the mapping. Throws ConfigError on duplicate names, size
// mismatches or a "__metadata__" tensor name.
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace verity::encode
