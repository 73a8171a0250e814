// Clamping activations, SiLU and elementwise math: clamp (hardtanh, relu6), hardsigmoid,
// hardswish, silu, log, sqrt, rsqrt, abs, exp, sin, cos.
// Each follows torch's CPU formula in float32, like runtime_py's activations.py.
#include <algorithm>
#include <cmath>

#include "../errors.h"
#include "float_math.h"
#include "grid_rounding.h"
#include "kernels.h"
#include "demo_traits_generated.h"

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

// The math family's scalar kernels, one per op, named by the op spec's `kernel`
// (schema/demo_ops.toml); make_math dispatches to them through the generated family list.
namespace math_kernels {

inline float log(float v) { return std::log(v); }
inline float log1p(float v) { return std::log1p(v); }
inline float sqrt(float v) { return std::sqrt(v); }
inline float rsqrt(float v) { return 1.0f / std::sqrt(v); }
inline float exp(float v) { return exp_float(v); }  // float_math.h: same bits on every ABI
inline float expm1(float v) { return expm1_float(v); }  // float_math.h, as exp
inline float floor(float v) { return std::floor(v); }
inline float ceil(float v) { return std::ceil(v); }
inline float trunc(float v) { return std::trunc(v); }
inline float round(float v) { return std::nearbyint(v); }  // halves to even (the default rounding mode), as torch
inline float erf(float v) { return std::erf(v); }
inline float sign(float v) { return static_cast<float>((v > 0.0f) - (v < 0.0f)); }  // 0 for NaN and -0, as torch
inline float sin(float v) { return std::sin(v); }
inline float cos(float v) { return std::cos(v); }
inline float abs(float v) { return std::fabs(v); }

}  // namespace math_kernels

Kernel make_math(Op op) {
  switch (op) {
#define LITEEXPORT_MATH_KERNEL(OP, kernel) \
  case Op::OP: return elementwise([](float v) { return math_kernels::kernel(v); });
    LITEEXPORT_DEMO_MATH_OPS(LITEEXPORT_MATH_KERNEL)
#undef LITEEXPORT_MATH_KERNEL
    default: not_in_family(op, "make_math");
  }
}

}  // namespace liteexport::demo_backend
