#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "errors.h"

namespace liteexport {

namespace {
// Closes the descriptor on every path out of map_file.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

std::shared_ptr<Bytes> Bytes::map_file(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw_format("cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw_format("cannot read " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw_format(path + " is a directory, not a bundle file");
  if (st.st_size == 0) throw_format(path + " is empty, not a bundle file");
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (p == MAP_FAILED) throw_format("cannot read " + path + ": " + std::strerror(errno));
  std::shared_ptr<Bytes> bytes(new Bytes());
  bytes->mapping_ = p;
  bytes->data_ = static_cast<const uint8_t*>(p);  // page-aligned
  bytes->size_ = static_cast<size_t>(st.st_size);
  return bytes;
}

std::shared_ptr<Bytes> Bytes::wrap(const uint8_t* data, size_t size) {
  std::shared_ptr<Bytes> bytes(new Bytes());
  if (data == nullptr && size != 0) throw_format("null buffer of " + std::to_string(size) + " bytes");
  if (reinterpret_cast<uintptr_t>(data) % 16 == 0) {
    bytes->data_ = data;
  } else {
    bytes->aligned_.resize((size + 7) / 8 + 2);
    // std::vector<uint64_t> gives 8-byte alignment; step to the next 16-byte boundary
    auto base = reinterpret_cast<uintptr_t>(bytes->aligned_.data());
    auto* dst = reinterpret_cast<uint8_t*>((base + 15) & ~uintptr_t{15});
    if (size) std::memcpy(dst, data, size);
    bytes->data_ = dst;
  }
  bytes->size_ = size;
  return bytes;
}

Bytes::~Bytes() {
  if (mapping_ != nullptr) ::munmap(mapping_, size_);
}

}  // namespace liteexport
