// numpy broadcasting, shared by every kernel of two or three operands (float arithmetic, integer
// arithmetic, comparisons, bitwise logic, where): the result's shape, numpy's error text, and one
// walk over the result that hands each element the offsets of its operands.
#pragma once

#include <algorithm>
#include <array>
#include <string>

#include "../run_limits.h"
#include "kernels.h"

namespace liteexport::demo_backend {

// The broadcast shape of `shapes`, or KernelError with numpy's text ("operands could not be
// broadcast together with shapes (2,3) (4,) ").
Shape broadcast_shapes(const std::vector<const Shape*>& shapes);

// f(k, offsets) for every element k of `out` (row-major), offsets[j] the element of operand j
// (of shape *in[j], broadcast to `out`). The last axis is the inner loop; polls the deadline
// once per row.
template <size_t N, typename F>
void for_each_broadcast(const Shape& out, const std::array<const Shape*, N>& in, F f) {
  const int64_t total = numel(out);
  if (total == 0) return;
  const size_t nd = out.size();
  std::array<std::vector<int64_t>, N> strides;
  for (size_t j = 0; j < N; ++j) {
    Shape s(nd, 1);
    std::copy(in[j]->begin(), in[j]->end(), s.begin() + static_cast<ptrdiff_t>(nd - in[j]->size()));
    strides[j] = contiguous_strides(s);
    for (size_t d = 0; d < nd; ++d)
      if (s[d] == 1) strides[j][d] = 0;
  }
  const int64_t inner = nd ? out[nd - 1] : 1;
  std::array<int64_t, N> step{}, base{}, at{};
  for (size_t j = 0; j < N; ++j) step[j] = nd ? strides[j][nd - 1] : 0;
  std::vector<int64_t> index(nd, 0);
  for (int64_t row = 0; row < total; row += inner) {
    for (size_t j = 0; j < N; ++j) {
      base[j] = 0;
      for (size_t d = 0; d + 1 < nd; ++d) base[j] += index[d] * strides[j][d];
    }
    for (int64_t i = 0; i < inner; ++i) {
      for (size_t j = 0; j < N; ++j) at[j] = base[j] + i * step[j];
      f(row + i, at);
    }
    poll_deadline(inner);
    for (size_t d = nd ? nd - 1 : 0; d-- > 0;) {  // odometer over the outer axes (none for a 0-d result)
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
}

// out[k] = f(a[.], b[.]) with numpy broadcasting, the result of element type R.
template <typename R, typename A, typename B, typename F>
Array broadcast_map(const Array& a, const Array& b, F f) {
  Shape shape = broadcast_shapes({&a.shape, &b.shape});
  R* y;
  Array out = Array::uninitialized(shape, &y);  // both paths write every element
  const A* pa = a.data_as<A>();
  const B* pb = b.data_as<B>();
  if (a.shape == b.shape) {  // the common case: no index arithmetic
    for (int64_t i = 0, n = out.size(); i < n; ++i) y[i] = f(pa[i], pb[i]);
    return out;
  }
  for_each_broadcast<2>(shape, {&a.shape, &b.shape},
                        [&](int64_t k, const std::array<int64_t, 2>& at) { y[k] = f(pa[at[0]], pb[at[1]]); });
  return out;
}

// out[k] = f(x[k]), the result of element type R.
template <typename R, typename T, typename F>
Array map_values(const Array& x, F f) {
  R* y;
  Array out = Array::uninitialized(x.shape, &y);  // every element written below
  const T* p = x.data_as<T>();
  for (int64_t i = 0, n = x.size(); i < n; ++i) y[i] = f(p[i]);
  return out;
}

}  // namespace liteexport::demo_backend
