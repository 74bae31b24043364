// The server's request framing on arbitrary bytes: where a request ends, chunked
// bodies, limits. Properties: a complete request lies within the input and after
// its headers; feeding the same bytes split at any point never changes the verdict
// once all bytes are in.
#include "fuzz_support.hpp"
#include "serve/request_framing.hpp"

using namespace verity;
using serve::Framing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  serve::FramingLimits limits;
  limits.max_header_bytes = 1024;
  limits.max_body_bytes = 2048;
  const Framing f = serve::frame_request(bytes, limits);
  if (f.state == Framing::State::kComplete) {
    VERITY_FUZZ_EXPECT(f.length <= size && f.header_end > 0 && f.header_end <= f.length, "length ", f.length,
                       ", headers ", f.header_end, ", input ", size);
    VERITY_FUZZ_EXPECT(f.expect_begin <= f.expect_end && f.expect_end <= f.header_end, "expect line");
    // The request framed the same with any bytes after it.
    const Framing again = serve::frame_request(bytes.substr(0, f.length), limits);
    VERITY_FUZZ_EXPECT(again.state == Framing::State::kComplete && again.length == f.length,
                       "a prefix frames differently");
  }
  if (f.state == Framing::State::kRejected)
    VERITY_FUZZ_EXPECT(f.status == 400 || f.status == 413 || f.status == 431 || f.status == 501, "status ",
                       f.status);
  // Every prefix is incomplete or agrees with the whole (a verdict never flips back).
  for (size_t cut : {size / 3, size / 2, size - size / 4}) {
    const Framing p = serve::frame_request(bytes.substr(0, cut), limits);
    if (p.state == Framing::State::kComplete)
      VERITY_FUZZ_EXPECT(f.state == Framing::State::kComplete && f.length == p.length, "prefix of ", cut,
                         " bytes completes at ", p.length);
  }
  return 0;
}
