// Reductions over several axes: mean and sum (runtime_py's reductions.py). Sums accumulate
// in double, within float32 tolerance of numpy's pairwise float32 sums.
#include <algorithm>
#include <set>

#include "../errors.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

// The reduced axes as a mask over x's dims (all of them when none are named).
std::vector<bool> reduced(const Shape& axes, const Array& x) {
  const int64_t rank = std::max<int64_t>(x.dim(), 1);  // torch reduces a 0-d tensor over dim 0 or -1
  std::vector<bool> mask(static_cast<size_t>(x.dim()), axes.empty());
  std::set<int64_t> seen;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      throw KernelError("axis " + std::to_string(axis) + " is out of range for an input of shape " + py_shape(x.shape));
    if (!seen.insert((axis + rank) % rank).second)
      throw KernelError("axes " + py_shape(axes) + " name an axis twice for an input of shape " + py_shape(x.shape));
    if (x.dim()) mask[static_cast<size_t>((axis + rank) % rank)] = true;
  }
  return mask;
}

Kernel make_reduction(const ReduceAttrs& a, bool mean) {
  const Shape axes = a.axes;
  const bool keepdim = a.keepdim;
  return [=](const Inputs& in) {
    const Array& x = *in[0];
    const auto mask = reduced(axes, x);
    Shape out_shape, kept_shape;  // kept_shape: x's shape with reduced dims set to 1
    double count = 1;  // elements per mean; a double: a zero-size input's other dims may multiply past int64
    for (size_t d = 0; d < x.shape.size(); ++d) {
      kept_shape.push_back(mask[d] ? 1 : x.shape[d]);
      if (mask[d]) count *= static_cast<double>(x.shape[d]);
      if (!mask[d]) out_shape.push_back(x.shape[d]);
      else if (keepdim) out_shape.push_back(1);
    }
    float* y;
    Array out = Array::zeros(out_shape, &y);  // first: its size limit also bounds acc
    std::vector<double> acc(static_cast<size_t>(out.size()), 0.0);
    const auto out_strides = contiguous_strides(kept_shape);
    const float* p = x.ptr();
    std::vector<int64_t> index(x.shape.size(), 0);
    for (int64_t i = 0, n = x.size(); i < n; ++i) {
      int64_t o = 0;
      for (size_t d = 0; d < index.size(); ++d)
        if (!mask[d]) o += index[d] * out_strides[d];
      acc[static_cast<size_t>(o)] += p[i];
      for (size_t d = index.size(); d-- > 0;) {  // odometer over x's dims
        if (++index[d] < x.shape[d]) break;
        index[d] = 0;
      }
    }
    for (size_t k = 0; k < acc.size(); ++k)
      y[k] = static_cast<float>(mean ? acc[k] / count : acc[k]);  // 0/0 = NaN, as numpy
    return out;
  };
}

}  // namespace

Kernel make_mean(const ReduceAttrs& a) { return make_reduction(a, true); }
Kernel make_sum(const ReduceAttrs& a) { return make_reduction(a, false); }

}  // namespace liteexport::demo_backend
