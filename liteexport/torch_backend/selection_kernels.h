// The selection and rounded-division kernels of issue 20 with ATen (part of backend.cpp's one
// translation unit, included by aten_kernels.h): triu/tril, argmax/argmin, topk's indices, FULL, floor/trunc
// division and remainder, with runtime_py's checks and messages (backends/demo/selection.py,
// rounding.py).
#pragma once

#include "demo_fill.h"

namespace {

at::Tensor triangle(const Step& s, const at::Tensor& input) {
  const bool upper = is_first_of(s, Op::TRIU, Op::TRIL, "triangle");
  if (input.dim() < 2)
    kernel_error(std::string(upper ? "triu" : "tril") + " needs an input of at least 2 dims, got shape " +
                 shape_str(input.sizes()));
  const int64_t diagonal = attrs_of<dp::DiagonalAttrs>(s).diagonal;
  return upper ? at::triu(input, diagonal) : at::tril(input, diagonal);
}

// ARGMAX, ARGMIN: the first extreme; a NaN is both the maximum and the minimum, as in ATen's own.
at::Tensor arg_reduce(const Step& s, const at::Tensor& input) {
  const auto& a = attrs_of<dp::ArgReduceAttrs>(s);
  const bool max = is_first_of(s, Op::ARGMAX, Op::ARGMIN, "arg_reduce");
  const int64_t axis = checked_axis(a.axis, input);
  if (input.dim() == 0) return at::zeros({}, input.options().dtype(at::kLong));
  if (input.size(axis) == 0)
    kernel_error(std::string(max ? "argmax" : "argmin") + " of the empty axis " + std::to_string(axis) +
                 " of an input of shape " + shape_str(input.sizes()));
  return max ? at::argmax(input, axis, a.keepdim) : at::argmin(input, axis, a.keepdim);
}

// FULL: the one-element value over sizes that may be the reference's (plus offsets, demo_fill.h),
// with runtime_py's checks and messages (backends/demo/typed.py make_full)
at::Tensor full(const Step& s, const at::Tensor& value, const at::Tensor& reference) {
  if (value.numel() != 1)
    kernel_error("the fill value must have one element, got shape " + shape_str(value.sizes()));
  std::string problem;
  const std::vector<int64_t> sizes =
      dp::fill_sizes(attrs_of<dp::FillAttrs>(s), reference.sizes().vec(), &problem);
  if (!problem.empty()) kernel_error(problem);
  return value.reshape({}).expand(sizes).contiguous();
}

// topk by a stable sort (NaN the largest, as torch's sort): equal values in index order, as
// runtime_py's; at::topk leaves their order unspecified.
at::Tensor topk(const Step& s, const at::Tensor& input) {
  const auto& a = attrs_of<dp::TopKAttrs>(s);
  const int64_t axis = checked_axis(a.axis, input);
  const at::Tensor view = input.dim() == 0 ? input.reshape({1}) : input;
  const int64_t size = view.size(axis);
  if (a.k > size)
    kernel_error("k=" + std::to_string(a.k) + " is larger than the size " + std::to_string(size) + " of axis " +
                 std::to_string(axis) + " (input of shape " + shape_str(input.sizes()) + ")");
  at::Tensor order = std::get<1>(at::sort(view, /*stable=*/true, axis, /*descending=*/a.largest));
  at::Tensor picked = order.narrow(axis, 0, a.k).contiguous();
  return input.dim() == 0 && a.k == 1 ? picked.reshape({}) : picked;
}

// FLOOR_DIV, TRUNC_DIV, REMAINDER: ATen's own floor/trunc division and remainder (whose float
// formulas runtime_py and the native core copy); an integer divisor of zero is refused first.
at::Tensor rounding(const Step& s, const Tensors& x) {
  const auto& a = attrs_of<dp::BinaryAttrs>(s);
  const at::Tensor& t = x[0];
  at::Tensor p = t, q;
  if (a.scalar) {
    // the scalar in the operand's dtype: float32, or a whole number for integer operands
    q = at::scalar_tensor(scalar_for(t, *a.scalar), t.options());
    if (a.reverse) std::swap(p, q);
  } else {
    p = a.reverse ? x[1] : x[0];
    q = a.reverse ? x[0] : x[1];
  }
  if (at::isIntegralType(t.scalar_type(), /*includeBool=*/false) && q.eq(0).any().item<bool>())
    kernel_error("integer division or modulo by zero");  // runtime_py's rounding.ZERO_DIVISOR
  switch (s.op) {
    case Op::FLOOR_DIV: return at::div(p, q, "floor");
    case Op::TRUNC_DIV: return at::div(p, q, "trunc");
    case Op::REMAINDER: return at::remainder(p, q);
    default: dp::not_in_family(s.op, "rounding");
  }
}

}  // namespace
