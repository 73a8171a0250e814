// Running a MethodPlan with ATen ops, with the semantics of runtime_py's numpy kernels
// (part of backend.cpp's one translation unit; see there).
#pragma once

#include <ATen/record_function.h>

#include "program_plan.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Kernels (ATen), with runtime_py's checks where torch's own messages would be less clear

using Tensors = std::vector<at::Tensor>;

template <typename A>
const A& attrs_of(const Step& s) {
  return std::get<A>(s.attrs);  // the decoder checked the attribute type
}

// Which op of a family of two `s` computes: true for `first`, false for `second`; any other op is
// an internal error (dp::not_in_family), never `second` by default.
bool is_first_of(const Step& s, Op first, Op second, const char* family) {
  if (s.op == first) return true;
  if (s.op != second) dp::not_in_family(s.op, family);
  return false;
}

at::Tensor integer_binary(const Step& s, const dp::BinaryAttrs& a, const Tensors& x);

// A scalar attribute as an operand of `t`: a whole number is an integer Scalar for an integer
// tensor (torch's int64 + 1 stays int64; the compiler casts to float32 first otherwise).
at::Scalar scalar_for(const at::Tensor& t, double value) {
  if (at::isIntegralType(t.scalar_type(), /*includeBool=*/true) && value == static_cast<double>(static_cast<int64_t>(value)))
    return at::Scalar(static_cast<int64_t>(value));
  return at::Scalar(value);
}

at::Tensor binary(const Step& s, const Tensors& x) {
  const auto& a = attrs_of<dp::BinaryAttrs>(s);
  if (at::isIntegralType(x[0].scalar_type(), /*includeBool=*/false)) return integer_binary(s, a, x);
  const at::Scalar alpha(a.alpha);
  if (a.scalar) {
    const at::Tensor& t = x[0];
    if (a.reverse) {
      // scalar OP alpha*x, e.g. rsub(x, s, alpha) = s - alpha*x
      at::Tensor scaled = a.alpha == 1.0 ? t : at::mul(t, alpha);
      at::Tensor scalar = at::scalar_tensor(*a.scalar, t.options());
      switch (s.op) {
        case Op::ADD: return at::add(scalar, scaled);
        case Op::SUB: return at::sub(scalar, scaled);
        case Op::MUL: return at::mul(scalar, scaled);
        case Op::POW: return at::pow(at::Scalar(*a.scalar), t);
        case Op::DIV: return at::div(scalar, scaled);
        default: dp::not_in_family(s.op, "binary");
      }
    }
    // torch folds alpha into the scalar operand: add(x, s, alpha) = x + alpha*s (rounded to float32)
    at::Tensor operand = at::scalar_tensor(static_cast<double>(static_cast<float>(a.alpha * *a.scalar)), t.options());
    switch (s.op) {
      case Op::ADD: return at::add(t, operand);
      case Op::SUB: return at::sub(t, operand);
      case Op::MUL: return at::mul(t, operand);
      case Op::POW: return at::pow(t, at::Scalar(static_cast<double>(static_cast<float>(*a.scalar))));
      case Op::DIV: return at::div(t, operand);
      default: dp::not_in_family(s.op, "binary");
    }
  }
  const at::Tensor& p = a.reverse ? x[1] : x[0];
  const at::Tensor& q = a.reverse ? x[0] : x[1];
  switch (s.op) {
    case Op::ADD: return at::add(p, q, alpha);
    case Op::SUB: return at::sub(p, q, alpha);
    case Op::MUL: return at::mul(p, q);
    case Op::POW: return at::pow(p, q);
    case Op::DIV: return at::div(p, q);
    default: dp::not_in_family(s.op, "binary");
  }
}

