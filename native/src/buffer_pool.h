// Result buffers recycled across the steps and calls of one Module (issue 21): a demo program
// writes a fresh result per step, and allocating each anew cost mobilenet_v2 a quarter of its
// time in page faults (large blocks come from mmap and go back to the kernel when freed). A
// buffer freed while its Module lives is kept here and handed to the next result that fits.
//
// What is kept is bounded by twice the most bytes the Module's results ever held at once (a
// call's peak): a result takes the smallest kept buffer that fits, so a call's sequence of sizes
// is served by buffers a little larger than its peak, and from the second call on nothing is
// allocated (mobilenet_v2, resnet18, the encoder layer). When a freed buffer
// would pass the bound, the longest-kept buffers are freed first (a shape that changed leaves
// its old sizes behind). Kept buffers are not results: the memory budget (RunState::live) does
// not count them.
//
// Thread safety: a Module runs one call at a time (runtime.h); take/give still hold a mutex (one
// uncontended lock per result), so a result freed on another thread, or calls a caller failed to
// serialize, cannot corrupt the pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace liteexport {

class BufferPool {
 public:
  BufferPool() = default;
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of at least `words` 8-byte words (contents undefined), and its capacity in words:
  // the smallest kept one that fits, else a new one.
  std::unique_ptr<uint64_t[]> take(size_t words, size_t* capacity);
  // Returns a buffer of `capacity` words (from take) to be reused.
  void give(std::unique_ptr<uint64_t[]> buffer, size_t capacity);

  // Bytes kept now, and the bound on them (tests).
  size_t kept_bytes() const;
  size_t peak_bytes() const;

 private:
  struct Kept {
    std::unique_ptr<uint64_t[]> buffer;
    size_t words;
    uint64_t stamp;  // when it was given back: the oldest is freed first
  };
  mutable std::mutex lock_;
  std::vector<Kept> kept_;
  size_t kept_words_ = 0;
  size_t out_words_ = 0;   // words handed out by take and not given back yet
  size_t peak_words_ = 0;  // the most out_words_ has been: kept_words_ <= 2 * peak_words_
  uint64_t clock_ = 0;
};

}  // namespace liteexport
