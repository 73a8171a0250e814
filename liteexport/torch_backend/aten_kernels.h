// Running a MethodPlan with ATen ops, with the semantics of runtime_py's numpy kernels
// (part of backend.cpp's one translation unit; see there).
#pragma once

#include "program_plan.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Kernels (ATen), with runtime_py's checks where torch's own messages would be less clear

using Tensors = std::vector<at::Tensor>;

at::Tensor binary(const Step& s, const Tensors& x) {
  const at::Scalar alpha(s.alpha);
  if (s.has_scalar) {
    const at::Tensor& a = x[0];
    if (s.reverse) {
      // scalar OP alpha*x, e.g. rsub(x, s, alpha) = s - alpha*x
      at::Tensor scaled = s.alpha == 1.0 ? a : at::mul(a, alpha);
      at::Tensor scalar = at::scalar_tensor(s.scalar, a.options());
      switch (s.op) {
        case fb::OpCode::Add: return at::add(scalar, scaled);
        case fb::OpCode::Sub: return at::sub(scalar, scaled);
        case fb::OpCode::Mul: return at::mul(scalar, scaled);
        default: return at::div(scalar, scaled);
      }
    }
    // torch folds alpha into the scalar operand: add(x, s, alpha) = x + alpha*s (rounded to float32)
    at::Tensor operand = at::scalar_tensor(static_cast<double>(static_cast<float>(s.alpha * s.scalar)), a.options());
    switch (s.op) {
      case fb::OpCode::Add: return at::add(a, operand);
      case fb::OpCode::Sub: return at::sub(a, operand);
      case fb::OpCode::Mul: return at::mul(a, operand);
      default: return at::div(a, operand);
    }
  }
  const at::Tensor& a = s.reverse ? x[1] : x[0];
  const at::Tensor& b = s.reverse ? x[0] : x[1];
  switch (s.op) {
    case fb::OpCode::Add: return at::add(a, b, alpha);
    case fb::OpCode::Sub: return at::sub(a, b, alpha);
    case fb::OpCode::Mul: return at::mul(a, b);
    default: return at::div(a, b);
  }
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
  if (s.fused_relu) y.relu_();
  return y;
}

at::Tensor conv2d(const Step& s, const Tensors& x) {
  const at::Tensor& input = x[0];
  const at::Tensor& weight = x[1];
  check_batched(input, "conv2d");
  if (weight.dim() != 4) kernel_error("conv2d expects a 4-D weight, got shape " + shape_str(weight.sizes()));
  int64_t channels = input.size(input.dim() - 3);
  if (channels != weight.size(1) * s.groups || weight.size(0) % s.groups != 0) {
    kernel_error("input of shape " + shape_str(input.sizes()) + " does not fit weight of shape " +
                 shape_str(weight.sizes()) + " with groups=" + std::to_string(s.groups) + " (expected " +
                 std::to_string(weight.size(1) * s.groups) +
                 " input channels and output channels divisible by groups)");
  }
  std::optional<at::Tensor> bias;
  if (x.size() == 3) bias = x[2];
  at::Tensor y = at::conv2d(input, weight, bias, s.stride, s.padding, s.dilation, s.groups);
  if (s.fused_relu) y.relu_();
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
  const at::Tensor& input = x[0];
  if (input.dim() < s.normalized_ndim) {
    kernel_error("input of shape " + shape_str(input.sizes()) + " has fewer than normalized_ndim=" +
                 std::to_string(s.normalized_ndim) + " dimensions");
  }
  at::IntArrayRef normalized = input.sizes().slice(input.dim() - s.normalized_ndim);
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
  return at::layer_norm(input, normalized, weight, bias, s.eps);
}

at::Tensor adaptive_avg_pool2d(const Step& s, const at::Tensor& input) {
  check_batched(input, "adaptive_avg_pool2d");
  int64_t h = input.size(-2);
  int64_t w = input.size(-1);
  std::vector<int64_t> out = {s.dims[0] == -1 ? h : s.dims[0], s.dims[1] == -1 ? w : s.dims[1]};
  return at::adaptive_avg_pool2d(input, out);
}

at::Tensor transpose(const Step& s, const at::Tensor& input) {
  if (input.dim() != static_cast<int64_t>(s.dims.size())) {
    kernel_error("permutation " + tuple_str(s.dims) + " does not fit an input of shape " + shape_str(input.sizes()));
  }
  return input.permute(s.dims);
}