// ADD, SUB, MUL of int64/int32 tensors: every number in the tensors' dtype (whole, as the
// compiler emits them), so the result keeps it.
at::Tensor integer_binary(const Step& s, const dp::BinaryAttrs& a, const Tensors& x) {
  const at::Tensor& t = x[0];
  const at::Scalar alpha = scalar_for(t, a.alpha);
  auto apply = [&](const at::Tensor& p, const at::Tensor& q, bool scale_q) -> at::Tensor {
    switch (s.op) {
      case Op::ADD: return scale_q ? at::add(p, q, alpha) : at::add(p, q);
      case Op::SUB: return scale_q ? at::sub(p, q, alpha) : at::sub(p, q);
      case Op::MUL: return at::mul(p, q);
      default: dp::not_in_family(s.op, "integer_binary");  // DIV and POW take float32 only (the op spec)
    }
  };
  if (a.scalar) {
    at::Tensor scalar = at::scalar_tensor(scalar_for(t, *a.scalar), t.options());
    // reverse: scalar OP alpha*x; else x OP alpha*scalar (torch folds alpha into the scalar)
    return a.reverse ? apply(scalar, at::mul(t, alpha), false) : apply(t, scalar, true);
  }
  return a.reverse ? apply(x[1], x[0], true) : apply(x[0], x[1], true);
}

// An index operand's values must lie in [0, size): torch would wrap negative ones (gather does
// not, embedding does not), so every executor refuses them the same way.
void check_indices(const at::Tensor& index, int64_t size, const char* what) {
  if (index.numel() == 0) return;
  const int64_t lo = index.min().item<int64_t>();
  const int64_t hi = index.max().item<int64_t>();
  if (lo < 0 || hi >= size)
    kernel_error(std::string(what) + " " + std::to_string(lo < 0 ? lo : hi) + " is out of range [0, " +
                 std::to_string(size) + ")");
}

int64_t checked_axis(int64_t axis, const at::Tensor& x) {
  const int64_t rank = std::max<int64_t>(x.dim(), 1);
  if (axis < -rank || axis >= rank)
    kernel_error("axis " + std::to_string(axis) + " is out of range for an input of shape " + shape_str(x.sizes()));
  return (axis + rank) % rank;
}

at::Tensor embedding(const Tensors& x) {
  const at::Tensor& weight = x[0];
  if (weight.dim() != 2)
    kernel_error("the embedding table must be 2-D [N, D], got shape " + shape_str(weight.sizes()));
  check_indices(x[1], weight.size(0), "index");
  return at::embedding(weight, x[1]);
}

at::Tensor gather(const Step& s, const Tensors& x) {
  const at::Tensor& input = x[0];
  const at::Tensor& index = x[1];
  const int64_t axis = checked_axis(attrs_of<dp::AxisAttrs>(s).axis, input);
  if (index.dim() != input.dim())
    kernel_error("index of shape " + shape_str(index.sizes()) + " must have the rank of the input " +
                 shape_str(input.sizes()));
  for (int64_t d = 0; d < index.dim(); ++d)
    if (d != axis && index.size(d) > input.size(d))
      kernel_error("index of shape " + shape_str(index.sizes()) + " is larger than the input " +
                   shape_str(input.sizes()) + " off axis " + std::to_string(axis));
  check_indices(index, input.dim() ? input.size(axis) : 1, "index");
  return at::gather(input, axis, index.to(at::kLong));
}

at::Tensor index_select(const Step& s, const Tensors& x) {
  const at::Tensor& input = x[0];
  const at::Tensor& index = x[1];
  const int64_t axis = checked_axis(attrs_of<dp::AxisAttrs>(s).axis, input);
  if (index.dim() > 1) kernel_error("index_select takes a 1-D index, got shape " + shape_str(index.sizes()));
  check_indices(index, input.dim() ? input.size(axis) : 1, "index");
  if (input.dim() == 0) return at::index_select(input.reshape({1}), 0, index.reshape({-1}));
  return at::index_select(input, axis, index.reshape({-1}));
}

