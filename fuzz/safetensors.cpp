// safetensors files: u64 header length, JSON header, tensor bytes. Every tensor of an
// accepted file must convert (to_float32; to_int64 for integer dtypes).
#include "encode/safetensors.hpp"
#include "fuzz_support.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_input("model.safetensors", data, size);
  fuzz::expect_clean_errors([&] {
    encode::SafetensorsFile f(path);
    for (const auto& name : f.names()) {
      const auto& t = f.tensor(name);
      VERITY_FUZZ_EXPECT(f.to_float32(name).size() == t.numel(), "tensor ", name);
      const bool integer = t.dtype != encode::DType::F64 && t.dtype != encode::DType::F32 &&
                           t.dtype != encode::DType::F16 && t.dtype != encode::DType::BF16;
      if (integer) VERITY_FUZZ_EXPECT(f.to_int64(name).size() == t.numel(), "tensor ", name);
    }
  });
  return 0;
}
