// 2-D max, average and adaptive average pooling, with torch's window rules.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "../errors.h"
#include "windows.h"

namespace liteexport::demo_backend {

namespace {

struct PoolGeometry {
  Nchw d;
  int64_t oh, ow;
  Shape out_shape;
};

PoolGeometry geometry(const Array& x, const Pool2dAttrs& a, const char* op) {
  const Nchw d = as_batched(x, op);
  const int64_t oh = window_output_size(d.h, a.kernel[0], a.stride[0], a.padding[0], a.dilation[0], a.ceil_mode);
  const int64_t ow = window_output_size(d.w, a.kernel[1], a.stride[1], a.padding[1], a.dilation[1], a.ceil_mode);
  check_output_size(op, d.h, d.w, oh, ow);
  return {d, oh, ow, d.unbatched ? Shape{d.c, oh, ow} : Shape{d.n, d.c, oh, ow}};
}

// How many elements each window along one axis averages over, as torch counts them: windows
// are clipped to input+padding (ceil mode's overhang never counts), and to the input alone
// without count_include_pad.
int64_t window_count(int64_t o, int64_t size, int64_t kernel, int64_t stride, int64_t padding, bool include_pad) {
  const int64_t start = o * stride - padding;
  const int64_t end = std::min(start + kernel, size + padding);
  if (include_pad) return end - start;
  return std::min(end, size) - std::max<int64_t>(start, 0);
}

}  // namespace

Kernel make_max_pool2d(const Pool2dAttrs& attrs) {
  return [=](const Inputs& in) {
    const PoolGeometry g = geometry(*in[0], attrs, "max_pool2d");
    float* y;
    Array out = Array::zeros(g.out_shape, &y);
    // before the per-row tap tables: an empty input (n or c = 0) may have a huge height
    if (out.size() == 0) return out;
    const float* px = in[0]->ptr();
    const float neg_inf = -std::numeric_limits<float>::infinity();
    // The taps of each output row/column that fall inside the input, found once: the inner loops
    // then need no bounds checks. Padding counts as -inf, so it never wins and can be skipped.
    auto taps = [](int64_t out, int64_t size, int64_t k, int64_t s, int64_t pad, int64_t dil) {
      std::vector<std::pair<int64_t, int64_t>> range(static_cast<size_t>(out));  // [first, last) tap
      for (int64_t o = 0; o < out; ++o) {
        int64_t lo = 0, hi = k;
        while (lo < k && o * s - pad + lo * dil < 0) ++lo;
        while (hi > lo && o * s - pad + (hi - 1) * dil >= size) --hi;
        range[o] = {lo, hi};
      }
      return range;
    };
    const auto rows = taps(g.oh, g.d.h, attrs.kernel[0], attrs.stride[0], attrs.padding[0], attrs.dilation[0]);
    const auto cols = taps(g.ow, g.d.w, attrs.kernel[1], attrs.stride[1], attrs.padding[1], attrs.dilation[1]);
    for (int64_t p = 0; p < g.d.n * g.d.c; ++p) {
      const float* plane = px + p * g.d.h * g.d.w;
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t y0 = oy * attrs.stride[0] - attrs.padding[0], x0 = ox * attrs.stride[1] - attrs.padding[1];
          float m = neg_inf;
          bool nan = false;
          for (int64_t i = rows[oy].first; i < rows[oy].second; ++i) {
            const float* row = plane + (y0 + i * attrs.dilation[0]) * g.d.w + x0;
            for (int64_t j = cols[ox].first; j < cols[ox].second; ++j) {
              const float v = row[j * attrs.dilation[1]];
              m = v > m ? v : m;
              nan |= v != v;
            }
          }
          if (nan) {  // rare: the first NaN of the window is the result, like np.maximum's propagation
            for (int64_t i = rows[oy].first; i < rows[oy].second && !std::isnan(m); ++i)
              for (int64_t j = cols[ox].first; j < cols[ox].second; ++j) {
                const float v = plane[(y0 + i * attrs.dilation[0]) * g.d.w + x0 + j * attrs.dilation[1]];
                if (std::isnan(v)) {
                  m = v;
                  break;
                }
              }
          }
          y[(p * g.oh + oy) * g.ow + ox] = m;
        }
    }
    return out;
  };
}

Kernel make_avg_pool2d(const Pool2dAttrs& attrs) {
  return [=](const Inputs& in) {
    const PoolGeometry g = geometry(*in[0], attrs, "avg_pool2d");
    float* y;
    Array out = Array::zeros(g.out_shape, &y);
    const float* px = in[0]->ptr();
    for (int64_t p = 0; p < g.d.n * g.d.c; ++p) {
      const float* plane = px + p * g.d.h * g.d.w;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        const int64_t ch = window_count(oy, g.d.h, attrs.kernel[0], attrs.stride[0], attrs.padding[0],
                                        attrs.count_include_pad);
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          float sum = 0.0f;  // float32 sum of the window, like runtime_py
          for (int64_t i = 0; i < attrs.kernel[0]; ++i) {
            const int64_t iy = oy * attrs.stride[0] - attrs.padding[0] + i;
            if (iy < 0 || iy >= g.d.h) continue;
            for (int64_t j = 0; j < attrs.kernel[1]; ++j) {
              const int64_t ix = ox * attrs.stride[1] - attrs.padding[1] + j;
              if (ix >= 0 && ix < g.d.w) sum += plane[iy * g.d.w + ix];
            }
          }
          const int64_t cw = window_count(ox, g.d.w, attrs.kernel[1], attrs.stride[1], attrs.padding[1],
                                          attrs.count_include_pad);
          const float divisor = attrs.divisor_override ? static_cast<float>(*attrs.divisor_override)
                                                       : static_cast<float>(ch * cw);
          y[(p * g.oh + oy) * g.ow + ox] = sum / divisor;
        }
      }
    }
    return out;
  };
}

Kernel make_adaptive_avg_pool2d(const ShapeAttrs& attrs) {
  const auto& dims = attrs.dims;  // 2 positive sizes or -1 (checked by the decoder)
  const Pair size{dims[0], dims[1]};
  return [=](const Inputs& in) {
    const Nchw d = as_batched(*in[0], "adaptive_avg_pool2d");
    const int64_t oh = size[0] == -1 ? d.h : size[0], ow = size[1] == -1 ? d.w : size[1];
    float* y;
    Array out = Array::zeros(d.unbatched ? Shape{d.c, oh, ow} : Shape{d.n, d.c, oh, ow}, &y);
    const float* px = in[0]->ptr();
    // bin i of an axis covers [floor(i*in/out), ceil((i+1)*in/out)); sums in double
    for (int64_t p = 0; p < d.n * d.c; ++p) {
      const float* plane = px + p * d.h * d.w;
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t y0 = oy * d.h / oh, y1 = ((oy + 1) * d.h + oh - 1) / oh;
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t x0 = ox * d.w / ow, x1 = ((ox + 1) * d.w + ow - 1) / ow;
          double sum = 0;
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix) sum += plane[iy * d.w + ix];
          const int64_t count = (y1 - y0) * (x1 - x0);
          y[(p * oh + oy) * ow + ox] = count ? static_cast<float>(sum / static_cast<double>(count))
                                             : std::numeric_limits<float>::quiet_NaN();
        }
      }
    }
    return out;
  };
}

}  // namespace liteexport::demo_backend
