// Elementwise and per-axis kernels: binary arithmetic with numpy broadcasting, activations,
// softmax. Arithmetic stays float32 like runtime_py (scalars are rounded to float32 first);
// reductions accumulate in double, which is within float32 tolerance of numpy's pairwise sums.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "../errors.h"
#include "../run_limits.h"
#include "broadcast.h"
#include "float_math.h"
#include "int_math.h"
#include "kernels.h"

namespace liteexport::demo_backend {

int64_t normalize_axis(int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw KernelError("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                      std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

void relu_inplace(float* y, int64_t n) {
  // a select, not a branch: vectorizes, and random signs cost no mispredictions
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.0f ? 0.0f : y[i];  // NaN compares false and stays
}

namespace {

// numpy's shape text in its broadcast error: "(2,3)", "(4,)".
std::string np_shape(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

Shape broadcast_shapes(const std::vector<const Shape*>& shapes) {
  size_t nd = 0;
  for (const Shape* s : shapes) nd = std::max(nd, s->size());
  Shape out(nd, 1);
  bool ok = true;
  for (const Shape* s : shapes)
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t& o = out[nd - s->size() + i];
      const int64_t d = (*s)[i];
      if (d != o && d != 1 && o != 1) ok = false;
      else if (d != 1) o = d;
    }
  if (!ok) {
    std::string text = "operands could not be broadcast together with shapes ";
    for (const Shape* s : shapes) text += np_shape(*s) + " ";
    throw KernelError(text);
  }
  return out;
}

namespace {

template <typename F>
Array map_unary(const Array& x, F f) {
  return map_values<float, float>(x, f);
}

// out = f(a, b) on float32 values with numpy broadcasting.
template <typename F>
Array broadcast(const Array& a, const Array& b, F f) {
  return broadcast_map<float, float, float>(a, b, f);
}

template <typename F>
Kernel bind_binary(F f, const BinaryAttrs& a, size_t n_inputs) {
  const float alpha = static_cast<float>(a.alpha);
  if (n_inputs == 1) {
    const float scalar = static_cast<float>(*a.scalar);
    if (a.reverse) {  // scalar OP alpha*x, e.g. rsub(x, s, alpha) = s - alpha*x
      if (a.alpha == 1.0) return [=](const Inputs& in) { return map_unary(*in[0], [=](float x) { return f(scalar, x); }); };
      return [=](const Inputs& in) { return map_unary(*in[0], [=](float x) { return f(scalar, alpha * x); }); };
    }
    // torch folds alpha into the scalar operand: add(x, s, alpha) = x + alpha*s
    const float operand = static_cast<float>(a.alpha * *a.scalar);
    return [=](const Inputs& in) { return map_unary(*in[0], [=](float x) { return f(x, operand); }); };
  }
  if (a.alpha == 1.0) {
    if (a.reverse) return [=](const Inputs& in) { return broadcast(*in[1], *in[0], f); };
    return [=](const Inputs& in) { return broadcast(*in[0], *in[1], f); };
  }
  if (a.reverse)
    return [=](const Inputs& in) { return broadcast(*in[1], *in[0], [=](float p, float q) { return f(p, alpha * q); }); };
  return [=](const Inputs& in) { return broadcast(*in[0], *in[1], [=](float p, float q) { return f(p, alpha * q); }); };
}

// ADD, SUB and MUL on int64/int32 operands, as runtime_py's make_binary: the scalar and alpha
// (whole numbers: the compiler casts to float32 first otherwise) in the operand's dtype, as torch's
// int64 + int; sums and products wrap (int_math.h).
template <typename F>
Kernel bind_int_binary(F f, const BinaryAttrs& a, size_t n_inputs) {
  const BinaryAttrs attrs = a;
  return [f, attrs, n_inputs](const Inputs& in) {
    return visit_dtype(in[0]->dtype, [&](auto zero) -> Array {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>) {
        const T alpha = truncate_to<T>(attrs.alpha);
        if (n_inputs == 1) {
          if (attrs.reverse) {  // scalar OP alpha*x
            const T scalar = truncate_to<T>(*attrs.scalar);
            return map_values<T, T>(*in[0], [=](T x) { return f(scalar, wrap_mul(alpha, x)); });
          }
          const T operand = truncate_to<T>(attrs.alpha * *attrs.scalar);  // alpha folded in, as torch
          return map_values<T, T>(*in[0], [=](T x) { return f(x, operand); });
        }
        if (attrs.alpha != static_cast<double>(alpha))
          throw KernelError("alpha=" + std::to_string(attrs.alpha) + " is not a whole number for " +
                            dtype_name(in[0]->dtype) + " operands");
        const size_t first = attrs.reverse ? 1 : 0;  // reverse: b OP alpha*a
        return broadcast_map<T, T, T>(*in[first], *in[1 - first], [=](T p, T q) { return f(p, wrap_mul(alpha, q)); });
      } else {
        throw KernelError(std::string("integer arithmetic on ") + dtype_name(in[0]->dtype) + " operands");
      }
    });
  };
}

// The float32 kernel, and for ADD/SUB/MUL (which the op spec also types int64/int32) the integer
// one, chosen by the operands' dtype: float32 programs pay one comparison per call.
template <typename F, typename I>
Kernel bind_any_binary(F f, I i, const BinaryAttrs& a, size_t n_inputs) {
  Kernel float_kernel = bind_binary(f, a, n_inputs), int_kernel = bind_int_binary(i, a, n_inputs);
  return [float_kernel, int_kernel](const Inputs& in) {
    return in[0]->dtype == DType::Float32 ? float_kernel(in) : int_kernel(in);
  };
}

}  // namespace

Kernel make_binary(Op op, const BinaryAttrs& a, size_t n_inputs) {
  const auto add = [](auto p, auto q) { return wrap_add(p, q); };
  switch (op) {
    case Op::ADD: return bind_any_binary([](float p, float q) { return p + q; }, add, a, n_inputs);
    case Op::SUB: return bind_any_binary([](float p, float q) { return p - q; }, [](auto p, auto q) { return wrap_sub(p, q); }, a, n_inputs);
    case Op::MUL: return bind_any_binary([](float p, float q) { return p * q; }, [](auto p, auto q) { return wrap_mul(p, q); }, a, n_inputs);
    case Op::POW: return bind_binary([](float p, float q) { return std::pow(p, q); }, a, n_inputs);
    case Op::DIV: return bind_binary([](float p, float q) { return p / q; }, a, n_inputs);
    default: not_in_family(op, "make_binary");
  }
}

Kernel make_unary(Op op) {
  switch (op) {
    case Op::NEG:
      return [](const Inputs& in) {
        return visit_dtype(in[0]->dtype, [&](auto zero) {
          using T = decltype(zero);  // float32, int64 or int32 (the op spec's dtypes)
          return map_values<T, T>(*in[0], [](T x) {
            if constexpr (std::is_floating_point_v<T>) return -x;
            else return wrap_sub(T{0}, x);  // -INT64_MIN wraps to itself, as in torch
          });
        });
      };
    case Op::RELU: return [](const Inputs& in) { return map_unary(*in[0], [](float x) { return x < 0.0f ? 0.0f : x; }); };
    case Op::SIGMOID:
      // exp overflows to inf for very negative x, giving exactly 0
      return [](const Inputs& in) { return map_unary(*in[0], [](float x) { return 1.0f / (1.0f + exp_float(-x)); }); };
    case Op::TANH: return [](const Inputs& in) { return map_unary(*in[0], [](float x) { return tanh_float(x); }); };
    default: not_in_family(op, "make_unary");
  }
}

namespace {

// erf(x) in float within 4.2e-7 absolute (checked against math.erf over [-6, 6]; gelu's error is
// then below 1.3e-6, well inside the parity tolerance): x * P(x^2) / Q(x^2) on x clamped to
// [-4, 4], where erf is +-1 in float. The coefficients are the rational minimax fit Eigen and XLA
// use for float erf. (A NaN x gives erf(4); gelu's product with x keeps the NaN.)
float erf_rational(float x) {
  x = x < 4.0f ? x : 4.0f;  // two plain selects: the compiler if-converts and vectorizes them
  x = x > -4.0f ? x : -4.0f;
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 + -2.10102402082508e-06f;
  p = p * x2 + -5.69250639462346e-05f;
  p = p * x2 + -7.34990630326855e-04f;
  p = p * x2 + -2.95459980854025e-03f;
  p = p * x2 + -1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 + -2.13374055278905e-04f;
  q = q * x2 + -1.68282697438203e-03f;
  q = q * x2 + -7.37332916720468e-03f;
  q = q * x2 + -1.42647390514189e-02f;
  return x * p / q;
}

}  // namespace

Kernel make_gelu(const GeluAttrs& a) {
  if (a.tanh_approximation)
    return [](const Inputs& in) {
      return map_unary(*in[0], [](float x) {
        const float k = static_cast<float>(std::sqrt(2.0 / M_PI));
        return 0.5f * x * (1.0f + tanh_float(k * x * (1.0f + 0.044715f * x * x)));
      });
    };
  // x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))), as torch computes it, with erf as a rational
  // function (erf_rational below): libm's erfc took a quarter of an encoder layer's time, and this
  // vectorizes and gives the same bits on every ABI.
  return [](const Inputs& in) {
    return map_unary(*in[0], [](float x) { return 0.5f * x * (1.0f + erf_rational(x * 0.70710678118654752f)); });
  };
}

Kernel make_softmax(const AxisAttrs& a, bool log) {
  const int64_t axis_attr = a.axis;
  return [=](const Inputs& in) {
    const Array& x = *in[0];
    // a 0-d x is one row of one value (axis 0 or -1, as torch and numpy allow): softmax 1.0
    const bool scalar = x.dim() == 0 && (axis_attr == 0 || axis_attr == -1);
    const int64_t axis = scalar ? 0 : normalize_axis(axis_attr, x.dim());
    float* y;
    Array out = Array::uninitialized(x.shape, &y);  // every row written below
    if (x.size() == 0) return out;
    int64_t outer = 1, inner = 1, len = scalar ? 1 : x.shape[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.shape[static_cast<size_t>(d)];
    const float* p = x.ptr();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const float* row = p + o * len * inner + i;
        float* dst = y + o * len * inner + i;
        float max = -std::numeric_limits<float>::infinity();
        bool nan = false;
        for (int64_t k = 0; k < len; ++k) {
          nan = nan || std::isnan(row[k * inner]);
          max = std::max(max, row[k * inner]);
        }
        if (nan) max = std::numeric_limits<float>::quiet_NaN();  // numpy's max propagates NaN
        // exp in float by the core (float_math.h: the same bits on every ABI), summed in double;
        // log(sum) is libm's, once per row
        // the exps first (a loop that vectorizes), then their sum in order
        for (int64_t k = 0; k < len; ++k) dst[k * inner] = exp_float(row[k * inner] - max);
        double sum = 0;
        for (int64_t k = 0; k < len; ++k) sum += dst[k * inner];
        for (int64_t k = 0; k < len; ++k)
          dst[k * inner] = log ? static_cast<float>((row[k * inner] - max) - std::log(sum))
                               : static_cast<float>(dst[k * inner] / sum);
      }
    return out;
  };
}

}  // namespace liteexport::demo_backend