at::Tensor compare(const Step& s, const Tensors& x) {
  const auto& a = attrs_of<dp::BinaryAttrs>(s);
  auto apply = [&](const at::Tensor& p, const at::Tensor& q) -> at::Tensor {
    switch (s.op) {
      case Op::EQ: return at::eq(p, q);
      case Op::NE: return at::ne(p, q);
      case Op::LT: return at::lt(p, q);
      case Op::LE: return at::le(p, q);
      case Op::GT: return at::gt(p, q);
      case Op::GE: return at::ge(p, q);
      default: dp::not_in_family(s.op, "compare");
    }
  };
  if (a.scalar) {
    // a whole number compares exactly with an integer tensor; a float32 tensor compares in float32,
    // as runtime_py (numpy's weak scalars) and torch with a Python number
    const at::Tensor& t = x[0];
    at::Tensor scalar = at::isIntegralType(t.scalar_type(), true)
                            ? at::scalar_tensor(scalar_for(t, *a.scalar), t.options().dtype(
                                  *a.scalar == static_cast<double>(static_cast<int64_t>(*a.scalar)) ? t.scalar_type()
                                                                                                     : at::kDouble))
                            : at::scalar_tensor(*a.scalar, t.options());
    return a.reverse ? apply(scalar, t) : apply(t, scalar);
  }
  return a.reverse ? apply(x[1], x[0]) : apply(x[0], x[1]);
}

at::Tensor cumsum(const Step& s, const at::Tensor& input) {
  const int64_t axis = checked_axis(attrs_of<dp::AxisAttrs>(s).axis, input);
  // bool and int32 sum in int64, as torch's default
  return input.dim() == 0 ? input.to(at::isIntegralType(input.scalar_type(), true) ? at::kLong : input.scalar_type())
                          : at::cumsum(input, axis);
}

// torch.arange(start, S + end_offset) where S is the reference's size along axis: a range over a
// sequence length known only at run time (the reference's values are not read)
at::Tensor arange_like(const Step& s, const at::Tensor& reference) {
  const auto& a = attrs_of<dp::ArangeLikeAttrs>(s);
  if (reference.dim() == 0) kernel_error("ARANGE_LIKE needs a reference with at least one dim");
  const int64_t size = reference.size(checked_axis(a.axis, reference));
  const int64_t end = size + a.end_offset;
  if (end < a.start)  // as torch.arange's
    kernel_error("the range's end " + std::to_string(end) + " (size " + std::to_string(size) + " of axis " +
                 std::to_string(a.axis) + (a.end_offset < 0 ? " " : " +") + std::to_string(a.end_offset) +
                 ") is before its start " + std::to_string(a.start));
  return at::arange(a.start, end, reference.options().dtype(at::kLong));
}

// conv and pooling take CHW or NCHW
void check_batched(const at::Tensor& x, const char* op) {
  if (x.dim() != 3 && x.dim() != 4) {
    kernel_error(std::string(op) + " expects a 3-D (CHW) or 4-D (NCHW) input, got shape " + shape_str(x.sizes()));
  }
}

at::Tensor linear(const Step& s, const Tensors& x) {
  const at::Tensor& input = x[0];
  const at::Tensor& weight = x[1];
  if (input.dim() == 0 || weight.dim() != 2 || input.size(-1) != weight.size(1)) {
    kernel_error("input of shape " + shape_str(input.sizes()) + " and weight of shape " + shape_str(weight.sizes()) +
                 " do not match (expected weight [out_features, in_features] with in_features == input.shape[-1])");
  }
  std::optional<at::Tensor> bias;
  if (x.size() == 3) bias = x[2];
  at::Tensor y = at::linear(input, weight, bias);
  if (attrs_of<dp::FusedAttrs>(s).activation == dp::Activation::Relu) y.relu_();
  return y;
}

