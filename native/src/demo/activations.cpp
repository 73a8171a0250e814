// Clamping activations, SiLU and elementwise math: clamp (hardtanh, relu6), hardsigmoid,
// hardswish, silu, log, sqrt, rsqrt, abs, exp, sin, cos.
// Each follows torch's CPU formula in float32, like runtime_py's activations.py.
#include <algorithm>
#include <cmath>

#include "../errors.h"
#include "float_math.h"
#include "grid_rounding.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

template <typename F>
Kernel elementwise(F f) {
  return [f](const Inputs& in) {
    const Array& x = *in[0];
    float* y;
    Array out = Array::uninitialized(x.shape, &y);  // every element written below
    const float* p = x.ptr();
    for (int64_t i = 0, n = x.size(); i < n; ++i) y[i] = f(p[i]);
    return out;
  };
}

// max then min with NaN kept (it fails both comparisons), as numpy's maximum/minimum and torch do;
// branch-free selects, so the loops vectorize (a branch per element mispredicts on mixed signs)
inline float clamp_keep_nan(float v, float low, float high) {
  v = v < low ? low : v;
  return v > high ? high : v;
}

inline float relu6(float v) { return clamp_keep_nan(v, 0.0f, 6.0f); }

}  // namespace

Kernel make_clamp(const ClampAttrs& a) {
  // a missing bound is an infinite one; maximum first, then minimum: min > max gives max
  // everywhere, as in torch
  const float low = a.min.has_value() ? static_cast<float>(*a.min) : -INFINITY;
  const float high = a.max.has_value() ? static_cast<float>(*a.max) : INFINITY;
  return elementwise([=](float v) { return clamp_keep_nan(v, low, high); });
}

// runtime_py/backends/demo/fake_quantize.py (grid_rounding.h)
Kernel make_fake_quantize(const QuantizeAttrs& a) {
  const GridRounding grid(a);
  return elementwise([grid](float v) { return grid.value(v); });
}

Kernel make_hardsigmoid() {
  return elementwise([](float v) { return relu6(v + 3.0f) / 6.0f; });
}

Kernel make_hardswish() {
  return elementwise([](float v) { return v * relu6(v + 3.0f) / 6.0f; });
}

Kernel make_silu() {
  // x / (1 + exp(-x)); exp overflowing to inf gives -0 or 0
  return elementwise([](float v) { return v / (1.0f + exp_float(-v)); });  // float_math.h: same bits on every ABI
}

Kernel make_math(Op op) {
  switch (op) {
    case Op::LOG: return elementwise([](float v) { return std::log(v); });
    case Op::SQRT: return elementwise([](float v) { return std::sqrt(v); });
    case Op::RSQRT: return elementwise([](float v) { return 1.0f / std::sqrt(v); });
    case Op::EXP: return elementwise(exp_float);  // float_math.h: same bits on every ABI
    case Op::SIN: return elementwise([](float v) { return std::sin(v); });
    case Op::COS: return elementwise([](float v) { return std::cos(v); });
    case Op::ABS: return elementwise([](float v) { return std::fabs(v); });
    default: not_in_family(op, "make_math");
  }
}

}  // namespace liteexport::demo_backend
