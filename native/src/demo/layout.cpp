// Layout kernels: transpose (a copy: every array in the core is contiguous), reshape and
// flatten (share the data), cat; of any dtype (the op spec types them all four).
#include <algorithm>
#include <cstring>

#include "../checked.h"
#include "../errors.h"
#include "kernels.h"

namespace liteexport::demo_backend {

Kernel make_transpose(const PermuteAttrs& attrs) {
  const Shape perm = attrs.perm;
  return [=](const Inputs& in) {
    const Array& x = *in[0];
    if (x.dim() != static_cast<int64_t>(perm.size()))
      throw KernelError("permutation " + py_shape(perm) + " does not fit an input of shape " + py_shape(x.shape));
    const size_t nd = perm.size();
    Shape out_shape(nd);
    const auto in_strides = contiguous_strides(x.shape);
    std::vector<int64_t> strides(nd);  // input stride of each output axis
    for (size_t i = 0; i < nd; ++i) {
      out_shape[i] = x.shape[static_cast<size_t>(perm[i])];
      strides[i] = in_strides[static_cast<size_t>(perm[i])];
    }
    return visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* y;
      Array out = Array::uninitialized(out_shape, &y);  // every element copied below
      const int64_t total = out.size();
      if (total == 0) return out;
      const T* px = x.data_as<T>();
      if (nd == 0) {
        y[0] = px[0];
        return out;
      }
      const int64_t inner = out_shape[nd - 1], inner_stride = strides[nd - 1];
      std::vector<int64_t> index(nd, 0);
      for (int64_t base = 0; base < total; base += inner) {
        int64_t offset = 0;
        for (size_t d = 0; d + 1 < nd; ++d) offset += index[d] * strides[d];
        for (int64_t j = 0; j < inner; ++j) y[base + j] = px[offset + j * inner_stride];
        for (size_t d = nd - 1; d-- > 0;) {
          if (++index[d] < out_shape[d]) break;
          index[d] = 0;
        }
      }
      return out;
    });
  };
}

Kernel make_reshape(const ShapeAttrs& attrs) {
  const Shape dims = attrs.dims;
  return [=](const Inputs& in) {
    const Array& x = *in[0];
    Shape shape = dims;
    int64_t known = 1;
    bool infer = false;
    for (int64_t d : dims) {
      if (d == -1) infer = true;
      else if (__builtin_mul_overflow(known, d, &known)) known = -1;
    }
    bool ok = infer ? known > 0 && x.size() % known == 0 : known == x.size();
    if (!ok) throw KernelError("shape " + py_shape(dims) + " is invalid for an input of shape " + py_shape(x.shape));
    if (infer) std::replace(shape.begin(), shape.end(), int64_t{-1}, x.size() / known);
    return x.reshaped(std::move(shape));
  };
}

Kernel make_flatten(const FlattenAttrs& attrs) {
  const int64_t start = attrs.start_dim, end = attrs.end_dim;
  return [=](const Inputs& in) {
    const Array& x = *in[0];
    const int64_t rank = std::max<int64_t>(x.dim(), 1);  // torch treats a 0-d input as 1-D
    if (!(-rank <= start && start < rank && -rank <= end && end < rank))
      throw KernelError("flatten dims (" + std::to_string(start) + ", " + std::to_string(end) +
                        ") are out of range for shape " + py_shape(x.shape));
    const int64_t first = (start + rank) % rank, last = (end + rank) % rank;
    if (first > last)
      throw KernelError("flatten start_dim " + std::to_string(start) + " comes after end_dim " +
                        std::to_string(end) + " for shape " + py_shape(x.shape));
    Shape shape(x.shape.begin(), x.shape.begin() + std::min<int64_t>(first, x.dim()));
    int64_t merged = 1;
    for (int64_t d = first; d <= last && d < x.dim(); ++d)
      merged = checked_mul(merged, x.shape[static_cast<size_t>(d)], "flattened size");
    shape.push_back(merged);
    if (last + 1 < x.dim()) shape.insert(shape.end(), x.shape.begin() + last + 1, x.shape.end());
    return x.reshaped(std::move(shape));
  };
}

Kernel make_cat(const AxisAttrs& attrs) {
  const int64_t axis_attr = attrs.axis;
  return [=](const Inputs& in) {
    const Array& first = *in[0];
    if (first.dim() == 0) throw KernelError("zero-dimensional arrays cannot be concatenated");
    const int64_t axis = normalize_axis(axis_attr, first.dim());
    Shape shape = first.shape;
    shape[static_cast<size_t>(axis)] = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      const Array& a = *in[k];
      if (a.dim() != first.dim())
        throw KernelError("all the input arrays must have same number of dimensions, but the array at index 0 has " +
                          std::to_string(first.dim()) + " dimension(s) and the array at index " +
                          std::to_string(k) + " has " + std::to_string(a.dim()) + " dimension(s)");
      for (int64_t d = 0; d < a.dim(); ++d)
        if (d != axis && a.shape[static_cast<size_t>(d)] != first.shape[static_cast<size_t>(d)])
          throw KernelError("all the input array dimensions except for the concatenation axis must match exactly, "
                            "but along dimension " + std::to_string(d) + ", the array at index 0 has size " +
                            std::to_string(first.shape[static_cast<size_t>(d)]) + " and the array at index " +
                            std::to_string(k) + " has size " + std::to_string(a.shape[static_cast<size_t>(d)]));
      shape[static_cast<size_t>(axis)] += a.shape[static_cast<size_t>(axis)];
    }
    return visit_dtype(first.dtype, [&](auto zero) {
      using T = decltype(zero);  // every input's: the decoder checked they share one dtype
      T* y;
      Array out = Array::uninitialized(shape, &y);  // the inputs' chunks fill it
      if (out.size() == 0) return out;  // its other dims may multiply past int64
      int64_t outer = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
      const int64_t out_chunk = out.size() / std::max<int64_t>(outer, 1);
      int64_t offset = 0;  // within one output chunk
      for (const Array* a : in) {
        const int64_t chunk = outer ? a->size() / outer : 0;
        for (int64_t o = 0; o < outer && chunk > 0; ++o)
          std::memcpy(y + o * out_chunk + offset, a->data_as<T>() + o * chunk, static_cast<size_t>(chunk) * sizeof(T));
        offset += chunk;
      }
      return out;
    });
  };
}

}  // namespace liteexport::demo_backend