at::Tensor conv2d(const Step& s, const Tensors& x) {
  const auto& a = attrs_of<dp::Conv2dAttrs>(s);
  const at::Tensor& input = x[0];
  const at::Tensor& weight = x[1];
  check_batched(input, "conv2d");
  if (weight.dim() != 4) kernel_error("conv2d expects a 4-D weight, got shape " + shape_str(weight.sizes()));
  int64_t channels = input.size(input.dim() - 3);
  if (channels != weight.size(1) * a.groups || weight.size(0) % a.groups != 0) {
    kernel_error("input of shape " + shape_str(input.sizes()) + " does not fit weight of shape " +
                 shape_str(weight.sizes()) + " with groups=" + std::to_string(a.groups) + " (expected " +
                 std::to_string(weight.size(1) * a.groups) +
                 " input channels and output channels divisible by groups)");
  }
  std::optional<at::Tensor> bias;
  if (x.size() == 3) bias = x[2];
  at::Tensor y = at::conv2d(input, weight, bias, a.stride, a.padding, a.dilation, a.groups);
  if (a.activation == dp::Activation::Relu) y.relu_();
  return y;
}

at::Tensor channel_affine(const Tensors& x) {
  const at::Tensor& input = x[0];
  const at::Tensor& scale = x[1];
  const at::Tensor& shift = x[2];
  if (input.dim() < 2 || scale.dim() != 1 || shift.dim() != 1 || scale.size(0) != input.size(1) ||
      shift.size(0) != input.size(1)) {
    std::string channels = input.dim() > 1 ? std::to_string(input.size(1)) : "?";
    kernel_error("input of shape " + shape_str(input.sizes()) + " needs scale and shift of shape (" + channels +
                 ",), got " + shape_str(scale.sizes()) + " and " + shape_str(shift.sizes()));
  }
  std::vector<int64_t> per_channel(input.dim() - 1, 1);
  per_channel[0] = -1;
  return at::add(at::mul(input, scale.view(per_channel)), shift.view(per_channel));
}

at::Tensor layer_norm(const Step& s, const Tensors& x) {
  const auto& a = attrs_of<dp::LayerNormAttrs>(s);
  const at::Tensor& input = x[0];
  if (input.dim() < a.normalized_ndim) {
    kernel_error("input of shape " + shape_str(input.sizes()) + " has fewer than normalized_ndim=" +
                 std::to_string(a.normalized_ndim) + " dimensions");
  }
  at::IntArrayRef normalized = input.sizes().slice(input.dim() - a.normalized_ndim);
  std::optional<at::Tensor> weight;
  std::optional<at::Tensor> bias;
  if (x.size() > 1) weight = x[1];
  if (x.size() > 2) bias = x[2];
  const std::pair<const char*, const std::optional<at::Tensor>*> params[] = {{"weight", &weight}, {"bias", &bias}};
  for (const auto& [name, param] : params) {
    if (param->has_value() && (*param)->sizes() != normalized) {
      kernel_error(std::string(name) + " of shape " + shape_str((*param)->sizes()) + " is not the normalized shape " +
                   shape_str(normalized));
    }
  }
  return at::layer_norm(input, normalized, weight, bias, a.eps);
}

at::Tensor max_pool2d(const Step& s, const at::Tensor& input) {
  const auto& a = attrs_of<dp::Pool2dAttrs>(s);
  check_batched(input, "max_pool2d");
  return at::max_pool2d(input, a.kernel, a.stride, a.padding, a.dilation, a.ceil_mode);
}

at::Tensor avg_pool2d(const Step& s, const at::Tensor& input) {
  const auto& a = attrs_of<dp::Pool2dAttrs>(s);
  check_batched(input, "avg_pool2d");
  return at::avg_pool2d(input, a.kernel, a.stride, a.padding, a.ceil_mode, a.count_include_pad,
                        a.divisor_override);
}

at::Tensor adaptive_avg_pool2d(const Step& s, const at::Tensor& input) {
  const auto& dims = attrs_of<dp::ShapeAttrs>(s).dims;
  check_batched(input, "adaptive_avg_pool2d");
  int64_t h = input.size(-2);
  int64_t w = input.size(-1);
  std::vector<int64_t> out = {dims[0] == -1 ? h : dims[0], dims[1] == -1 ? w : dims[1]};
  return at::adaptive_avg_pool2d(input, out);
}

