// Shared by the fuzz targets: plausible zero inputs for a program's declared inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "liteexport/runtime.h"

namespace liteexport_fuzz {

// Inputs bigger than this are skipped: a hostile shape in a program's ValueInfo would make
// the harness itself allocate, which is not a finding about the runtime.
constexpr int64_t kMaxInputElements = 1 << 16;

// Zero tensor of `shape` (-1 entries -> 2); nullopt if negative/too large.
inline std::optional<liteexport::Tensor> zeros(const std::vector<int64_t>& shape) {
  liteexport::Tensor t;
  int64_t n = 1;
  for (int64_t d : shape) {
    int64_t v = d == -1 ? 2 : d;
    if (v < 0 || v > kMaxInputElements) return std::nullopt;
    n *= v;
    if (n > kMaxInputElements) return std::nullopt;
    t.shape.push_back(v);
  }
  if (shape.size() > 8) return std::nullopt;
  t.data.assign(static_cast<size_t>(n), 0.0f);
  return t;
}

// A few fixed shapes for inputs whose shape is not known (dynamic rank or no program).
inline const std::vector<std::vector<int64_t>>& fallback_shapes() {
  static const std::vector<std::vector<int64_t>> shapes = {{4, 20}, {1, 3, 8, 8}, {2, 3}, {}};
  return shapes;
}

}  // namespace liteexport_fuzz
