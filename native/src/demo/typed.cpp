// The ops issue 20 added for text models over typed values (runtime_py's typed.py): cumsum, casts, FULL,
// comparisons, bitwise logic and where (sin and cos are in activations.cpp's make_math; embedding,
// gather and index_select in indexing.cpp). Each keeps torch's result dtype (the op spec's
// `result` rule, which the decoder checked against the program's slot dtypes); bools are bytes,
// read as nonzero = true.
#include <algorithm>

#include "../errors.h"
#include "demo_fill.h"
#include "broadcast.h"
#include "int_math.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

template <typename T>
constexpr bool is_bool = std::is_same_v<T, uint8_t>;

// A bool byte as 0 or 1 (a weight's byte from the file may be any nonzero value), others as is.
template <typename T>
T value_of(T v) {
  if constexpr (is_bool<T>) return v != 0;
  else return v;
}

// The running sum of T values into R (float32 for float32, int64 otherwise: torch's widening).
template <typename R, typename T>
Array cumsum(const Array& x, int64_t axis_attr) {
  R* y;
  Array out = Array::zeros(x.shape, &y);
  const T* p = x.data_as<T>();
  if (x.dim() == 0) {
    normalize_axis(axis_attr, 1);
    y[0] = static_cast<R>(value_of(p[0]));
    return out;
  }
  const int64_t axis = normalize_axis(axis_attr, x.dim());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.shape[static_cast<size_t>(d)];
  const int64_t length = x.shape[static_cast<size_t>(axis)];
  // sequentially along the axis, in R (float32 as torch's CPU cumsum and numpy; integers wrap)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      R acc = 0;
      for (int64_t k = 0; k < length; ++k) {
        const int64_t at = (o * length + k) * inner + i;
        acc = wrap_add(acc, static_cast<R>(value_of(p[at])));
        y[at] = acc;
      }
    }
  return out;
}

// torch's Tensor.to between the four dtypes: float -> int truncates toward zero (int_math.h),
// anything -> bool is != 0 (NaN is true), int64 -> int32 wraps, bool -> number is 0 or 1.
template <typename R, typename T>
R convert(T v) {
  if constexpr (is_bool<R>) return v != 0;
  else if constexpr (std::is_floating_point_v<T> && std::is_integral_v<R>) return truncate_to<R>(v);
  else return static_cast<R>(value_of(v));
}

template <typename C>
Kernel bind_compare(C compare, const BinaryAttrs& a, size_t n_inputs) {
  if (n_inputs == 1) {
    // the scalar as runtime_py's numpy compares it: rounded to float32 for a float32 operand (a
    // Python float is a weak scalar, NEP 50), an integer or bool operand compared as a double
    const double scalar = *a.scalar;
    const bool reverse = a.reverse;
    return [=](const Inputs& in) {
      return visit_dtype(in[0]->dtype, [&](auto zero) {
        using T = decltype(zero);
        using S = std::conditional_t<std::is_same_v<T, float>, float, double>;
        const S s = static_cast<S>(scalar);
        return map_values<uint8_t, T>(*in[0], [=](T v) {
          const S x = static_cast<S>(value_of(v));
          return static_cast<uint8_t>(reverse ? compare(s, x) : compare(x, s));
        });
      });
    };
  }
  const size_t first = a.reverse ? 1 : 0;  // reverse: b OP a
  return [=](const Inputs& in) {
    return visit_dtype(in[0]->dtype, [&](auto zero) {
      using T = decltype(zero);  // both operands: the decoder checked they share one dtype
      return broadcast_map<uint8_t, T, T>(*in[first], *in[1 - first], [=](T p, T q) {
        return static_cast<uint8_t>(compare(value_of(p), value_of(q)));
      });
    });
  };
}

// a & b or a | b on int64/int32, logical on bool.
template <typename F>
Kernel bind_bitwise(F f) {
  return [=](const Inputs& in) {
    return visit_dtype(in[0]->dtype, [&](auto zero) -> Array {
      using T = decltype(zero);
      if constexpr (std::is_integral_v<T>)
        return broadcast_map<T, T, T>(*in[0], *in[1], [=](T p, T q) { return static_cast<T>(f(value_of(p), value_of(q))); });
      else
        throw KernelError("bitwise logic on float32 operands");  // the decoder refuses it: bool, int64, int32 only
    });
  };
}

}  // namespace

Kernel make_cumsum(const AxisAttrs& a) {
  const int64_t axis = a.axis;
  return [axis](const Inputs& in) {
    const Array& x = *in[0];
    return visit_dtype(x.dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, float>) return cumsum<float, T>(x, axis);
      else return cumsum<int64_t, T>(x, axis);  // bool and int32 sum in int64, as torch
    });
  };
}

Kernel make_cast(const CastAttrs& a) {
  const auto target = static_cast<DType>(a.dtype);  // a known dtype: the decoder's rule known_dtype
  return [target](const Inputs& in) {
    const Array& x = *in[0];
    if (x.dtype == target) return x;  // the value itself (arrays are read-only)
    return visit_dtype(x.dtype, [&](auto from) {
      using T = decltype(from);
      return visit_dtype(target, [&](auto to) {
        using R = decltype(to);
        return map_values<R, T>(x, [](T v) { return convert<R>(v); });
      });
    });
  };
}