// ATen's own upsample kernels, with the scales the model gave (they map coordinates; absent: in/out)
at::Tensor resize2d(const Step& s, const at::Tensor& input) {
  const auto& a = attrs_of<dp::ResizeAttrs>(s);
  if (input.dim() != 4) kernel_error("resize2d expects a 4-D (NCHW) input, got shape " + shape_str(input.sizes()));
  const std::vector<int64_t> size = {a.size[0], a.size[1]};
  if (!a.bilinear) return at::upsample_nearest2d(input, size, a.scale_h, a.scale_w);
  return at::upsample_bilinear2d(input, size, a.align_corners, a.scale_h, a.scale_w);
}

at::Tensor transpose(const Step& s, const at::Tensor& input) {
  const auto& perm = attrs_of<dp::PermuteAttrs>(s).perm;
  if (input.dim() != static_cast<int64_t>(perm.size())) {
    kernel_error("permutation " + dp::tuple_text(perm) + " does not fit an input of shape " + shape_str(input.sizes()));
  }
  return input.permute(perm);
}

at::Tensor reshape(const Step& s, const at::Tensor& input) {
  const auto& dims = attrs_of<dp::ShapeAttrs>(s).dims;
  try {
    return input.reshape(dims);
  } catch (const c10::Error&) {
    kernel_error("shape " + dp::tuple_text(dims) + " is invalid for an input of shape " + shape_str(input.sizes()));
  }
}

at::Tensor flatten(const Step& s, const at::Tensor& input) {
  const auto& a = attrs_of<dp::FlattenAttrs>(s);
  int64_t rank = std::max<int64_t>(input.dim(), 1);  // torch treats a 0-d input as 1-D
  int64_t start = a.start_dim;
  int64_t end = a.end_dim;
  if (!(-rank <= start && start < rank && -rank <= end && end < rank)) {
    kernel_error("flatten dims (" + std::to_string(start) + ", " + std::to_string(end) +
                 ") are out of range for shape " + shape_str(input.sizes()));
  }
  if ((start + rank) % rank > (end + rank) % rank) {
    kernel_error("flatten start_dim " + std::to_string(start) + " comes after end_dim " + std::to_string(end) +
                 " for shape " + shape_str(input.sizes()));
  }
  return at::flatten(input, start, end);
}

at::Tensor matmul(const Tensors& x) {
  if (x[0].dim() == 0 || x[1].dim() == 0) {
    kernel_error("matmul needs arguments of at least 1-D, got shapes " + shape_str(x[0].sizes()) + " and " +
                 shape_str(x[1].sizes()));
  }
  return at::matmul(x[0], x[1]);
}

// The reduced axes of `input` (runtime_py's reductions.py): all of them when none are named.
std::vector<int64_t> reduced_axes(const Step& s, const at::Tensor& input) {
  const auto& named = attrs_of<dp::ReduceAttrs>(s).axes;
  int64_t rank = std::max<int64_t>(input.dim(), 1);  // torch reduces a 0-d tensor over dim 0 or -1
  std::vector<int64_t> axes;
  if (named.empty()) {
    for (int64_t i = 0; i < input.dim(); ++i) axes.push_back(i);
    return axes;
  }
  for (int64_t axis : named) {
    if (axis < -rank || axis >= rank) {
      kernel_error("axis " + std::to_string(axis) + " is out of range for an input of shape " + shape_str(input.sizes()));
    }
    axes.push_back((axis + rank) % rank);
  }
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    kernel_error("axes " + dp::tuple_text(named) + " name an axis twice for an input of shape " + shape_str(input.sizes()));
  }
  if (input.dim() == 0) axes.clear();
  return axes;
}

