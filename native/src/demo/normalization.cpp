// Normalization: inference batch norm (a per-channel affine map) and layer norm.
#include <cmath>

#include "../errors.h"
#include "kernels.h"

namespace liteexport::demo_backend {

Kernel make_channel_affine() {
  return [](const Inputs& in) {
    const Array &x = *in[0], &scale = *in[1], &shift = *in[2];
    const int64_t c = x.dim() > 1 ? x.shape[1] : -1;
    if (x.dim() < 2 || scale.shape != Shape{c} || shift.shape != Shape{c})
      throw KernelError("input of shape " + py_shape(x.shape) + " needs scale and shift of shape (" +
                        (x.dim() > 1 ? std::to_string(c) : std::string("?")) + ",), got " +
                        py_shape(scale.shape) + " and " + py_shape(shift.shape));
    float* y;
    Array out = Array::uninitialized(x.shape, &y);  // every element written below
    if (out.size() == 0) return out;  // its other dims may multiply past int64
    int64_t inner = 1;
    for (int64_t d = 2; d < x.dim(); ++d) inner *= x.shape[static_cast<size_t>(d)];
    const float* px = x.ptr();
    for (int64_t n = 0; n < x.shape[0]; ++n)
      for (int64_t ch = 0; ch < c; ++ch) {
        const float s = scale.ptr()[ch], b = shift.ptr()[ch];
        const int64_t base = (n * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) y[base + i] = px[base + i] * s + b;
      }
    return out;
  };
}

Kernel make_layer_norm(const LayerNormAttrs& attrs) {
  const int64_t ndim = attrs.normalized_ndim;
  const double eps = static_cast<float>(attrs.eps);  // runtime_py rounds eps to float32
  return [=](const Inputs& in) {
    const Array& x = *in[0];
    if (x.dim() < ndim)
      throw KernelError("input of shape " + py_shape(x.shape) + " has fewer than normalized_ndim=" +
                        std::to_string(ndim) + " dimensions");
    const Shape normalized(x.shape.end() - ndim, x.shape.end());
    const Array* params[2] = {in.size() > 1 ? in[1] : nullptr, in.size() > 2 ? in[2] : nullptr};
    const char* names[2] = {"weight", "bias"};
    for (int i = 0; i < 2; ++i)
      if (params[i] != nullptr && params[i]->shape != normalized)
        throw KernelError(std::string(names[i]) + " of shape " + py_shape(params[i]->shape) +
                          " is not the normalized shape " + py_shape(normalized));
    float* y;
    Array out = Array::uninitialized(x.shape, &y);  // every row written below
    const int64_t len = numel(normalized), rows = len ? x.size() / len : 0;
    const float* px = x.ptr();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = px + r * len;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < len; ++i) mean += row[i];
      mean /= static_cast<double>(len);
      for (int64_t i = 0; i < len; ++i) var += (row[i] - mean) * (row[i] - mean);
      var /= static_cast<double>(len);  // biased, as in torch
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < len; ++i) {
        float v = static_cast<float>((row[i] - mean) * inv);
        if (params[0] != nullptr) v *= params[0]->ptr()[i];
        if (params[1] != nullptr) v += params[1]->ptr()[i];
        y[r * len + i] = v;
      }
    }
    return out;
  };
}

}  // namespace liteexport::demo_backend
