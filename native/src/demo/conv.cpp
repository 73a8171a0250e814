// 2-D convolution: im2col per (batch, group) and one GEMM, with stride, padding, dilation,
// groups, bias and a fused ReLU; depthwise convolutions (one input channel per group) take direct
// taps instead, 1x1 stride-1 unpadded ones read the input as the GEMM's operand without a copy, and
// 3x3 stride-1 ones with enough channels run as Winograd's F(2x2, 3x3), as runtime_py's conv.py.
#include <algorithm>
#include <memory>
#include <vector>

#include "../errors.h"
#include "../run_limits.h"
#include "derived_weight.h"
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

// Input x output channels from which a 3x3 stride-1 convolution runs as Winograd's F(2x2, 3x3):
// runtime_py's _WINOGRAD_MIN_CHANNELS (below, im2col's one GEMM costs less than the transforms).
constexpr int64_t kWinogradMinChannels = 32 * 32;

// Winograd's F(2x2, 3x3) (Lavin & Gray, 2015), as runtime_py's _Winograd: each 2x2 block of outputs
// from a 4x4 tile of the zero-padded input, V = B^T d B per tile and channel, then per tile position
// p (16) one GEMM M[p] = U[p] (O x C) . V[p] (C x tiles) with the transformed weight U = G w G^T, and
// the output block A^T M A. The GEMMs do 2.25x fewer multiply-adds than im2col's. The transforms'
// entries are 0, +-1 and +-1/2 and every sum has a fixed order, so results are the same on every ABI;
// their rounding error is a few ulp of the partial sums (not of the output, when they cancel).
//
// U (16, O, C), made in double like runtime_py's (then rounded once) on first use and kept by the
// kernel (DerivedWeight).
void winograd_weight(const Array& w, std::vector<float>& u) {
  static constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const int64_t out_c = w.shape[0], c = w.shape[1];
  u.assign(static_cast<size_t>(16 * out_c * c), 0.0f);
  for (int64_t oc = 0; oc < out_c * c; ++oc) {
    const float* k = w.ptr() + oc * 9;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        double sum = 0.0;  // (G (x) G) row (a, b) times the 9 taps, in tap order
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) sum += kG[a][i] * kG[b][j] * static_cast<double>(k[i * 3 + j]);
        u[static_cast<size_t>((a * 4 + b) * out_c * c + oc)] = static_cast<float>(sum);
      }
  }
}