at::Tensor reshape(const Step& s, const at::Tensor& input) {
  try {
    return input.reshape(s.dims);
  } catch (const c10::Error&) {
    kernel_error("shape " + tuple_str(s.dims) + " is invalid for an input of shape " + shape_str(input.sizes()));
  }
}

at::Tensor flatten(const Step& s, const at::Tensor& input) {
  int64_t rank = std::max<int64_t>(input.dim(), 1);  // torch treats a 0-d input as 1-D
  int64_t start = s.start_dim;
  int64_t end = s.end_dim;
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

// The reduced axes of `input` (runtime_py's reductions.py): all of them when none are named.
std::vector<int64_t> reduced_axes(const Step& s, const at::Tensor& input) {
  int64_t rank = std::max<int64_t>(input.dim(), 1);  // torch reduces a 0-d tensor over dim 0 or -1
  std::vector<int64_t> axes;
  if (s.dims.empty()) {
    for (int64_t i = 0; i < input.dim(); ++i) axes.push_back(i);
    return axes;
  }
  for (int64_t axis : s.dims) {
    if (axis < -rank || axis >= rank) {
      kernel_error("axis " + std::to_string(axis) + " is out of range for an input of shape " + shape_str(input.sizes()));
    }
    axes.push_back(input.dim() == 0 ? 0 : (axis + rank) % rank);
  }
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    kernel_error("axes " + tuple_str(s.dims) + " name an axis twice for an input of shape " + shape_str(input.sizes()));
  }
  if (input.dim() == 0) axes.clear();
  return axes;
}

at::Tensor slice(const Step& s, const at::Tensor& input) {
  int64_t rank = input.dim();
  if (s.axis < -rank || s.axis >= rank) {
    kernel_error("axis " + std::to_string(s.axis) + " is out of range for an input of shape " + shape_str(input.sizes()));
  }
  return input.slice(s.axis, s.slice_start, s.slice_end, s.slice_step);
}

// torch.Tensor.expand's rule, with runtime_py's messages (slicing.py expanded_shape)
at::Tensor expand(const Step& s, const at::Tensor& input) {
  std::vector<int64_t> shape = input.sizes().vec();
  const std::string what = "cannot expand shape " + shape_str(input.sizes()) + " to " + tuple_str(s.dims);
  int64_t lead = static_cast<int64_t>(s.dims.size()) - static_cast<int64_t>(shape.size());
  if (lead < 0) kernel_error(what + ": fewer dims");
  std::vector<int64_t> out;
  for (int64_t i = 0; i < static_cast<int64_t>(s.dims.size()); ++i) {
    int64_t size = s.dims[i];
    if (i < lead) {
      if (size < 0) kernel_error(what + ": -1 in a new leading dim");
      out.push_back(size);
      continue;
    }
    int64_t have = shape[i - lead];
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

at::Tensor run_step(const Step& s, const Tensors& x) {
  switch (s.op) {
    case fb::OpCode::Add:
    case fb::OpCode::Sub:
    case fb::OpCode::Mul:
    case fb::OpCode::Div: return binary(s, x);
    case fb::OpCode::Neg: return at::neg(x[0]);
    case fb::OpCode::Relu: return at::relu(x[0]);
    case fb::OpCode::Sigmoid: return at::sigmoid(x[0]);
    case fb::OpCode::Tanh: return at::tanh(x[0]);
    case fb::OpCode::Gelu: return at::gelu(x[0], s.gelu_tanh ? "tanh" : "none");
    case fb::OpCode::Softmax: return at::softmax(x[0], s.axis);
    case fb::OpCode::LogSoftmax: return at::log_softmax(x[0], s.axis);
    case fb::OpCode::MatMul:
      if (x[0].dim() == 0 || x[1].dim() == 0) {
        kernel_error("matmul needs arguments of at least 1-D, got shapes " + shape_str(x[0].sizes()) + " and " +
                     shape_str(x[1].sizes()));
      }
      return at::matmul(x[0], x[1]);
    case fb::OpCode::Linear: return linear(s, x);
    case fb::OpCode::Conv2d: return conv2d(s, x);
    case fb::OpCode::ChannelAffine: return channel_affine(x);
    case fb::OpCode::LayerNorm: return layer_norm(s, x);
    case fb::OpCode::MaxPool2d:
      check_batched(x[0], "max_pool2d");
      return at::max_pool2d(x[0], s.kernel, s.stride, s.padding, s.dilation, s.ceil_mode);
    case fb::OpCode::AvgPool2d: {
      check_batched(x[0], "avg_pool2d");
      std::optional<int64_t> divisor;
      if (s.divisor_override != 0) divisor = s.divisor_override;
      return at::avg_pool2d(x[0], s.kernel, s.stride, s.padding, s.ceil_mode, s.count_include_pad, divisor);
    }
    case fb::OpCode::AdaptiveAvgPool2d: return adaptive_avg_pool2d(s, x[0]);
    case fb::OpCode::Transpose: return transpose(s, x[0]);
    case fb::OpCode::Reshape: return reshape(s, x[0]);
    case fb::OpCode::Flatten: return flatten(s, x[0]);
    case fb::OpCode::Cat: return at::cat(x, s.axis);
    case fb::OpCode::Clamp: return at::clamp(x[0], s.clamp_min, s.clamp_max);
    case fb::OpCode::HardSigmoid: return at::hardsigmoid(x[0]);
    case fb::OpCode::HardSwish: return at::hardswish(x[0]);
    case fb::OpCode::Silu: return at::silu(x[0]);
    case fb::OpCode::Mean: return at::mean(x[0], reduced_axes(s, x[0]), s.keepdim);
    case fb::OpCode::Sum: return at::sum(x[0], reduced_axes(s, x[0]), s.keepdim);
    case fb::OpCode::Slice: return slice(s, x[0]);
    case fb::OpCode::Expand: return expand(s, x[0]);
  }
  TORCH_INTERNAL_ASSERT(false, "unreachable opcode");
}

bool fits(at::IntArrayRef shape, const std::vector<int64_t>& expected) {
  if (shape.size() != expected.size()) return false;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != -1 && expected[i] != shape[i]) return false;
  }
  return true;
}

