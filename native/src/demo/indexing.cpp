// Index ops over typed values (runtime_py's typed.py): embedding, gather, index_select. Indices are
// int64 or int32 (the op spec's operand_dtypes); every index is checked against its axis before
// anything is read, so an id outside [0, N) is runtime_py's error ("index 12 is out of range
// [0, 10)", KERNEL_FAILED), never a read out of bounds. Values are copied as elements of their
// dtype, whatever it is.
#include <algorithm>
#include <cstring>

#include "../errors.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

// The index values widened to int64, each checked to lie in [0, size).
std::vector<int64_t> checked_indices(const Array& index, int64_t size) {
  std::vector<int64_t> ids(static_cast<size_t>(index.size()));
  if (index.dtype == DType::Int32) std::copy_n(index.data_as<int32_t>(), ids.size(), ids.begin());
  else if (index.dtype == DType::Int64) std::copy_n(index.data_as<int64_t>(), ids.size(), ids.begin());
  else throw KernelError(std::string("indices must be int64 or int32, got ") + dtype_name(index.dtype));
  if (ids.empty()) return ids;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  if (*lo < 0 || *hi >= size)  // runtime_py names the smallest when one is negative, else the largest
    throw KernelError("index " + std::to_string(*lo < 0 ? *lo : *hi) + " is out of range [0, " + std::to_string(size) + ")");
  return ids;
}

int64_t product(const Shape& shape, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t d = from; d < to; ++d) n *= shape[d];
  return n;
}

}  // namespace

int64_t typed_axis(int64_t axis, const Array& x) {
  const int64_t rank = std::max<int64_t>(x.dim(), 1);  // a 0-d input has one axis of size 1
  if (axis < -rank || axis >= rank)
    throw KernelError("axis " + std::to_string(axis) + " is out of range for an input of shape " + py_shape(x.shape));
  return (axis + rank) % rank;
}

Kernel make_embedding() {
  return [](const Inputs& in) {
    const Array &weight = *in[0], &indices = *in[1];
    if (weight.dim() != 2)
      throw KernelError("the embedding table must be 2-D [N, D], got shape " + py_shape(weight.shape));
    const std::vector<int64_t> ids = checked_indices(indices, weight.shape[0]);
    Shape shape = indices.shape;
    shape.push_back(weight.shape[1]);
    const size_t row = static_cast<size_t>(weight.shape[1]) * dtype_size(weight.dtype);
    return visit_dtype(weight.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* y;
      Array out = Array::zeros(shape, &y);
      if (row == 0) return out;
      const auto* table = static_cast<const uint8_t*>(weight.data.get());
      auto* dst = reinterpret_cast<uint8_t*>(y);
      for (size_t k = 0; k < ids.size(); ++k) std::memcpy(dst + k * row, table + static_cast<size_t>(ids[k]) * row, row);
      return out;
    });
  };
}

Kernel make_gather(const AxisAttrs& a) {
  const int64_t axis_attr = a.axis;
  return [axis_attr](const Inputs& in) {
    const Array &x = *in[0], &index = *in[1];
    const int64_t axis = typed_axis(axis_attr, x);
    if (index.dim() != x.dim())
      throw KernelError("index of shape " + py_shape(index.shape) + " must have the rank of the input " + py_shape(x.shape));
    for (int64_t d = 0; d < x.dim(); ++d)
      if (d != axis && index.shape[static_cast<size_t>(d)] > x.shape[static_cast<size_t>(d)])
        throw KernelError("index of shape " + py_shape(index.shape) + " is larger than the input " + py_shape(x.shape) +
                          " off axis " + std::to_string(axis));
    const int64_t size = x.dim() ? x.shape[static_cast<size_t>(axis)] : 1;
    const std::vector<int64_t> ids = checked_indices(index, size);
    return visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* y;
      Array out = Array::zeros(index.shape, &y);
      const T* p = x.data_as<T>();
      if (ids.empty()) return out;
      // out[i..., j, k...] = x[i..., index[i..., j, k...], k...], each position of the index
      // mapped to x's element with its own coordinates off the axis
      const auto x_strides = contiguous_strides(x.shape);
      std::vector<int64_t> at(index.shape.size(), 0);
      for (size_t k = 0; k < ids.size(); ++k) {
        int64_t offset = 0;
        for (size_t d = 0; d < at.size(); ++d)
          offset += (static_cast<int64_t>(d) == axis ? ids[k] : at[d]) * x_strides[d];
        y[k] = p[offset];
        for (size_t d = at.size(); d-- > 0;) {
          if (++at[d] < index.shape[d]) break;
          at[d] = 0;
        }
      }
      return out;
    });
  };
}

Kernel make_index_select(const AxisAttrs& a) {
  const int64_t axis_attr = a.axis;
  return [axis_attr](const Inputs& in) {
    const Array &x = *in[0], &index = *in[1];
    const auto axis = static_cast<size_t>(typed_axis(axis_attr, x));
    if (index.dim() > 1)
      throw KernelError("index_select takes a 1-D index, got shape " + py_shape(index.shape));
    const int64_t size = x.dim() ? x.shape[axis] : 1;
    const std::vector<int64_t> ids = checked_indices(index, size);
    Shape shape = x.dim() ? x.shape : Shape{1};  // a 0-d input selects from its one value
    shape[axis] = static_cast<int64_t>(ids.size());
    const int64_t outer = product(shape, 0, axis), inner = product(shape, axis + 1, shape.size());
    const size_t chunk = static_cast<size_t>(inner) * dtype_size(x.dtype);
    return visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* y;
      Array out = Array::zeros(shape, &y);
      if (out.size() == 0) return out;
      const auto* src = static_cast<const uint8_t*>(x.data.get());
      auto* dst = reinterpret_cast<uint8_t*>(y);
      for (int64_t o = 0; o < outer; ++o)
        for (size_t k = 0; k < ids.size(); ++k)
          std::memcpy(dst + (static_cast<size_t>(o) * ids.size() + k) * chunk,
                      src + (static_cast<size_t>(o * size + ids[k])) * chunk, chunk);
      return out;
    });
  };
}

}  // namespace liteexport::demo_backend
