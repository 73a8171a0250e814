// 2-D convolution: im2col per (batch, group) and one GEMM, with stride, padding, dilation,
// groups, bias and a fused ReLU; depthwise convolutions (one input channel per group) take direct
// taps instead, and 1x1 stride-1 unpadded ones read the input as the GEMM's operand without a copy.
#include <algorithm>
#include <vector>

#include "../errors.h"
#include "windows.h"

namespace liteexport::demo_backend {
namespace {

// The output columns [lo, hi) whose tap (input column ox * sw + shift) falls inside a row of
// width w; the columns around it read the zero padding.
void tap_columns(int64_t shift, int64_t sw, int64_t ow, int64_t w, int64_t& lo, int64_t& hi) {
  lo = 0;
  hi = ow;
  while (lo < ow && lo * sw + shift < 0) ++lo;
  while (hi > lo && (hi - 1) * sw + shift >= w) --hi;
}

// dst[k] += a * src[k * stride]: with the stride a compile-time constant (0: the run-time one), the
// loads are contiguous or a fixed shuffle and the loop vectorizes.
template <int64_t kStride>
void add_scaled(float* __restrict__ dst, const float* __restrict__ src, float a, int64_t n, int64_t stride) {
  const int64_t s = kStride != 0 ? kStride : stride;
  for (int64_t k = 0; k < n; ++k) dst[k] += a * src[k * s];
}

// One output plane of a depthwise convolution, accumulated into y (zeros): each element adds
// w[i, j] * x[tap] for (i, j) in order, like gemm_acc over the im2col column. Taps in the padding
// are skipped instead of adding w * 0, which leaves a sum that starts from +0 unchanged, so the
// result is the generic path's bit for bit (finite weights), and the same on every ABI.
void depthwise_plane(const float* x, int64_t h, int64_t w, const float* wt, int64_t kh, int64_t kw,
                     const Conv2dAttrs& attrs, float* y, int64_t oh, int64_t ow) {
  const auto [sh, sw] = attrs.stride;
  const auto [ph, pw] = attrs.padding;
  const auto [dh, dw] = attrs.dilation;
  for (int64_t oy = 0; oy < oh; ++oy) {
    float* dst = y + oy * ow;
    for (int64_t i = 0; i < kh; ++i) {
      const int64_t iy = oy * sh - ph + i * dh;
      if (iy < 0 || iy >= h) continue;
      for (int64_t j = 0; j < kw; ++j) {
        const int64_t shift = j * dw - pw;
        int64_t lo, hi;
        tap_columns(shift, sw, ow, w, lo, hi);
        const float* src = x + iy * w + lo * sw + shift;
        const float a = wt[i * kw + j];
        if (sw == 1)
          add_scaled<1>(dst + lo, src, a, hi - lo, sw);
        else if (sw == 2)
          add_scaled<2>(dst + lo, src, a, hi - lo, sw);
        else
          add_scaled<0>(dst + lo, src, a, hi - lo, sw);
      }
    }
  }
}

}  // namespace

Kernel make_conv2d(const Conv2dAttrs& attrs) {
  return [=](const Inputs& in) {
    const Array& x = *in[0];
    const Array& weight = *in[1];
    const Nchw d = as_batched(x, "conv2d");
    if (weight.dim() != 4) throw KernelError("conv2d expects a 4-D weight, got shape " + py_shape(weight.shape));
    const int64_t groups = attrs.groups, out_c = weight.shape[0], group_c = weight.shape[1];
    const int64_t kh = weight.shape[2], kw = weight.shape[3];
    if (d.c != group_c * groups || out_c % groups)
      throw KernelError("input of shape " + py_shape(x.shape) + " does not fit weight of shape " +
                        py_shape(weight.shape) + " with groups=" + std::to_string(groups) + " (expected " +
                        std::to_string(group_c * groups) +
                        " input channels and output channels divisible by groups)");
    const auto [sh, sw] = attrs.stride;
    const auto [ph, pw] = attrs.padding;
    const auto [dh, dw] = attrs.dilation;
    const int64_t oh = window_output_size(d.h, kh, sh, ph, dh, false);
    const int64_t ow = window_output_size(d.w, kw, sw, pw, dw, false);
    check_output_size("conv2d", d.h, d.w, oh, ow);
    const Array* bias = in.size() > 2 ? in[2] : nullptr;
    if (bias != nullptr && bias->size() != out_c)
      throw KernelError("cannot reshape array of size " + std::to_string(bias->size()) + " into shape (" +
                        std::to_string(out_c) + ",1,1)");
    Shape out_shape = d.unbatched ? Shape{out_c, oh, ow} : Shape{d.n, out_c, oh, ow};
    float* y;
    Array out = Array::zeros(out_shape, &y);
    const int64_t og = out_c / groups, kdim = group_c * kh * kw, len = oh * ow;
    const float* px = x.ptr();
    if (group_c == 1) {
      for (int64_t n = 0; n < d.n; ++n)
        for (int64_t o = 0; o < out_c; ++o)
          depthwise_plane(px + (n * d.c + o / og) * d.h * d.w, d.h, d.w, weight.ptr() + o * kh * kw, kh, kw, attrs,
                          y + (n * out_c + o) * len, oh, ow);
    } else if (kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0) {
      // a 1x1 window on every input pixel: the im2col columns are the input planes themselves
      for (int64_t n = 0; n < d.n; ++n)
        for (int64_t g = 0; g < groups; ++g)
          gemm_acc(og, len, kdim, weight.ptr() + g * og * kdim, kdim, px + (n * d.c + g * group_c) * len, len,
                   y + (n * out_c + g * og) * len, len);
    } else {
      if (len > 0 && kdim > kMaxElements / len)
        throw KernelError("conv2d im2col buffer of " + std::to_string(kdim) + "x" + std::to_string(len) +
                          " elements exceeds the limit of " + std::to_string(kMaxElements));
      // The im2col buffer is kept by the thread between calls: a fresh one of a few MB would
      // page-fault on every run.
      thread_local std::vector<float> cols;
      cols.resize(static_cast<size_t>(kdim * len));
      for (int64_t n = 0; n < d.n; ++n)
        for (int64_t g = 0; g < groups; ++g) {
          // cols[(c, i, j), (oy, ox)] = padded input, ordered like the weight's (Cg, kh, kw)
          for (int64_t c = 0; c < group_c; ++c) {
            const float* plane = px + ((n * d.c) + g * group_c + c) * d.h * d.w;
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                float* row = cols.data() + ((c * kh + i) * kw + j) * len;
                const int64_t shift = j * dw - pw;
                int64_t ox_lo, ox_hi;
                tap_columns(shift, sw, ow, d.w, ox_lo, ox_hi);
                for (int64_t oy = 0; oy < oh; ++oy) {
                  const int64_t iy = oy * sh - ph + i * dh;
                  float* dst = row + oy * ow;
                  if (iy < 0 || iy >= d.h) {
                    std::fill(dst, dst + ow, 0.0f);
                    continue;
                  }
                  const float* src = plane + iy * d.w + shift;
                  std::fill(dst, dst + ox_lo, 0.0f);
                  for (int64_t ox = ox_lo; ox < ox_hi; ++ox) dst[ox] = src[ox * sw];
                  std::fill(dst + ox_hi, dst + ow, 0.0f);
                }
              }
          }
          float* dst = y + (n * out_c + g * og) * len;
          gemm_acc(og, len, kdim, weight.ptr() + g * og * kdim, kdim, cols.data(), len, dst, len);
        }
    }
    // bias, then the fused ReLU, in one pass over the output
    const float* pb = bias != nullptr ? bias->ptr() : nullptr;
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t o = 0; o < out_c; ++o) {
        float* plane = y + (n * out_c + o) * len;
        const float b = pb != nullptr ? pb[o] : 0.0f;
        if (pb != nullptr)
          for (int64_t i = 0; i < len; ++i) plane[i] += b;
        if (attrs.relu) relu_inplace(plane, len);
      }
    return out;
  };
}

}  // namespace liteexport::demo_backend
