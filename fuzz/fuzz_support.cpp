#include "fuzz_support.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/crc32c.hpp"
#include "core/log.hpp"

namespace verity::fuzz {
namespace fs = std::filesystem;

namespace {
std::string make_scratch_dir() {
  set_quiet(true);  // the libraries' progress lines would drown libFuzzer's output
  std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : fs::temp_directory_path().string();
  std::string tmpl = base + "/verity_fuzz.XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    std::perror("verity fuzz: mkdtemp");
    std::abort();
  }
  static std::string dir = tmpl;  // atexit needs it past main()
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(dir, ec);
  });
  return dir;
}
}  // namespace

const std::string& scratch_dir() {
  static const std::string dir = make_scratch_dir();
  return dir;
}

std::string write_input(std::string_view name, std::string_view bytes) {
  std::string path = scratch_dir() + "/" + std::string(name);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(path.c_str());
    std::abort();
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0) {
      std::perror(path.c_str());
      std::abort();
    }
    done += size_t(w);
  }
  ::close(fd);
  return path;
}

void unexpected_exception(const char* what) {
  std::fprintf(stderr, "verity fuzz: exception other than verity::Error escaped: %s\n", what);
  std::abort();
}

void property_failed(const std::string& message) {
  std::fprintf(stderr, "verity fuzz: property failed: %s\n", message.c_str());
  std::abort();
}

namespace {
// Calls fn(tag_offset, payload_offset, length) for each well-framed section
// (header: magic[4] u32 version u64 flags; section: tag[4] u32 crc u64 length,
// zero pad to 64, payload); stops at END. or at the first bad frame.
template <typename Fn>
void for_each_section(const std::string& image, Fn fn) {
  size_t pos = 16;
  while (pos + 16 <= image.size()) {
    if (image.compare(pos, 4, "END.") == 0) return;
    uint64_t len;
    std::memcpy(&len, image.data() + pos + 8, 8);
    const size_t tag_at = pos;
    pos += 16;
    pos += (64 - pos % 64) % 64;
    if (pos > image.size() || len > image.size() - pos) return;
    if (!fn(tag_at, pos, size_t(len))) return;
    pos += size_t(len);
  }
}
}  // namespace

void fix_section_crcs(std::string& image) {
  for_each_section(image, [&](size_t tag_at, size_t payload, size_t len) {
    const uint32_t crc = crc32c(image.data() + payload, len);
    std::memcpy(image.data() + tag_at + 4, &crc, 4);
    return true;
  });
}

std::string write_section_input(std::string_view name, const uint8_t* data, size_t size) {
  std::string image(reinterpret_cast<const char*>(data), size);
  fix_section_crcs(image);
  return write_input(name, image);
}

std::pair<size_t, size_t> section_payload(const std::string& image, std::string_view tag) {
  std::pair<size_t, size_t> found{0, 0};
  for_each_section(image, [&](size_t tag_at, size_t payload, size_t len) {
    if (image.compare(tag_at, 4, tag) != 0) return true;
    found = {payload, len};
    return false;
  });
  return found;
}

std::string source_dir() { return VERITY_SOURCE_DIR; }

}  // namespace verity::fuzz
