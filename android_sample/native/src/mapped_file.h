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
  ~Bytes();
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Bytes() = default;
  uint8_t* allocate_aligned(size_t size);  // storage in aligned_, 16-byte aligned
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;         // munmap on destruction when set
  std::vector<uint64_t> aligned_;   // fallback copy for a misaligned caller buffer
};

}  // namespace liteexport
