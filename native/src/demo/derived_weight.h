// A buffer derived from a weight (a transposed or transformed copy), made on first use and kept by
// the kernel that owns it. It holds the weight's buffer, so the same pointer means the same
// (immutable) data: a stale copy is impossible.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "../array.h"

namespace liteexport::demo_backend {

class DerivedWeight {
 public:
  // derive(w, out): fills out from w; called only when w's buffer is not the one kept
  template <typename Derive>
  const float* of(const Array& w, Derive derive) {
    std::lock_guard<std::mutex> guard(lock_);
    if (source_ != w.data) {
      derive(w, value_);
      source_ = w.data;
    }
    return value_.data();
  }

 private:
  std::mutex lock_;
  std::shared_ptr<const void> source_;
  std::vector<float> value_;
};

}  // namespace liteexport::demo_backend