at::Tensor slice(const Step& s, const at::Tensor& input) {
  const auto& a = attrs_of<dp::SliceAttrs>(s);
  if (a.axis < -input.dim() || a.axis >= input.dim()) {
    kernel_error("axis " + std::to_string(a.axis) + " is out of range for an input of shape " + shape_str(input.sizes()));
  }
  return input.slice(a.axis, a.start, a.end, a.step);
}

// torch.Tensor.expand's rule, with runtime_py's messages (slicing.py expanded_shape)
at::Tensor expand(const Step& s, const at::Tensor& input) {
  const auto& dims = attrs_of<dp::ShapeAttrs>(s).dims;
  const std::string what = "cannot expand shape " + shape_str(input.sizes()) + " to " + dp::tuple_text(dims);
  const int64_t lead = static_cast<int64_t>(dims.size()) - input.dim();
  if (lead < 0) kernel_error(what + ": fewer dims");
  std::vector<int64_t> out;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    const int64_t size = dims[i];
    if (i < lead) {
      if (size < 0) kernel_error(what + ": -1 in a new leading dim");
      out.push_back(size);
      continue;
    }
    const int64_t have = input.size(i - lead);
    if (size == -1 || size == have) {
      out.push_back(have);
    } else if (have == 1 && size >= 0) {
      out.push_back(size);
    } else {
      kernel_error(what);
    }
  }
  return input.expand(out).contiguous();
}

}  // namespace

#include "demo_traits_generated.h"
#include "selection_kernels.h"
#include "state_kernels.h"
#include "attention_kernels.h"

// the case labels of a generated family list (demo_traits_generated.h)
#define LITEEXPORT_CASE(OP) case Op::OP:

namespace {

// The kernel table: a switch without default over the generated enum, so a new opcode without
// a kernel here does not compile (-Werror=switch), whatever flags the build uses.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
at::Tensor run_step(const Step& s, const Tensors& x) {
  switch (s.op) {
    // the families of the op spec (schema/demo_ops.toml `family`; demo_traits_generated.h)
    LITEEXPORT_DEMO_BINARY_OPS(LITEEXPORT_CASE) return binary(s, x);
    LITEEXPORT_DEMO_COMPARE_OPS(LITEEXPORT_CASE) return compare(s, x);
    LITEEXPORT_DEMO_ROUNDING_OPS(LITEEXPORT_CASE) return rounding(s, x);
    // the unary and math families: the spec's oracle, torch.NAME(x) as at::NAME(x)
#define LITEEXPORT_ORACLE_CASE(OP, name) \
  case Op::OP: return at::name(x[0]);
    LITEEXPORT_DEMO_TORCH_UNARY_OPS(LITEEXPORT_ORACLE_CASE)
#undef LITEEXPORT_ORACLE_CASE
    case Op::GELU: return at::gelu(x[0], attrs_of<dp::GeluAttrs>(s).tanh_approximation ? "tanh" : "none");
    case Op::SOFTMAX: return at::softmax(x[0], attrs_of<dp::AxisAttrs>(s).axis);
    case Op::LOG_SOFTMAX: return at::log_softmax(x[0], attrs_of<dp::AxisAttrs>(s).axis);
    case Op::MATMUL: return matmul(x);
    case Op::LINEAR: return linear(s, x);
    case Op::CONV2D: return conv2d(s, x);
    case Op::CHANNEL_AFFINE: return channel_affine(x);
    case Op::LAYER_NORM: return layer_norm(s, x);
    case Op::MAX_POOL2D: return max_pool2d(s, x[0]);
    case Op::AVG_POOL2D: return avg_pool2d(s, x[0]);
    case Op::ADAPTIVE_AVG_POOL2D: return adaptive_avg_pool2d(s, x[0]);
    case Op::TRANSPOSE: return transpose(s, x[0]);
    case Op::RESHAPE: return reshape(s, x[0]);
    case Op::FLATTEN: return flatten(s, x[0]);
    case Op::CAT: return at::cat(x, attrs_of<dp::AxisAttrs>(s).axis);
    case Op::CLAMP: return at::clamp(x[0], attrs_of<dp::ClampAttrs>(s).min, attrs_of<dp::ClampAttrs>(s).max);
    case Op::HARDSIGMOID: return at::hardsigmoid(x[0]);
    case Op::HARDSWISH: return at::hardswish(x[0]);
    case Op::SILU: return at::silu(x[0]);
    case Op::MEAN: return at::mean(x[0], reduced_axes(s, x[0]), attrs_of<dp::ReduceAttrs>(s).keepdim);
    case Op::SUM: return at::sum(x[0], reduced_axes(s, x[0]), attrs_of<dp::ReduceAttrs>(s).keepdim);
    case Op::SLICE: return slice(s, x[0]);
    case Op::EXPAND: return expand(s, x[0]);
    case Op::EMBEDDING: return embedding(x);
    case Op::CAST: return x[0].to(static_cast<at::ScalarType>(attrs_of<dp::CastAttrs>(s).dtype));
    case Op::GATHER: return gather(s, x);
    case Op::INDEX_SELECT: return index_select(s, x);
    case Op::BITWISE_NOT: return at::bitwise_not(x[0]);
    case Op::BITWISE_AND: return at::bitwise_and(x[0], x[1]);
    case Op::BITWISE_OR: return at::bitwise_or(x[0], x[1]);
    case Op::WHERE: return at::where(x[0], x[1], x[2]);
    case Op::CUMSUM: return cumsum(s, x[0]);
    case Op::ARANGE_LIKE: return arange_like(s, x[0]);
    case Op::RESIZE2D: return resize2d(s, x[0]);
    case Op::FAKE_QUANTIZE: {
      const auto& a = attrs_of<dp::QuantizeAttrs>(s);
      return at::fake_quantize_per_tensor_affine(x[0], a.scale, a.zero_point, a.quant_min, a.quant_max);
    }
    case Op::TRIU:
    case Op::TRIL: return triangle(s, x[0]);
    case Op::ARGMAX:
    case Op::ARGMIN: return arg_reduce(s, x[0]);
    case Op::FULL: return full(s, x[0], x[1]);
    case Op::TOPK: return topk(s, x[0]);
    case Op::INDEX_COPY: return index_copy(s, x);
    case Op::STATE_WRITE: return state_write(x);
    case Op::ATTENTION: return attention(s, x);
  }
  TORCH_INTERNAL_ASSERT(false, "unreachable opcode");
}
#pragma GCC diagnostic pop

bool fits(at::IntArrayRef shape, const std::vector<int64_t>& expected) {
  if (shape.size() != expected.size()) return false;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != -1 && expected[i] != shape[i]) return false;
  }
  return true;
}

// An execution error of the demo backend, coded (see throw_program_error) and carrying the
// debug handle of the instruction to blame.
[[noreturn]] void throw_execution(liteexport::demo_errors::Code code, liteexport::demo_errors::Fields fields,
                                  int64_t debug_handle) {
  TORCH_DELEGATED_BACKEND_THROW(false, coded_text(liteexport::demo_errors::ProgramError(code, std::move(fields))),
                                debug_handle);
}

