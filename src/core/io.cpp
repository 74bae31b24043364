#include "core/io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "core/atomic_dir.hpp"

namespace verity {
namespace {
std::string errno_text() { return std::strerror(errno); }
constexpr size_t kWriteBuffer = 1 << 20;
}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  remove_stale_siblings(path_);  // temp files of writers that were killed
  tmp_path_ = path_ + ".tmp." + std::to_string(::getpid());
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  VERITY_CHECK(fd_ >= 0, Error, "cannot create ", tmp_path_, ": ", errno_text());
  buffer_.reserve(kWriteBuffer);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
}

void AtomicFileWriter::flush_buffer() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t w = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (w < 0 && errno == EINTR) continue;
    VERITY_CHECK(w > 0, Error, "write to ", tmp_path_, " failed: ", errno_text());
    done += size_t(w);
  }
  buffer_.clear();
}

void AtomicFileWriter::write(const void* data, size_t n) {
  VERITY_CHECK(!committed_, Error, "write after commit to ", path_);
  const char* p = static_cast<const char*>(data);
  offset_ += n;
  if (buffer_.size() + n > kWriteBuffer) {
    flush_buffer();
    if (n >= kWriteBuffer) {
      buffer_.assign(p, p + n);
      flush_buffer();
      return;
    }
  }
  buffer_.insert(buffer_.end(), p, p + n);
}

void AtomicFileWriter::pad_to(size_t alignment) {
  static const char zeros[64] = {};
  size_t rem = offset_ % alignment;
  if (rem == 0) return;
  size_t n = alignment - rem;
  while (n > 0) {
    size_t k = std::min(n, sizeof zeros);
    write(zeros, k);
    n -= k;
  }
}

void AtomicFileWriter::commit() {
  flush_buffer();
  VERITY_CHECK(::fsync(fd_) == 0, Error, "fsync ", tmp_path_, ": ", errno_text());
  ::close(fd_);
  fd_ = -1;
  VERITY_CHECK(::rename(tmp_path_.c_str(), path_.c_str()) == 0, Error, "cannot rename ",
               tmp_path_, " to ", path_, ": ", errno_text());
  committed_ = true;
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  AtomicFileWriter w(path);
  w.write(contents);
  w.commit();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  VERITY_CHECK(in, Error, "cannot open ", path, ": ", errno_text());
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  VERITY_CHECK(!in.bad(), Error, "read error on ", path);
  return s;
}

namespace {
// A path as an error message shows it: one from a hostile file may be very long.
std::string shown(const std::string& path) {
  return path.size() > 256 ? cat("'", path.substr(0, 256), "...' (", path.size(), " bytes)") : cat("'", path, "'");
}

// std::filesystem throws its own filesystem_error when a path cannot be checked
// (a name longer than NAME_MAX, no permission); these take paths from users and
// files, so that is a verity Error naming the path. Not found is no error.
std::filesystem::file_status checked_status(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  VERITY_CHECK(!ec || status.type() == std::filesystem::file_type::not_found, Error, "cannot check path ",
               shown(path), ": ", ec.message());
  return status;
}
}  // namespace

std::string path_for_report(const std::string& path) {
  const std::filesystem::path p(path);
  if (!p.is_absolute()) return path;
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  if (!ec) {
    const auto rel = p.lexically_normal().lexically_relative(cwd.lexically_normal());
    if (!rel.empty() && *rel.begin() != "..") return rel.string();
  }
  const auto name = p.lexically_normal().filename();
  return name.empty() ? p.lexically_normal().parent_path().filename().string() : name.string();
}

std::string spec_for_report(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos || colon + 1 >= spec.size() || spec[colon + 1] != '/') return spec;
  return spec.substr(0, colon + 1) + path_for_report(spec.substr(colon + 1));
}

bool file_exists(const std::string& path) { return std::filesystem::exists(checked_status(path)); }
bool is_directory(const std::string& path) { return std::filesystem::is_directory(checked_status(path)); }
uint64_t file_size(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  VERITY_CHECK(!ec, Error, "cannot read the size of ", shown(path), ": ", ec.message());
  return size;
}
bool is_empty_directory(const std::string& path) {
  std::error_code ec;
  const bool empty = std::filesystem::is_empty(path, ec);
  VERITY_CHECK(!ec, Error, "cannot list ", shown(path), ": ", ec.message());
  return empty && is_directory(path);
}
void make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  VERITY_CHECK(!ec, Error, "cannot create directory ", path, ": ", ec.message());
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  VERITY_CHECK(fd >= 0, Error, "cannot open ", path, ": ", errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(cat("cannot stat ", path, ": ", errno_text()));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(cat(path, " is a directory, not a file"));
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) {
    data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data_ == MAP_FAILED) {
      data_ = nullptr;
      ::close(fd);
      throw Error(cat("cannot mmap ", path, ": ", errno_text()));
    }
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : path_(std::move(o.path_)), data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    path_ = std::move(o.path_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void for_each_line(const std::string& path,
                   const std::function<void(std::string_view, size_t)>& fn) {
  MappedFile f(path);
  const char* p = reinterpret_cast<const char*>(f.bytes().data());
  const char* end = p + f.size();
  size_t line_no = 0;
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
    const char* stop = nl ? nl : end;
    std::string_view line(p, size_t(stop - p));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line, ++line_no);
    p = nl ? nl + 1 : end;
  }
}

const std::byte* ByteReader::take(size_t n) {
  VERITY_CHECK(n <= remaining(), FormatError, context_, ": need ", n, " bytes at offset ", pos_,
               " but only ", remaining(), " remain (truncated?)");
  const std::byte* p = bytes_.data() + pos_;
  pos_ += n;
  return p;
}

std::string ByteReader::read_string() {
  auto n = read<uint32_t>();
  const auto* p = take(n);
  return std::string(reinterpret_cast<const char*>(p), n);
}

void ByteWriter::write_string(std::string_view s) {
  VERITY_CHECK(s.size() <= UINT32_MAX, Error, "string too long to serialize");
  write<uint32_t>(uint32_t(s.size()));
  write_bytes(s.data(), s.size());
}

}  // namespace verity
