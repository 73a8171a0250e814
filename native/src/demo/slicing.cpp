// Slicing and broadcasting (runtime_py's slicing.py): slice one axis, expand to a shape.
// Both copy (every array in the core is contiguous), values of any dtype.
#include <algorithm>
#include <cstring>

#include "../errors.h"
#include "kernels.h"

namespace liteexport::demo_backend {

Kernel make_slice(const SliceAttrs& a) {
  const SliceAttrs attrs = a;
  return [attrs](const Inputs& in) {
    const Array& x = *in[0];
    if (attrs.axis < -x.dim() || attrs.axis >= x.dim())
      throw KernelError("axis " + std::to_string(attrs.axis) + " is out of range for an input of shape " +
                        py_shape(x.shape));
    const size_t axis = static_cast<size_t>((attrs.axis + x.dim()) % x.dim());
    const int64_t size = x.shape[axis];
    // Python's slice.indices for step > 0
    auto bound = [size](int64_t v) { return v < 0 ? std::max<int64_t>(v + size, 0) : std::min(v, size); };
    const int64_t start = bound(attrs.start), end = bound(attrs.end);
    // ceil((end - start) / step) without forming end - start + step - 1, which overflows for a
    // step near INT64_MAX (torch.arange(5)[0:5:2**63-1] has one element)
    const int64_t length = end > start ? (end - start - 1) / attrs.step + 1 : 0;
    Shape shape = x.shape;
    shape[axis] = length;
    return visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* y;
      Array out = Array::zeros(shape, &y);
      // an empty result copies nothing: its other dims may be huge (their products overflow) and
      // its data pointer null
      if (out.size() == 0) return out;
      int64_t outer = 1, inner = 1;  // products of dims of a non-empty result: no overflow
      for (size_t d = 0; d < axis; ++d) outer *= x.shape[d];
      for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
      const T* p = x.data_as<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < length; ++k)
          std::memcpy(y + (o * length + k) * inner, p + (o * size + start + k * attrs.step) * inner,
                      static_cast<size_t>(inner) * sizeof(T));
      return out;
    });
  };
}

Kernel make_expand(const ShapeAttrs& a) {
  const Shape dims = a.dims;
  return [dims](const Inputs& in) {
    const Array& x = *in[0];
    const std::string what = "cannot expand shape " + py_shape(x.shape) + " to " + py_shape(dims);
    const int64_t lead = static_cast<int64_t>(dims.size()) - x.dim();
    if (lead < 0) throw KernelError(what + ": fewer dims");
    Shape shape(dims.size());
    std::vector<int64_t> strides(dims.size(), 0);  // input stride per output axis, 0 where broadcast
    const auto in_strides = contiguous_strides(x.shape);
    for (size_t i = 0; i < dims.size(); ++i) {
      const int64_t size = dims[i];
      if (static_cast<int64_t>(i) < lead) {
        if (size < 0) throw KernelError(what + ": -1 in a new leading dim");
        shape[i] = size;
        continue;
      }
      const size_t j = i - static_cast<size_t>(lead);
      const int64_t have = x.shape[j];
      if (size == -1 || size == have) {
        shape[i] = have;
        strides[i] = in_strides[j];
      } else if (have == 1 && size >= 0) {
        shape[i] = size;
      } else {
        throw KernelError(what);
      }
    }
    return visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* y;
      Array out = Array::zeros(shape, &y);
      const T* p = x.data_as<T>();
      std::vector<int64_t> index(shape.size(), 0);
      for (int64_t k = 0, n = out.size(); k < n; ++k) {
        int64_t offset = 0;
        for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
        y[k] = p[offset];
        for (size_t d = index.size(); d-- > 0;) {
          if (++index[d] < shape[d]) break;
          index[d] = 0;
        }
      }
      return out;
    });
  };
}

}  // namespace liteexport::demo_backend
