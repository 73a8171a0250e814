#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

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
// Opens `path` for reading and checks it is a regular, non-empty file; returns its size.
// O_NONBLOCK: opening a FIFO would otherwise block until a writer comes (and reading it
// forever); it has no effect on a regular file's reads.
size_t open_bundle(const std::string& path, Fd& f) {
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0) throw_format("cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw_format("cannot read " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw_format(path + " is a directory, not a bundle file");
  if (!S_ISREG(st.st_mode)) throw_format(path + " is not a regular file (a FIFO, socket or device), not a bundle file");
  if (st.st_size == 0) throw_format(path + " is empty, not a bundle file");
  // a 32-bit ABI (armeabi-v7a) cannot map or hold a file past half its address space
  if (static_cast<uint64_t>(st.st_size) > std::numeric_limits<size_t>::max() / 2)
    throw_format(path + " is too large (" + std::to_string(st.st_size) + " bytes) for this ABI");
  return static_cast<size_t>(st.st_size);
}

}  // namespace

std::shared_ptr<Bytes> Bytes::map_file(const std::string& path) {
  Fd f{-1};
  const size_t size = open_bundle(path, f);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (p == MAP_FAILED) throw_format("cannot read " + path + ": " + std::strerror(errno));
  std::shared_ptr<Bytes> bytes(new Bytes());
  bytes->mapping_ = p;
  bytes->data_ = static_cast<const uint8_t*>(p);  // page-aligned
  bytes->size_ = size;
  bytes->mapping_size_ = size;
  return bytes;
}

std::shared_ptr<Bytes> Bytes::read_file(const std::string& path) {
  Fd f{-1};
  const size_t size = open_bundle(path, f);
  std::shared_ptr<Bytes> bytes(new Bytes());
  uint8_t* dst = bytes->allocate_aligned(size);
  // exactly the size fstat gave: a file that grows meanwhile is read as it was, one that
  // shrinks is truncated (and the verifier then says what is missing)
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(f.fd, dst + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_format("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes->data_ = dst;
  bytes->size_ = got;
  return bytes;
}

uint8_t* Bytes::allocate_aligned(size_t size) {
  aligned_.resize((size + 7) / 8 + 2);
  // std::vector<uint64_t> gives 8-byte alignment; step to the next 16-byte boundary
  auto base = reinterpret_cast<uintptr_t>(aligned_.data());
  return reinterpret_cast<uint8_t*>((base + 15) & ~uintptr_t{15});
}

std::shared_ptr<Bytes> Bytes::wrap(const uint8_t* data, size_t size) {
  std::shared_ptr<Bytes> bytes(new Bytes());
  if (data == nullptr && size != 0) throw_format("null buffer of " + std::to_string(size) + " bytes");
  if (reinterpret_cast<uintptr_t>(data) % 16 == 0) {
    bytes->data_ = data;
  } else {
    uint8_t* dst = bytes->allocate_aligned(size);
    if (size) std::memcpy(dst, data, size);
    bytes->data_ = dst;
  }
  bytes->size_ = size;
  return bytes;
}

std::shared_ptr<Bytes> Bytes::copy(const uint8_t* data, size_t size) {
  if (data == nullptr && size != 0) throw_format("null buffer of " + std::to_string(size) + " bytes");
  std::shared_ptr<Bytes> bytes(new Bytes());
  uint8_t* dst = bytes->allocate_aligned(size);
  if (size) std::memcpy(dst, data, size);
  bytes->data_ = dst;
  bytes->size_ = size;
  return bytes;
}

namespace {
// Checks that [offset, offset + length) is a non-empty range inside the regular file `fd`.
void check_fd_range(int fd, int64_t offset, int64_t length, const std::string& name) {
  if (fd < 0) throw_format("cannot read " + name + ": invalid file descriptor " + std::to_string(fd));
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_format("cannot read " + name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw_format(name + ": the descriptor is not a regular file (a FIFO, socket or device)");
  if (offset < 0 || length <= 0)
    throw_format(name + ": invalid range (offset " + std::to_string(offset) + ", length " + std::to_string(length) +
                 "): the offset must be >= 0 and the length > 0");
  if (offset > st.st_size || length > st.st_size - offset)
    throw_format(name + ": the range of " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                 " lies outside the file of " + std::to_string(st.st_size) + " bytes");
  // a 32-bit ABI (armeabi-v7a) cannot map or hold a range past half its address space, and its
  // off_t may be 32 bits
  if (static_cast<uint64_t>(length) > std::numeric_limits<size_t>::max() / 2 ||
      offset > static_cast<int64_t>(std::numeric_limits<off_t>::max()) - length)
    throw_format(name + " is too large (" + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                 ") for this ABI");
}
}  // namespace

std::shared_ptr<Bytes> Bytes::map_fd(int fd, int64_t offset, int64_t length, const std::string& name) {
  check_fd_range(fd, offset, length, name);
  // mmap takes a page-aligned offset: map from the page holding the range's first byte. The
  // pointer into that page is then as aligned as `offset` is; the format needs 16 bytes (an
  // APK aligns an uncompressed asset to 4 bytes only), so a range that is not gets read instead.
  if (offset % 16 != 0) return read_fd(fd, offset, length, name);
  const auto page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  const int64_t start = offset - offset % page;
  const auto span = static_cast<size_t>(offset - start + length);
  void* p = ::mmap(nullptr, span, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
  if (p == MAP_FAILED) throw_format("cannot read " + name + ": " + std::strerror(errno));
  std::shared_ptr<Bytes> bytes(new Bytes());
  bytes->mapping_ = p;
  bytes->mapping_size_ = span;
  bytes->data_ = static_cast<const uint8_t*>(p) + (offset - start);
  bytes->size_ = static_cast<size_t>(length);
  return bytes;
}

std::shared_ptr<Bytes> Bytes::read_fd(int fd, int64_t offset, int64_t length, const std::string& name) {
  check_fd_range(fd, offset, length, name);
  std::shared_ptr<Bytes> bytes(new Bytes());
  const auto size = static_cast<size_t>(length);
  uint8_t* dst = bytes->allocate_aligned(size);
  // pread: the descriptor's file position is left alone (the caller may share the descriptor)
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, dst + got, size - got, static_cast<off_t>(offset + static_cast<int64_t>(got)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_format("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;  // the file shrank meanwhile: the verifier says what is missing
    got += static_cast<size_t>(n);
  }
  bytes->data_ = dst;
  bytes->size_ = got;
  return bytes;
}

Bytes::~Bytes() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
}

}  // namespace liteexport
