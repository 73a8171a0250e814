// FULL's result shape (schema/demo_ops.toml's Fill table): the static sizes, and the reference's
// sizes plus offsets where an axis is given. The messages are runtime_py's
// (runtime_py/backends/demo/typed.py fill_sizes). Shared by the Android native core and the torch
// extension, whose FULL kernels only fill what this sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "demo_attrs_generated.h"
#include "demo_error.h"

namespace liteexport::demo_program {

// The sizes, or the problem with them in `*problem` (then the sizes are meaningless).
inline std::vector<int64_t> fill_sizes(const demo_attrs::FillAttrs& a, const std::vector<int64_t>& reference,
                                       std::string* problem) {
  std::vector<int64_t> sizes;
  for (size_t dim = 0; dim < a.dims.size() && dim < a.axes.size(); ++dim) {
    const int64_t axis = a.axes[dim], offset = a.dims[dim];
    if (axis < 0) {
      sizes.push_back(offset);
      continue;
    }
    if (axis >= static_cast<int64_t>(reference.size())) {
      *problem = "axis " + std::to_string(axis) + " is out of range for a reference of shape " +
                 demo_errors::tuple_text(reference);
      return sizes;
    }
    const int64_t size = reference[static_cast<size_t>(axis)] + offset;
    if (size < 0) {  // as torch.full's refusal of a negative size
      *problem = "dim " + std::to_string(dim) + " has the negative size " + std::to_string(size) + " (size " +
                 std::to_string(reference[static_cast<size_t>(axis)]) + " of axis " + std::to_string(axis) + " " +
                 (offset >= 0 ? "+" : "") + std::to_string(offset) + ")";
      return sizes;
    }
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace liteexport::demo_program
