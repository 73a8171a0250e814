// Selection kernels (runtime_py's selection.py): triu and tril over the last two dims (causal masks),
// argmax, argmin and topk's indices along an axis, in int64. max/min over a dim and topk's values are a GATHER
// of these indices (the compiler emits it). A NaN counts as the largest value, as in torch; equal
// values come in index order (argmax: the first; topk: a stable sort), as runtime_py's.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "../errors.h"
#include "../run_limits.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

// p ranks above q: larger, or a NaN beside a number
template <typename T>
bool above(T p, T q) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(p)) return !std::isnan(q);
    if (std::isnan(q)) return false;
  }
  return p > q;
}

// p ranks below q: smaller, or a NaN beside a number (argmin's extreme, as torch's)
template <typename T>
bool below(T p, T q) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(p)) return !std::isnan(q);
    if (std::isnan(q)) return false;
  }
  return p < q;
}

// The sizes before, along and after `axis`.
struct Lanes {
  int64_t outer = 1, length = 1, inner = 1;
};

Lanes lanes_of(const Shape& shape, int64_t axis) {
  Lanes l;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const int64_t size = shape[static_cast<size_t>(d)];
    if (d < axis) l.outer *= size;
    else if (d == axis) l.length = size;
    else l.inner *= size;
  }
  return l;
}

Kernel make_triangle(bool upper, int64_t diagonal) {
  return [upper, diagonal](const Inputs& in) {
    const Array& x = *in[0];
    if (x.dim() < 2)
      throw KernelError(std::string(upper ? "triu" : "tril") + " needs an input of at least 2 dims, got shape " +
                        py_shape(x.shape));
    const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
    return visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* y;
      Array out = Array::zeros(x.shape, &y);  // the dropped triangle stays zero (false)
      const T* p = x.data_as<T>();
      const int64_t matrices = rows * cols != 0 ? x.size() / (rows * cols) : 0;
      for (int64_t m = 0; m < matrices; ++m) {
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            const int64_t at = (m * rows + r) * cols + c;
            // torch.triu keeps c - r >= diagonal, tril keeps c - r <= diagonal
            if (upper ? c - r >= diagonal : c - r <= diagonal) y[at] = p[at];
          }
        poll_deadline(rows * cols);
      }
      return out;
    });
  };
}

}  // namespace

Kernel make_triu(const DiagonalAttrs& a) { return make_triangle(true, a.diagonal); }

Kernel make_tril(const DiagonalAttrs& a) { return make_triangle(false, a.diagonal); }

// ARGMAX (max) and ARGMIN: the first index of the extreme, a NaN counting as both (torch's argmin
// propagates a NaN as its argmax does)
static Kernel make_arg_reduce(bool max, const ArgReduceAttrs& a) {
  return [max, a](const Inputs& in) {
    const Array& x = *in[0];
    const int64_t axis = typed_axis(a.axis, x);
    int64_t* y;
    if (x.dim() == 0) return Array::zeros(Shape{}, &y);  // torch's argmax/argmin of a 0-d tensor is 0
    const Lanes l = lanes_of(x.shape, axis);
    if (l.length == 0)
      throw KernelError(std::string(max ? "argmax" : "argmin") + " of the empty axis " + std::to_string(axis) +
                        " of an input of shape " + py_shape(x.shape));
    Shape shape = x.shape;
    if (a.keepdim) shape[static_cast<size_t>(axis)] = 1;
    else shape.erase(shape.begin() + axis);
    Array out = Array::zeros(shape, &y);
    visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* p = x.data_as<T>();
      for (int64_t o = 0; o < l.outer; ++o) {
        for (int64_t i = 0; i < l.inner; ++i) {
          int64_t best = 0;
          for (int64_t k = 1; k < l.length; ++k) {  // strictly beyond: the first extreme stays
            const T candidate = p[(o * l.length + k) * l.inner + i], kept = p[(o * l.length + best) * l.inner + i];
            if (max ? above(candidate, kept) : below(candidate, kept)) best = k;
          }
          y[o * l.inner + i] = best;
        }
        poll_deadline(l.length * l.inner);
      }
      return 0;
    });
    return out;
  };
}

Kernel make_argmax(const ArgReduceAttrs& a) { return make_arg_reduce(true, a); }

Kernel make_argmin(const ArgReduceAttrs& a) { return make_arg_reduce(false, a); }

Kernel make_topk(const TopKAttrs& a) {
  return [a](const Inputs& in) {
    const Array& x = *in[0];
    const int64_t axis = typed_axis(a.axis, x);
    const Lanes l = x.dim() == 0 ? Lanes{} : lanes_of(x.shape, axis);
    if (a.k > l.length)
      throw KernelError("k=" + std::to_string(a.k) + " is larger than the size " + std::to_string(l.length) +
                        " of axis " + std::to_string(axis) + " (input of shape " + py_shape(x.shape) + ")");
    Shape shape = x.shape;
    if (x.dim()) shape[static_cast<size_t>(axis)] = a.k;
    else if (a.k == 0) shape = {0};
    int64_t* y;
    Array out = Array::zeros(shape, &y);
    visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* p = x.data_as<T>();
      std::vector<int64_t> order(static_cast<size_t>(l.length));
      for (int64_t o = 0; o < l.outer; ++o) {
        for (int64_t i = 0; i < l.inner; ++i) {
          auto value = [&](int64_t k) { return p[(o * l.length + k) * l.inner + i]; };
          std::iota(order.begin(), order.end(), int64_t{0});
          // stable: equal values keep index order, as runtime_py's stable argsort
          std::stable_sort(order.begin(), order.end(), [&](int64_t u, int64_t v) {
            return a.largest ? above(value(u), value(v)) : above(value(v), value(u));
          });
          for (int64_t k = 0; k < a.k; ++k) y[(o * a.k + k) * l.inner + i] = order[static_cast<size_t>(k)];
        }
        poll_deadline(l.length * l.inner);
      }
      return 0;
    });
    return out;
  };
}

}  // namespace liteexport::demo_backend