Kernel make_compare(Op op, const BinaryAttrs& a, size_t n_inputs) {
  switch (op) {
    case Op::EQ: return bind_compare([](auto p, auto q) { return p == q; }, a, n_inputs);
    case Op::NE: return bind_compare([](auto p, auto q) { return p != q; }, a, n_inputs);
    case Op::LT: return bind_compare([](auto p, auto q) { return p < q; }, a, n_inputs);
    case Op::LE: return bind_compare([](auto p, auto q) { return p <= q; }, a, n_inputs);
    case Op::GT: return bind_compare([](auto p, auto q) { return p > q; }, a, n_inputs);
    case Op::GE: return bind_compare([](auto p, auto q) { return p >= q; }, a, n_inputs);
    default: not_in_family(op, "make_compare");
  }
}

Kernel make_bitwise(Op op) {
  switch (op) {
    case Op::BITWISE_AND: return bind_bitwise([](auto p, auto q) { return p & q; });
    case Op::BITWISE_OR: return bind_bitwise([](auto p, auto q) { return p | q; });
    case Op::BITWISE_NOT:  // ~x, logical not for bool
      return [](const Inputs& in) {
        return visit_dtype(in[0]->dtype, [&](auto zero) -> Array {
          using T = decltype(zero);
          if constexpr (is_bool<T>) return map_values<T, T>(*in[0], [](T v) { return static_cast<T>(v == 0); });
          else if constexpr (std::is_integral_v<T>) return map_values<T, T>(*in[0], [](T v) { return static_cast<T>(~v); });
          else throw KernelError("bitwise not of float32 values");  // the decoder refuses it
        });
      };
    default: not_in_family(op, "make_bitwise");
  }
}

Kernel make_where() {
  return [](const Inputs& in) {
    const Array &condition = *in[0], &a = *in[1], &b = *in[2];
    Shape shape = broadcast_shapes({&condition.shape, &a.shape, &b.shape});
    return visit_dtype(a.dtype, [&](auto zero) {
      using T = decltype(zero);  // a and b share it; the condition is bool (the decoder checked both)
      T* y;
      Array out = Array::zeros(shape, &y);
      const uint8_t* c = condition.data_as<uint8_t>();
      const T *pa = a.data_as<T>(), *pb = b.data_as<T>();
      for_each_broadcast<3>(shape, {&condition.shape, &a.shape, &b.shape},
                            [&](int64_t k, const std::array<int64_t, 3>& at) { y[k] = c[at[0]] ? pa[at[1]] : pb[at[2]]; });
      return out;
    });
  };
}

// start, start + 1, ... up to the reference's size along axis plus end_offset, in int64: a range
// over a sequence length known only at run time (the reference's values are not read). The
// messages are runtime_py's (runtime_py/backends/demo/typed.py make_arange_like).
Kernel make_arange_like(const ArangeLikeAttrs& a) {
  return [a](const Inputs& in) {
    const Array& reference = *in[0];
    const int64_t rank = reference.dim();
    if (a.axis < -rank || a.axis >= rank)
      throw KernelError("axis " + std::to_string(a.axis) + " is out of range for a reference of shape " +
                        py_shape(reference.shape));
    const int64_t size = reference.shape[static_cast<size_t>(a.axis < 0 ? a.axis + rank : a.axis)];
    const int64_t end = size + a.end_offset;
    if (end < a.start)
      throw KernelError("the range's end " + std::to_string(end) + " (size " + std::to_string(size) + " of axis " +
                        std::to_string(a.axis) + " " + (a.end_offset >= 0 ? "+" : "") +
                        std::to_string(a.end_offset) + ") is before its start " + std::to_string(a.start));
    int64_t* y;
    Array out = Array::zeros({end - a.start}, &y);
    for (int64_t i = 0; i < end - a.start; ++i) y[i] = a.start + i;
    return out;
  };
}

// torch.full(sizes, value): the one-element value over sizes that may be the reference's (plus
// offsets, demo_fill.h), its values not read: a causal mask over a length known only at run time.
// The messages are runtime_py's (runtime_py/backends/demo/typed.py make_full).
Kernel make_full(const FillAttrs& a) {
  return [a](const Inputs& in) {
    const Array &value = *in[0], &reference = *in[1];
    if (value.size() != 1)
      throw KernelError("the fill value must have one element, got shape " + py_shape(value.shape));
    std::string problem;
    const Shape shape = demo_program::fill_sizes(a, reference.shape, &problem);
    if (!problem.empty()) throw KernelError(problem);
    return visit_dtype(value.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* y;
      Array out = Array::uninitialized(shape, &y);
      std::fill(y, y + out.size(), *value.data_as<T>());
      return out;
    });
  };
}

}  // namespace liteexport::demo_backend
