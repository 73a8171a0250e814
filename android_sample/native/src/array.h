// The core's internal float32 tensor: a shape and shared, read-only, contiguous data.
// Weights alias the mapped bundle (no copy); kernel results own a fresh buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace liteexport {

using Shape = std::vector<int64_t>;

// 0 if any size is 0; saturates at INT64_MAX.
int64_t numel(const Shape& shape);

// Largest array a kernel may produce (1 GiB of float32); Array::zeros throws std::length_error above.
constexpr int64_t kMaxElements = int64_t{1} << 28;

struct Array {
  Shape shape;
  std::shared_ptr<const float> data;  // numel(shape) floats, row-major

  int64_t size() const { return numel(shape); }
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  const float* ptr() const { return data.get(); }

  // A zero-filled array the caller fills through `out` before sharing it.
  static Array zeros(Shape shape, float** out);
  // The same without the zero fill, for a kernel that writes every element (XNNPACK's operators).
  static Array uninitialized(Shape shape, float** out);
  // Takes ownership of `values` (must hold numel(shape) elements).
  static Array from_vector(Shape shape, std::vector<float> values);
  // Points at memory owned by `keepalive` (the mapped bundle): weights used in place.
  static Array borrowed(Shape shape, const float* ptr, std::shared_ptr<const void> keepalive);
  // Same data, another shape of the same element count (reshape/flatten never copy).
  Array reshaped(Shape new_shape) const { return Array{std::move(new_shape), data}; }

  // Floats readable past the end of arrays from zeros/uninitialized/from_vector: XNNPACK's kernels
  // read up to XNN_EXTRA_BYTES (16) past an input (never writing there).
  static constexpr size_t kReadSlack = 4;

 private:
  static Array allocate(Shape shape, float** out, bool zero);
};

// Row-major strides in elements.
std::vector<int64_t> contiguous_strides(const Shape& shape);

}  // namespace liteexport
