// A read-only view of a bundle's bytes: a POSIX memory map of a file, or a caller's buffer.
// Copied into aligned memory only when the caller's buffer is not 16-byte aligned, because
// flatbuffers scalars and in-place float weights need the alignment the writer gave them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace liteexport {

class Bytes {
 public:
  static std::shared_ptr<Bytes> map_file(const std::string& path);
  // The file's bytes read into memory (16-byte aligned): independent of later changes to it.
  static std::shared_ptr<Bytes> read_file(const std::string& path);
  static std::shared_ptr<Bytes> wrap(const uint8_t* data, size_t size);
  // A copy of the caller's bytes (16-byte aligned): the caller may free or change them at once.
  static std::shared_ptr<Bytes> copy(const uint8_t* data, size_t size);
  // `length` bytes at `offset` of the open descriptor `fd`: a bundle stored inside a larger file,
  // e.g. an uncompressed asset of an APK. The descriptor stays the caller's (a mapping does not
  // need it once made). map_fd maps the pages holding the range and points into them; when the
  // range does not start 16-byte aligned, it reads the range into aligned memory instead (the
  // alignment wrap() requires of a caller's buffer). read_fd always reads. `name` is for messages.
  static std::shared_ptr<Bytes> map_fd(int fd, int64_t offset, int64_t length, const std::string& name);
  static std::shared_ptr<Bytes> read_fd(int fd, int64_t offset, int64_t length, const std::string& name);
  ~Bytes();
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Whether the bytes are a memory map of a file (false: read into memory, or a caller's buffer).
  bool mapped() const { return mapping_ != nullptr; }

 private:
  Bytes() = default;
  uint8_t* allocate_aligned(size_t size);  // storage in aligned_, 16-byte aligned
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;         // munmap on destruction when set
  size_t mapping_size_ = 0;         // its length (from a page boundary: may exceed size_)
  std::vector<uint64_t> aligned_;   // fallback copy for a misaligned caller buffer
};

}  // namespace liteexport
