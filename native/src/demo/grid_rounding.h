// FAKE_QUANTIZE's rounding (runtime_py/backends/demo/fake_quantize.py): rint (half to even) of x
// times the float32 inverse scale, plus the zero point, clamped to [quant_min, quant_max] (NaN to
// the top). One definition for the float kernel (activations.cpp) and the int8 path
// (xnn_int8.cpp), so that an int8 value stands for exactly the float the kernel gives.
#pragma once

#include "attrs.h"

namespace liteexport::demo_backend {

struct GridRounding {
  float scale, inverse, zero, low, high;
  float below, above;  // the integers just outside the grid, relative to the zero point

  explicit GridRounding(const QuantizeAttrs& a)
      : scale(static_cast<float>(a.scale)), inverse(1.0f / scale), zero(static_cast<float>(a.zero_point)),
        low(static_cast<float>(a.quant_min)), high(static_cast<float>(a.quant_max)),
        below(static_cast<float>(a.quant_min - a.zero_point - 1)), above(static_cast<float>(a.quant_max - a.zero_point + 1)) {}

  // The grid's integer for v (quant_min..quant_max), in float and without branches, so that the
  // loops over tensors vectorize. Exact: v * inverse is first clamped to the integers just outside
  // the grid (rounding is monotonic, so whatever lies beyond them ends at the same bound), where
  // floats are exact integers and adding then subtracting 1.5 * 2^23 rounds half to even (the
  // default rounding mode; -ffp-contract=off keeps the two operations apart). NaN passes the
  // comparisons and goes to the top.
  float index(float v) const {
    constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
    float x = v * inverse;
    x = x < below ? below : x;
    x = x > above ? above : x;
    float q = ((x + kRound) - kRound) + zero;
    q = q < low ? low : q;
    q = q > high ? high : q;
    return q != q ? high : q;
  }
  // The float value v rounds to.
  float value(float v) const { return (index(v) - zero) * scale; }
};

}  // namespace liteexport::demo_backend
