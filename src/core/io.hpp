#pragma once
// File primitives: atomic writes, read-only mappings, checked byte readers.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/error.hpp"

namespace verity {

// Writes to "<path>.tmp.<pid>" in the same directory; commit() fsyncs and
// renames over path. Destroying an uncommitted writer removes the temp file,
// so an interrupted job never leaves a half-written output behind.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t n);
  void write(std::string_view s) { write(s.data(), s.size()); }
  void pad_to(size_t alignment);  // zero bytes up to the next multiple
  uint64_t offset() const { return offset_; }
  void commit();
  const std::string& path() const { return path_; }

 private:
  void flush_buffer();
  std::string path_, tmp_path_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  std::vector<char> buffer_;
  bool committed_ = false;
};

// Convenience: atomically replaces path with contents.
void write_file_atomic(const std::string& path, std::string_view contents);
std::string read_file(const std::string& path);
bool file_exists(const std::string& path);
bool is_directory(const std::string& path);
// Size of a regular file; an Error naming the path if it cannot be read.
uint64_t file_size(const std::string& path);
// True for a directory with no entries; an Error naming the path if it cannot be listed.
bool is_empty_directory(const std::string& path);
void make_directories(const std::string& path);

// How reports and provenance name a path the user did not type (a compiled-in
// default, a resolved model directory): relative to the working directory
// when it lies under it, else its file name alone, never a machine's absolute
// prefix. A relative path is returned as given.
std::string path_for_report(const std::string& path);
// The same for a factory spec "kind:PATH" whose PATH is absolute (e.g.
// "f5:/src/assets/verifiers/default.valn" run from /src gives
// "f5:assets/verifiers/default.valn"); any other spec is returned as given.
std::string spec_for_report(const std::string& spec);

// Read-only memory map of a whole file (an empty file maps to an empty span).
class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(data_), size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Calls fn(line, line_number) for each line (1-based, '\n' and a trailing '\r' removed).
void for_each_line(const std::string& path,
                   const std::function<void(std::string_view, size_t)>& fn);

// Bounds-checked little-endian reader over a byte span; every failure names
// the context (file and section) and the offset.
class ByteReader {
 public:
  ByteReader(std::span<const std::byte> bytes, std::string context)
      : bytes_(bytes), context_(std::move(context)) {}
  template <typename T>
  T read() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  std::string read_string();  // u32 length + bytes
  const std::byte* take(size_t n);
  template <typename T>
  std::span<const T> read_array(uint64_t count) {
    VERITY_CHECK(count <= remaining() / sizeof(T), FormatError, context_, ": array of ", count,
                 " elements at offset ", pos_, " exceeds the ", remaining(), " bytes left");
    return {reinterpret_cast<const T*>(take(count * sizeof(T))), size_t(count)};
  }
  size_t remaining() const { return bytes_.size() - pos_; }
  size_t position() const { return pos_; }
  const std::string& context() const { return context_; }

 private:
  std::span<const std::byte> bytes_;
  std::string context_;
  size_t pos_ = 0;
};

// Append-only little-endian buffer, the writing counterpart of ByteReader.
class ByteWriter {
 public:
  template <typename T>
  void write(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const char*>(&v);
    buf_.insert(buf_.end(), p, p + sizeof(T));
  }
  void write_string(std::string_view s);
  void write_bytes(const void* p, size_t n) {
    buf_.insert(buf_.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
  }
  const std::vector<char>& buffer() const { return buf_; }

 private:
  std::vector<char> buf_;
};

}  // namespace verity
