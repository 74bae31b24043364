// The SectionFile container itself (header, section framing, crc32c, END marker),
// read under the file's own magic so that any 4 bytes get past the magic check.
#include "core/section_file.hpp"
#include "fuzz_support.hpp"

using namespace verity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_input("file.sec", data, size);
  const std::string magic = size >= 4 ? std::string(reinterpret_cast<const char*>(data), 4) : "VDOC";
  for (bool verify : {true, false})
    fuzz::expect_clean_errors([&] {
      SectionFile f(path, magic, 4, verify);
      for (const char* tag : {"META", "DATA", "OFFS", "CONF"})
        if (f.has(tag)) (void)f.reader(tag).remaining();
    });
  return 0;
}
