// TF.js graph model.json (weightsManifest: groups of shard paths and weight specs)
// as read by the USE-lite converter, next to a 64-byte weight shard "w.bin" and a
// small vocab.json. Anything short of the real graph must be a verity::Error.
#include <filesystem>

#include "core/io.hpp"
#include "encode/use_lite.hpp"
#include "fuzz_support.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    const auto d = fuzz::scratch_dir() + "/tfjs";
    make_directories(d);
    write_file_atomic(d + "/w.bin", std::string(64, '\x01'));
    write_file_atomic(d + "/vocab.json", R"([["<unk>", 0], ["<s>", 0], ["</s>", 0], ["a", -1], ["b", -2], ["c", -3], ["\u2581the", -3.5]])");
    return d;
  }();
  write_file_atomic(dir + "/model.json", std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean_errors([&] { encode::convert_use_lite(dir, fuzz::scratch_dir() + "/tfjs_out"); });
  return 0;
}