// y (zeros, N x O x oh x ow) = the 3x3 stride-1 convolution of x (N x C x h x w) with padding (ph, pw).
void winograd_conv(const float* x, const Nchw& d, int64_t ph, int64_t pw, const float* u, int64_t out_c, float* y,
                   int64_t oh, int64_t ow) {
  const int64_t c = d.c, th = (oh + 1) / 2, tw = (ow + 1) / 2, count = th * tw;  // odd sizes: a partial last tile
  const int64_t ph_rows = 2 * th + 2, pw_cols = 2 * tw + 2;  // the padded plane: >= h + 2 ph by w + 2 pw
  if (16 * std::max(c, out_c) > kMaxElements / std::max<int64_t>(count, 1))
    throw KernelError("conv2d Winograd buffer of 16x" + std::to_string(std::max(c, out_c)) + "x" +
                      std::to_string(count) + " elements exceeds the limit of " + std::to_string(kMaxElements));
  // kept by the thread between calls, like im2col's buffer: fresh ones would page-fault on every run
  thread_local std::vector<float> padded, v, m, rows;
  padded.assign(static_cast<size_t>(ph_rows * pw_cols), 0.0f);
  v.resize(static_cast<size_t>(16 * c * count));
  m.resize(static_cast<size_t>(16 * out_c * count));
  rows.resize(static_cast<size_t>(4 * pw_cols));  // 4 transformed input rows, or 2 output rows
  for (int64_t n = 0; n < d.n; ++n) {
    // V[p, ch, t] = (B^T d B)[p] of tile t = (ty, tx) of channel ch
    for (int64_t ch = 0; ch < c; ++ch) {
      check_deadline();  // per channel's transform; the 16 products check within gemm_acc
      const float* plane = x + (n * c + ch) * d.h * d.w;
      for (int64_t r = 0; r < d.h; ++r)  // the interior; the borders stay zero
        std::copy(plane + r * d.w, plane + (r + 1) * d.w, padded.data() + (r + ph) * pw_cols + pw);
      // a row of tiles at a time, each step a loop over the row's tiles (contiguous in V: it vectorizes)
      for (int64_t ty = 0; ty < th; ++ty) {
        const float* r0 = padded.data() + 2 * ty * pw_cols;
        const float* r1 = r0 + pw_cols;
        const float* r2 = r1 + pw_cols;
        const float* r3 = r2 + pw_cols;
        float* e[4] = {rows.data(), rows.data() + pw_cols, rows.data() + 2 * pw_cols, rows.data() + 3 * pw_cols};
        for (int64_t q = 0; q < pw_cols; ++q) {  // B^T d: rows
          e[0][q] = r0[q] - r2[q];
          e[1][q] = r1[q] + r2[q];
          e[2][q] = r2[q] - r1[q];
          e[3][q] = r1[q] - r3[q];
        }
        for (int k = 0; k < 4; ++k) {  // (B^T d) B: columns
          const float* t = e[k];
          float* dst = v.data() + k * 4 * c * count + ch * count + ty * tw;
          float* __restrict__ v0 = dst;
          float* __restrict__ v1 = dst + c * count;
          float* __restrict__ v2 = dst + 2 * c * count;
          float* __restrict__ v3 = dst + 3 * c * count;
          for (int64_t tx = 0; tx < tw; ++tx) {
            const float* q = t + 2 * tx;
            v0[tx] = q[0] - q[2];
            v1[tx] = q[1] + q[2];
            v2[tx] = q[2] - q[1];
            v3[tx] = q[1] - q[3];
          }
        }
      }
    }
    std::fill(m.begin(), m.end(), 0.0f);
    for (int64_t p = 0; p < 16; ++p)
      gemm_acc(out_c, count, c, u + p * out_c * c, c, v.data() + p * c * count, count, m.data() + p * out_c * count,
               count);
    // the output blocks A^T M A, a row of tiles at a time (2 output rows, 2 tw columns: the last
    // row and column are dropped when oh or ow is odd)
    const int64_t step = out_c * count;  // between tile positions
    for (int64_t o = 0; o < out_c; ++o) {
      float* plane = y + (n * out_c + o) * oh * ow;
      for (int64_t ty = 0; ty < th; ++ty) {
        const float* s = m.data() + o * count + ty * tw;
        float* __restrict__ out0 = rows.data();
        float* __restrict__ out1 = rows.data() + 2 * tw;
        for (int64_t tx = 0; tx < tw; ++tx) {
          float f[2][4];  // A^T M: rows
          for (int l = 0; l < 4; ++l) {
            const float m0 = s[l * step + tx], m1 = s[(4 + l) * step + tx], m2 = s[(8 + l) * step + tx],
                        m3 = s[(12 + l) * step + tx];
            f[0][l] = m0 + m1 + m2;
            f[1][l] = m1 - m2 - m3;
          }
          out0[2 * tx] = f[0][0] + f[0][1] + f[0][2];
          out0[2 * tx + 1] = f[0][1] - f[0][2] - f[0][3];
          out1[2 * tx] = f[1][0] + f[1][1] + f[1][2];
          out1[2 * tx + 1] = f[1][1] - f[1][2] - f[1][3];
        }
        std::copy(out0, out0 + ow, plane + 2 * ty * ow);
        if (2 * ty + 1 < oh) std::copy(out1, out1 + ow, plane + (2 * ty + 1) * ow);
      }
    }
  }
}

}  // namespace

Kernel make_conv2d(const Conv2dAttrs& attrs) {
  auto winograd = std::make_shared<DerivedWeight>();
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
    // an empty batch may have spatial dims whose product overflows: nothing to compute
    if (out.size() == 0) return out;
    const int64_t og = out_c / groups, kdim = group_c * kh * kw, len = oh * ow;
    const float* px = x.ptr();
    if (group_c == 1) {
      for (int64_t n = 0; n < d.n; ++n)
        for (int64_t o = 0; o < out_c; ++o) {
          poll_deadline(len * kh * kw);
          depthwise_plane(px + (n * d.c + o / og) * d.h * d.w, d.h, d.w, weight.ptr() + o * kh * kw, kh, kw, attrs,
                          y + (n * out_c + o) * len, oh, ow);
        }
    } else if (kh == 3 && kw == 3 && sh == 1 && sw == 1 && dh == 1 && dw == 1 && groups == 1 &&
               d.c * out_c >= kWinogradMinChannels) {
      winograd_conv(px, d, ph, pw, winograd->of(weight, winograd_weight), out_c, y, oh, ow);
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
          check_deadline();  // per im2col buffer; gemm_acc checks within its product too
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
        if (attrs.activation == Activation::Relu) relu_inplace(plane, len);
      }
    return out;
  };
}

}  // namespace liteexport::demo_backend