c10::impl::GenericList run_plan(const MethodPlan& plan, const c10::impl::GenericList& inputs) {
  using liteexport::demo_errors::Code;
  if (inputs.size() != plan.inputs.size()) {
    throw_program_error(liteexport::demo_errors::ProgramError(
        Code::INPUT_COUNT, {{"method", plan.method}, {"expected", std::to_string(plan.inputs.size())},
                            {"got", std::to_string(inputs.size())}}));
  }
  std::vector<at::Tensor> slots(plan.num_slots);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const dp::InputCheck& check = plan.inputs[i];
    c10::IValue value = inputs.get(i);
    // DType numbers are c10::ScalarType's
    const auto want = static_cast<at::ScalarType>(check.dtype);
    bool ok = value.isTensor() && value.toTensor().scalar_type() == want &&
              (!check.shape || fits(value.toTensor().sizes(), *check.shape));
    if (!ok) {
      std::string expected = check.shape ? dtype_str(want) + " of shape " + dp::tuple_text(*check.shape, true)
                                         : dtype_str(want);
      std::string got = value.isTensor() ? dtype_str(value.toTensor().scalar_type()) + " of shape " +
                                               shape_str(value.toTensor().sizes())
                                         : std::string(value.tagKind()) + " (not a tensor)";
      throw_execution(Code::INPUT_MISMATCH,
                      {{"instruction", check.blame}, {"index", std::to_string(i)}, {"expected", expected}, {"got", got}},
                      check.debug_handle);
    }
    slots[i] = value.toTensor();
  }
  auto problem = dp::dim_problem(plan.named_dims, [&slots](size_t index, size_t axis) {
    return slots[index].size(static_cast<int64_t>(axis));
  });
  if (problem) {
    const dp::InputCheck& check = plan.inputs[problem->index];
    problem->fields.insert(problem->fields.begin(), {"instruction", check.blame});
    throw_execution(problem->code, std::move(problem->fields), check.debug_handle);
  }
  for (const auto& [slot, weight] : plan.constants) slots[slot] = weight;
  for (const auto& [slot, tensor] : plan.states) slots[slot] = tensor;

  at::NoGradGuard no_grad;
  // a call writing program state: one at a time per module, its writes undone if it fails
  std::unique_lock<std::mutex> state_lock;
  std::optional<Journal> journal;
  if (plan.module_state) {
    state_lock = std::unique_lock<std::mutex>(plan.module_state->mutex);
    journal.emplace();
  }
  Tensors args;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i];
    // each instruction is a user scope of torch.profiler (its name built only while one records)
    RECORD_USER_SCOPE(step.profile_name);
    args.clear();
    for (uint32_t slot : step.reads) args.push_back(slots[slot]);
    std::string reason;
    try {
      slots[step.write] = run_step(step, args);
      continue;
    } catch (const StatePosition& e) {  // a cache position the inputs gave: the caller's (exit 6)
      throw_execution(Code::STATE_POSITION,
                      {{"instruction", step.label}, {"position", std::to_string(e.position)},
                       {"state", plan.state_names.at(step.reads[0])}, {"size", std::to_string(e.size)},
                       {"axis", std::to_string(e.axis)}},
                      step.debug_handle);
    } catch (const c10::Error& e) {
      reason = e.what_without_backtrace();
    } catch (const std::exception& e) {
      reason = e.what();
    }
    if (reason.empty()) reason = "unknown error";
    // an input whose shape the program does not declare is checked by the steps it reaches
    // (demo_input_reach.h): runtime_py's INPUT_UNFIT
    const auto unfit = dp::undeclared_input_reaching(plan.steps, i, static_cast<size_t>(plan.num_slots),
                                                     dp::undeclared_inputs(plan.inputs));
    if (unfit) {
      const at::Tensor& input = inputs.get(*unfit).toTensor();  // a tensor: the input checks passed
      throw_execution(Code::INPUT_UNFIT,
                      {{"instruction", step.label}, {"index", std::to_string(*unfit)},
                       {"got", dtype_str(input.scalar_type()) + " of shape " + shape_str(input.sizes())},
                       {"reason", reason}},
                      step.debug_handle);
    }
    throw_execution(Code::KERNEL_FAILED, {{"instruction", step.label}, {"reason", reason}}, step.debug_handle);
  }

  c10::impl::GenericList outputs(c10::TensorType::get());
  for (const auto& [slot, may_view_weight] : plan.outputs) {
    outputs.push_back(may_view_weight ? slots[slot].clone() : slots[slot]);
  }
  if (journal) journal->done();
  return outputs;
}

}  // namespace
