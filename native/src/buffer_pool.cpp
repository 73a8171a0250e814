#include "buffer_pool.h"

#include <algorithm>

namespace liteexport {

std::unique_ptr<uint64_t[]> BufferPool::take(size_t words, size_t* capacity) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    // the smallest kept buffer that fits, whatever its size: a program's result sizes shrink and
    // grow along it (mobilenet_v2: 4.8 MB down to 50 KB), and a rule against using a big buffer
    // for a small result left the big ones to be evicted by the small ones and allocated afresh
    // on every call. A linear scan: a program keeps a few dozen at most.
    size_t best = kept_.size();
    for (size_t i = 0; i < kept_.size(); ++i)
      if (kept_[i].words >= words && (best == kept_.size() || kept_[i].words < kept_[best].words))
        best = i;
    if (best != kept_.size()) {
      std::unique_ptr<uint64_t[]> buffer = std::move(kept_[best].buffer);
      *capacity = kept_[best].words;
      kept_words_ -= *capacity;
      kept_[best] = std::move(kept_.back());
      kept_.pop_back();
      out_words_ += *capacity;
      peak_words_ = std::max(peak_words_, out_words_);
      return buffer;
    }
    out_words_ += words;
    peak_words_ = std::max(peak_words_, out_words_);
  }
  *capacity = words;
  return std::unique_ptr<uint64_t[]>(new uint64_t[words]);  // outside the lock: it may fault pages in
}

void BufferPool::give(std::unique_ptr<uint64_t[]> buffer, size_t capacity) {
  std::vector<std::unique_ptr<uint64_t[]>> evicted;  // freed after the lock is released
  std::lock_guard<std::mutex> guard(lock_);
  out_words_ -= capacity;
  const size_t bound = 2 * peak_words_;  // see buffer_pool.h
  if (capacity > bound) return;  // cannot happen (peak >= what was out); freed, not kept
  // the oldest kept buffers make room
  while (kept_words_ + capacity > bound) {
    auto oldest = std::min_element(kept_.begin(), kept_.end(), [](const Kept& a, const Kept& b) { return a.stamp < b.stamp; });
    kept_words_ -= oldest->words;
    evicted.push_back(std::move(oldest->buffer));
    *oldest = std::move(kept_.back());
    kept_.pop_back();
  }
  kept_words_ += capacity;
  kept_.push_back({std::move(buffer), capacity, ++clock_});
}

size_t BufferPool::kept_bytes() const {
  std::lock_guard<std::mutex> guard(lock_);
  return kept_words_ * 8;
}

size_t BufferPool::peak_bytes() const {
  std::lock_guard<std::mutex> guard(lock_);
  return peak_words_ * 8;
}

}  // namespace liteexport
