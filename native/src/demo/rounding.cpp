// Rounded division (runtime_py's rounding.py): FLOOR_DIV, TRUNC_DIV and REMAINDER on float32, int64
// and int32, with torch's and Python's sign rules. Floats follow ATen's formulas step for step
// (c10::div_floor_floating, remainder_kernel), as runtime_py does, so the engines agree bit for bit;
// an integer divided by zero is runtime_py's error, never a SIGFPE, and min / -1 wraps to min.
#include <cmath>
#include <limits>

#include "../errors.h"
#include "broadcast.h"
#include "int_math.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

const char* const kZeroDivisor = "integer division or modulo by zero";  // runtime_py's ZERO_DIVISOR

float floor_div(float a, float b) {
  if (b == 0.0f) return a / b;
  const float mod = std::fmod(a, b);
  float div = (a - mod) / b;
  if (mod != 0.0f && (b < 0.0f) != (mod < 0.0f)) div -= 1.0f;
  if (div == 0.0f) return std::copysign(0.0f, a / b);
  float floored = std::floor(div);
  if (div - floored > 0.5f) floored += 1.0f;
  return floored;
}

float remainder(float a, float b) {
  const float mod = std::fmod(a, b);
  return mod != 0.0f && (b < 0.0f) != (mod < 0.0f) ? mod + b : mod;
}

// Integer quotient toward zero and remainder of a / b, b != 0; min / -1 is min (wraps), remainder 0.
template <typename T>
T trunc_div(T a, T b) {
  if (b == -1) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(0) - static_cast<std::make_unsigned_t<T>>(a));
  return a / b;
}

template <typename T>
T int_remainder(T a, T b) {
  if (b == -1) return 0;
  const T r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? static_cast<T>(r + b) : r;
}

template <typename T>
T int_floor_div(T a, T b) {
  const T q = trunc_div(a, b);
  return b != -1 && a % b != 0 && (a < 0) != (b < 0) ? static_cast<T>(q - 1) : q;
}

// One element of kOp (a member of the family, fixed at compile time: no switch per element).
template <Op kOp, typename T>
T apply(T a, T b) {
  static_assert(kOp == Op::FLOOR_DIV || kOp == Op::TRUNC_DIV || kOp == Op::REMAINDER);
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (kOp == Op::FLOOR_DIV) return floor_div(a, b);
    else if constexpr (kOp == Op::TRUNC_DIV) return std::trunc(a / b);
    else return remainder(a, b);
  } else {
    if (b == 0) throw KernelError(kZeroDivisor);
    if constexpr (kOp == Op::FLOOR_DIV) return int_floor_div(a, b);
    else if constexpr (kOp == Op::TRUNC_DIV) return trunc_div(a, b);
    else return int_remainder(a, b);
  }
}

template <Op kOp>
Kernel bind_rounding(const BinaryAttrs& attrs, size_t n_inputs) {
  return [attrs, n_inputs](const Inputs& in) {
    return visit_dtype(in[0]->dtype, [&](auto zero) -> Array {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, uint8_t>) {
        throw KernelError("rounded division of bool operands");  // the decoder refuses them
      } else {
        if (n_inputs == 1) {
          // the scalar in the operand's dtype: float32, or a whole number (runtime_py's with_scalar)
          T s;
          if constexpr (std::is_floating_point_v<T>) s = static_cast<float>(*attrs.scalar);
          else s = truncate_to<T>(*attrs.scalar);
          if (attrs.reverse) return map_values<T, T>(*in[0], [=](T x) { return apply<kOp>(s, x); });
          return map_values<T, T>(*in[0], [=](T x) { return apply<kOp>(x, s); });
        }
        const size_t first = attrs.reverse ? 1 : 0;  // reverse: b OP a
        return broadcast_map<T, T, T>(*in[first], *in[1 - first], [](T p, T q) { return apply<kOp>(p, q); });
      }
    });
  };
}

}  // namespace

Kernel make_rounding(Op op, const BinaryAttrs& a, size_t n_inputs) {
  switch (op) {
    case Op::FLOOR_DIV: return bind_rounding<Op::FLOOR_DIV>(a, n_inputs);
    case Op::TRUNC_DIV: return bind_rounding<Op::TRUNC_DIV>(a, n_inputs);
    case Op::REMAINDER: return bind_rounding<Op::REMAINDER>(a, n_inputs);
    default: not_in_family(op, "make_rounding");
  }
}

}  // namespace liteexport::demo_backend
