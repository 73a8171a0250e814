// The core's internal tensor: a shape, an element type and shared, read-only, contiguous data.
// Weights alias the mapped bundle (no copy); kernel results own a buffer (within a Module's call,
// one recycled from its earlier results: buffer_pool.h).
// float32 is the common case and its kernels read ptr() as before; int64, int32 and bool values
// (issue 20's typed programs: token ids, masks, positions) are read through data_as<T>().
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "liteexport/runtime.h"

namespace liteexport {

using Shape = std::vector<int64_t>;

struct QuantizedWeight;  // narrow_weights.h

// 0 if any size is 0; saturates at INT64_MAX.
int64_t numel(const Shape& shape);

// Largest array a kernel may produce (1 GiB of float32); Array::zeros throws std::length_error above.
constexpr int64_t kMaxElements = int64_t{1} << 28;

// The C++ element type of each dtype: bool is one byte (0 or 1, as torch stores it), uint8_t so
// that a stray byte from a caller is never a bool with an invalid value.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::Bool;
};

// f(T{}) with T the element type of `dtype`: one generic kernel body for all four dtypes.
template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Int64: return f(int64_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Bool: return f(uint8_t{});
    case DType::Float32: break;
  }
  return f(float{});
}

struct Array {
  Shape shape;
  std::shared_ptr<const void> data;  // numel(shape) elements of `dtype`, row-major
  DType dtype = DType::Float32;
  // A qint8 weight of the bundle (narrow_weights.h): its int8 values and grid. `data` is then null:
  // float_values() gives its float32 values.
  std::shared_ptr<const QuantizedWeight> quantized = nullptr;

  int64_t size() const { return numel(shape); }
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  // float32 values (the float kernels' operands: the program's dtype rules guarantee it)
  const float* ptr() const { return static_cast<const float*>(data.get()); }
  // values of the element type T of `dtype` (DTypeOf<T>::value == dtype)
  template <typename T>
  const T* data_as() const {
    return static_cast<const T*>(data.get());
  }

  // A zero-filled array of T's dtype the caller fills through `out` before sharing it.
  template <typename T>
  static Array zeros(Shape shape, T** out) {
    return Array{std::move(shape), nullptr, DTypeOf<T>::value}.allocate_into(out, true);
  }
  // The same without the zero fill, for a kernel that writes every element (XNNPACK's operators).
  template <typename T>
  static Array uninitialized(Shape shape, T** out) {
    return Array{std::move(shape), nullptr, DTypeOf<T>::value}.allocate_into(out, false);
  }
  // Takes ownership of `values` (must hold numel(shape) elements).
  template <typename T>
  static Array from_vector(Shape shape, std::vector<T> values) {
    values.reserve(values.size() + kReadSlack);  // readable past the end, as zeros' (no copy when it has room)
    auto owned = std::make_shared<std::vector<T>>(std::move(values));
    return Array{std::move(shape), std::shared_ptr<const void>(owned, owned->data()), DTypeOf<T>::value};
  }
  // float32 values (a braced list of floats deduces no T)
  static Array from_vector(Shape shape, std::vector<float> values) { return from_vector<float>(std::move(shape), std::move(values)); }
  // Points at memory of `dtype` owned by `keepalive` (the mapped bundle): weights used in place.
  static Array borrowed(Shape shape, const void* ptr, DType dtype, std::shared_ptr<const void> keepalive);
  // Same data, another shape of the same element count (reshape/flatten never copy).
  Array reshaped(Shape new_shape) const { return Array{std::move(new_shape), data, dtype}; }

  // Elements readable past the end of arrays from zeros/uninitialized/from_vector: XNNPACK's
  // kernels read up to XNN_EXTRA_BYTES (16) past a float input (never writing there).
  static constexpr size_t kReadSlack = 4;

 private:
  // Allocates this array's buffer (counted against the run's memory budget) and points `out` at it.
  template <typename T>
  Array allocate_into(T** out, bool zero) && {
    *out = static_cast<T*>(allocate(sizeof(T), zero));
    return std::move(*this);
  }
  void* allocate(size_t itemsize, bool zero);
};

// Row-major strides in elements.
std::vector<int64_t> contiguous_strides(const Shape& shape);

}  // namespace liteexport