c10::impl::GenericList run_plan(const MethodPlan& plan, const c10::impl::GenericList& inputs) {
  TORCH_CHECK(inputs.size() == plan.inputs.size(), kPrefix, "method '", plan.method, "' expected ",
              plan.inputs.size(), " inputs, got ", inputs.size());
  std::vector<at::Tensor> slots(plan.num_slots);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputCheck& check = plan.inputs[i];
    c10::IValue value = inputs.get(i);
    bool ok = value.isTensor() && value.toTensor().scalar_type() == at::kFloat &&
              (!check.has_shape || fits(value.toTensor().sizes(), check.shape));
    if (!ok) {
      std::string expected = check.has_shape ? "float32 of shape " + expected_shape_str(check.shape) : "float32";
      std::string got = value.isTensor() ? dtype_str(value.toTensor().scalar_type()) + " of shape " +
                                               shape_str(value.toTensor().sizes())
                                         : std::string(value.tagKind()) + " (not a tensor)";
      TORCH_DELEGATED_BACKEND_THROW(false,
                                    check.blame + ": input " + std::to_string(i) + ": expected " + expected +
                                        ", got " + got,
                                    check.debug_handle);
    }
    slots[i] = value.toTensor();
  }
  for (const auto& [slot, weight] : plan.constants) slots[slot] = weight;

  at::NoGradGuard no_grad;
  Tensors args;
  for (const Step& step : plan.steps) {
    args.clear();
    for (int64_t slot : step.reads) args.push_back(slots[slot]);
    std::string reason;
    try {
      slots[step.write] = run_step(step, args);
      continue;
    } catch (const c10::Error& e) {
      reason = e.what_without_backtrace();
    } catch (const std::exception& e) {
      reason = e.what();
    }
    if (reason.empty()) reason = "unknown error";
    TORCH_DELEGATED_BACKEND_THROW(false, step.label + ": " + reason, step.debug_handle);
  }

  c10::impl::GenericList outputs(c10::TensorType::get());
  for (const auto& [slot, may_view_weight] : plan.outputs) {
    outputs.push_back(may_view_weight ? slots[slot].clone() : slots[slot]);
  }
  return outputs;
}

}  // namespace
