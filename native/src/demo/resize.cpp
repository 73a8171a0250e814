// RESIZE2D: nearest and bilinear resizing of NCHW float32 arrays, as ATen's CPU kernels
// (UpSample.h, UpSampleKernel.cpp) and runtime_py's resize.py compute them. Plain C++ on the
// executor's NCHW values (XNNPACK's steps hand other ops NCHW inputs): per axis, source indices
// and weights once per call, in float as ATen computes them for float tensors (a double index
// could fall on the other side of a floor and pick another pixel).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "../errors.h"
#include "../run_limits.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

// compute_scales_value: 1 / the model's scale factor when it gave one (> 0), else in / out
float scale_of(int64_t in, int64_t out, const std::optional<double>& given) {
  if (given && *given > 0) return static_cast<float>(1.0 / *given);
  return static_cast<float>(in) / static_cast<float>(out);
}

// ATen's nearest_idx: min(floor(dst * scale), in - 1), with its exact shortcuts for the same size
// and for twice the size (they win even over a given scale)
std::vector<int64_t> nearest_indices(int64_t in, int64_t out, const std::optional<double>& given) {
  std::vector<int64_t> idx(static_cast<size_t>(out));
  const float scale = scale_of(in, out, given);
  for (int64_t i = 0; i < out; ++i) {
    int64_t src;
    if (out == in) src = i;
    else if (out == 2 * in) src = i >> 1;
    else src = std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * scale)), in - 1);
    idx[static_cast<size_t>(i)] = src;
  }
  return idx;
}

struct Taps {
  std::vector<int64_t> i0, i1;
  std::vector<float> lambda;  // out = (1 - lambda) * x[i0] + lambda * x[i1]
};

// area_pixel_compute_source_index and guard_index_and_lambda; an axis of unchanged size is left
// alone whatever the scale, as ATen's separable kernel does
Taps linear_taps(int64_t in, int64_t out, bool align_corners, const std::optional<double>& given) {
  Taps t{std::vector<int64_t>(static_cast<size_t>(out)), std::vector<int64_t>(static_cast<size_t>(out)),
         std::vector<float>(static_cast<size_t>(out))};
  float scale;
  if (align_corners) scale = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  else scale = scale_of(in, out, given);
  for (int64_t i = 0; i < out; ++i) {
    const auto k = static_cast<size_t>(i);
    if (out == in) {
      t.i0[k] = t.i1[k] = i;
      t.lambda[k] = 0.0f;
      continue;
    }
    float src = align_corners ? scale * static_cast<float>(i) : scale * (static_cast<float>(i) + 0.5f) - 0.5f;
    if (!align_corners && src < 0.0f) src = 0.0f;
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
    t.i0[k] = i0;
    t.i1[k] = std::min(i0 + 1, in - 1);
    t.lambda[k] = std::clamp(src - static_cast<float>(i0), 0.0f, 1.0f);
  }
  return t;
}

}  // namespace

Kernel make_resize2d(const ResizeAttrs& a) {
  return [a](const Inputs& in) {
    const Array& x = *in[0];
    if (x.dim() != 4) throw KernelError("resize2d expects a 4-D (NCHW) input, got shape " + py_shape(x.shape));
    const int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
    if (h == 0 || w == 0) throw KernelError("resize2d of an empty plane, input shape " + py_shape(x.shape));
    const int64_t oh = a.size[0], ow = a.size[1];  // positive (checked by the decoder)
    float* y;
    Array out = Array::uninitialized(Shape{x.shape[0], x.shape[1], oh, ow}, &y);
    const float* px = x.ptr();
    if (!a.bilinear) {
      const auto rows = nearest_indices(h, oh, a.scale_h), cols = nearest_indices(w, ow, a.scale_w);
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t r = 0; r < oh; ++r) {
          poll_deadline(ow);  // a run's timeout also ends a huge resize
          const float* src = px + (p * h + rows[static_cast<size_t>(r)]) * w;
          float* dst = y + (p * oh + r) * ow;
          for (int64_t c = 0; c < ow; ++c) dst[c] = src[cols[static_cast<size_t>(c)]];
        }
      return out;
    }
    const Taps rt = linear_taps(h, oh, a.align_corners, a.scale_h);
    const Taps ct = linear_taps(w, ow, a.align_corners, a.scale_w);
    for (int64_t p = 0; p < planes; ++p) {
      const float* plane = px + p * h * w;
      for (int64_t r = 0; r < oh; ++r) {
        poll_deadline(ow);
        const auto rk = static_cast<size_t>(r);
        const float* top = plane + rt.i0[rk] * w;
        const float* bottom = plane + rt.i1[rk] * w;
        const float lh = rt.lambda[rk];
        float* dst = y + (p * oh + r) * ow;
        for (int64_t c = 0; c < ow; ++c) {
          const auto ck = static_cast<size_t>(c);
          const int64_t c0 = ct.i0[ck], c1 = ct.i1[ck];
          const float lw = ct.lambda[ck];
          const float upper = top[c0] * (1.0f - lw) + top[c1] * lw;
          const float lower = bottom[c0] * (1.0f - lw) + bottom[c1] * lw;
          dst[c] = upper * (1.0f - lh) + lower * lh;
        }
      }
    }
    return out;
  };
}

}  // namespace liteexport::demo_backend
