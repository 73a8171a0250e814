// Decoding and checking a compiled program into a MethodPlan (part of backend.cpp's one
// translation unit; see there).
#pragma once

#include "demo_program_generated.h"

namespace {


namespace fb = liteexport::demo;

constexpr const char* kBackendName = "backend_with_compiler_demo";
constexpr const char* kPrefix = "backend_with_compiler_demo (liteexport): ";
constexpr uint32_t kProgramFormatVersion = 1;  // runtime_py.format.program.PROGRAM_FORMAT_VERSION
constexpr const char* kExpected =
    "expected the processed module liteexport writes: Dict[str, Any] "
    "{\"programs\": Dict[str, Tensor(uint8)], \"weights\": List[Tensor(float32)]}";

// ---------------------------------------------------------------------------------------------
// Formatting helpers (messages follow runtime_py's wording)

template <typename T>
std::string list_str(const std::vector<T>& values) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  out << "]";
  return out.str();
}

template <typename T>
std::string tuple_str(const std::vector<T>& values) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  out << (values.size() == 1 ? ",)" : ")");
  return out.str();
}

std::string shape_str(at::IntArrayRef sizes) { return tuple_str(sizes.vec()); }

// ``(1, 3, ?, ?)``: -1 (a size known only at run time) shows as ``?``.
std::string expected_shape_str(const std::vector<int64_t>& shape) {
  std::vector<std::string> parts;
  for (int64_t size : shape) parts.push_back(size == -1 ? "?" : std::to_string(size));
  return tuple_str(parts);
}

std::string dtype_str(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kByte: return "uint8";
    case at::kChar: return "int8";
    case at::kShort: return "int16";
    case at::kInt: return "int32";
    case at::kLong: return "int64";
    case at::kBool: return "bool";
    default: return c10::toString(type);
  }
}

// Python's repr of a float: the shortest text that reads back the same value, "2.0" not "2".
std::string num_str(double value) {
  std::string text;
  for (int precision = 1; precision <= 17; ++precision) {
    std::ostringstream out;
    out.precision(precision);
    out << value;
    text = out.str();
    if (std::stod(text) == value) break;
  }
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // n: inf, nan
  return text;
}

const char* op_name(uint16_t op) {
  static const char* const names[] = {
      "ADD",    "SUB",        "MUL",         "DIV",        "NEG",
      "RELU",   "SIGMOID",    "TANH",        "GELU",       "SOFTMAX",
      "LOG_SOFTMAX", "MATMUL", "LINEAR",     "CONV2D",     "CHANNEL_AFFINE",
      "LAYER_NORM", "MAX_POOL2D", "AVG_POOL2D", "ADAPTIVE_AVG_POOL2D", "TRANSPOSE",
      "RESHAPE", "FLATTEN",   "CAT",         "CLAMP",      "HARDSIGMOID",
      "HARDSWISH", "SILU",    "MEAN",        "SUM",        "SLICE",
      "EXPAND"};
  return op < sizeof(names) / sizeof(names[0]) ? names[op] : nullptr;
}

// Every problem of a program is reported as "<message> (at <where>)", like runtime_py's FormatError.
[[noreturn]] void format_error(const std::string& message, const std::string& where) {
  TORCH_CHECK(false, kPrefix, message, " (at ", where, ")");
}

// A kernel's own check failed: caught by the executor and re-thrown with the instruction's handle.
[[noreturn]] void kernel_error(const std::string& message) { throw std::invalid_argument(message); }

// ---------------------------------------------------------------------------------------------
// The plan: everything compile decides once per method

struct Step {
  fb::OpCode op = fb::OpCode::Add;
  std::vector<int64_t> reads;
  int64_t write = 0;
  int64_t debug_handle = -1;
  std::string label;
  // Binary
  double alpha = 1.0;
  double scalar = 0.0;
  bool has_scalar = false;
  bool reverse = false;
  // Gelu
  bool gelu_tanh = false;
  // Axis (softmax, log_softmax, cat)
  int64_t axis = 0;
  // Fused (linear), Conv2d
  bool fused_relu = false;
  // Conv2d, Pool2d
  std::vector<int64_t> kernel, stride, padding, dilation;
  int64_t groups = 1;
  bool ceil_mode = false;
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
  // LayerNorm
  int64_t normalized_ndim = 0;
  double eps = 0.0;
  // Shape (reshape, adaptive pool), Permute
  std::vector<int64_t> dims;
  // Flatten
  int64_t start_dim = 0;
  int64_t end_dim = 0;
  // Clamp
  std::optional<double> clamp_min, clamp_max;
  // Reduce (axes in dims), Slice (axis in axis)
  bool keepdim = false;
  int64_t slice_start = 0, slice_end = INT64_MAX, slice_step = 1;
};

struct InputCheck {
  bool has_shape = false;
  std::vector<int64_t> shape;  // -1 entries: any size
  std::string blame;           // label of the first instruction reading the input (or the method)
  int64_t debug_handle = -1;   // that instruction's debug handle
};

struct MethodPlan : torch::CustomClassHolder {
  std::string method;
  int64_t num_slots = 0;
  std::vector<InputCheck> inputs;
  std::vector<std::pair<int64_t, at::Tensor>> constants;  // (slot, weight)
  std::vector<Step> steps;
  std::vector<std::pair<int64_t, bool>> outputs;  // (slot, clone it: it may view a weight)
};

// ---------------------------------------------------------------------------------------------
// Decoding and checking (mirrors runtime_py/format/program_codec.py and backends/demo/plan.py)

struct OpSpec {
  int min_inputs;
  int max_inputs;  // -1: any number
  fb::Attributes attrs;
  bool attrs_optional;  // all fields have defaults: the instruction may omit the attributes
  bool may_alias_input;
};

OpSpec op_spec(fb::OpCode op) {
  using A = fb::Attributes;
  switch (op) {
    case fb::OpCode::Add:
    case fb::OpCode::Sub:
    case fb::OpCode::Mul:
    case fb::OpCode::Div: return {1, 2, A::Binary, true, false};
    case fb::OpCode::Neg:
    case fb::OpCode::Relu:
    case fb::OpCode::Sigmoid:
    case fb::OpCode::Tanh: return {1, 1, A::NONE, false, false};
    case fb::OpCode::Gelu: return {1, 1, A::Gelu, true, false};
    case fb::OpCode::Softmax:
    case fb::OpCode::LogSoftmax: return {1, 1, A::Axis, false, false};
    case fb::OpCode::MatMul: return {2, 2, A::NONE, false, false};
    case fb::OpCode::Linear: return {2, 3, A::Fused, true, false};
    case fb::OpCode::Conv2d: return {2, 3, A::Conv2d, true, false};
    case fb::OpCode::ChannelAffine: return {3, 3, A::NONE, false, false};
    case fb::OpCode::LayerNorm: return {1, 3, A::LayerNorm, false, false};
    case fb::OpCode::MaxPool2d:
    case fb::OpCode::AvgPool2d: return {1, 1, A::Pool2d, false, false};
    case fb::OpCode::AdaptiveAvgPool2d: return {1, 1, A::Shape, false, false};
    case fb::OpCode::Transpose: return {1, 1, A::Permute, false, true};
    case fb::OpCode::Reshape: return {1, 1, A::Shape, false, true};
    case fb::OpCode::Flatten: return {1, 1, A::Flatten, false, true};
    case fb::OpCode::Cat: return {1, -1, A::Axis, false, false};
    case fb::OpCode::Clamp: return {1, 1, A::Clamp, false, false};
    case fb::OpCode::HardSigmoid:
    case fb::OpCode::HardSwish:
    case fb::OpCode::Silu: return {1, 1, A::NONE, false, false};
    case fb::OpCode::Mean:
    case fb::OpCode::Sum: return {1, 1, A::Reduce, false, false};
    case fb::OpCode::Slice: return {1, 1, A::Slice, false, true};
    case fb::OpCode::Expand: return {1, 1, A::Shape, false, false};
  }
  TORCH_INTERNAL_ASSERT(false, "unreachable opcode");
}

// Python dataclass names of the attribute types, as runtime_py's messages name them.
const char* attrs_name(fb::Attributes tag) {
  switch (tag) {
    case fb::Attributes::NONE: return "none";
    case fb::Attributes::Binary: return "BinaryAttrs";
    case fb::Attributes::Gelu: return "GeluAttrs";
    case fb::Attributes::Axis: return "AxisAttrs";
    case fb::Attributes::Fused: return "FusedAttrs";
    case fb::Attributes::Conv2d: return "Conv2dAttrs";
    case fb::Attributes::LayerNorm: return "LayerNormAttrs";
    case fb::Attributes::Pool2d: return "Pool2dAttrs";
    case fb::Attributes::Shape: return "ShapeAttrs";
    case fb::Attributes::Permute: return "PermuteAttrs";
    case fb::Attributes::Flatten: return "FlattenAttrs";
    case fb::Attributes::Clamp: return "ClampAttrs";
    case fb::Attributes::Reduce: return "ReduceAttrs";
    case fb::Attributes::Slice: return "SliceAttrs";
  }
  return "unknown";
}

// Whether a table stores a field explicitly (the generated tables inherit flatbuffers::Table privately).
template <typename T>
bool has_field(const T* table, flatbuffers::voffset_t field) {
  return reinterpret_cast<const flatbuffers::Table*>(table)->CheckField(field);
}

template <typename T>
std::vector<int64_t> to_vector(const flatbuffers::Vector<T>* values) {
  std::vector<int64_t> out;
  if (values != nullptr) {
    out.reserve(values->size());
    for (auto value : *values) out.push_back(static_cast<int64_t>(value));
  }
  return out;
}

std::vector<int64_t> pair_of(const flatbuffers::Vector<int32_t>* values, const std::string& name,
                             const std::string& where) {
  std::vector<int64_t> pair = to_vector(values);
  if (pair.size() != 2) {
    format_error(name + " must hold 2 values [h, w], found " + std::to_string(pair.size()), where);
  }
  return pair;
}

// check_window_attrs of runtime_py/backends/demo/windows.py; returns the problem or "".
std::string window_problem(const std::vector<int64_t>* kernel, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
  const std::pair<const char*, const std::vector<int64_t>*> pairs[] = {
      {"kernel", kernel}, {"stride", &stride}, {"padding", &padding}, {"dilation", &dilation}};
  for (const auto& [name, pair] : pairs) {
    if (pair == nullptr) continue;
    int64_t low = std::min((*pair)[0], (*pair)[1]);
    if (std::string(name) == "padding") {
      if (low < 0) return "padding must be non-negative, got " + tuple_str(*pair);
    } else if (low < 1) {
      return std::string(name) + " must be positive, got " + tuple_str(*pair);
    }
  }
  return "";
}

std::string instruction_label(size_t index, uint16_t op, const std::vector<int64_t>& inputs,
                              const std::vector<int64_t>& outputs) {
  const char* name = op_name(op);
  std::string op_text = name ? std::string(name) : "opcode " + std::to_string(op);
  return "instruction #" + std::to_string(index) + " " + op_text + " (slots " + list_str(inputs) + " -> " +
         list_str(outputs) + ")";
}

// Decodes the attributes of one instruction into ``step`` and checks their values.
void bind_attributes(const fb::Instruction* inst, Step& step, size_t n_inputs, const std::string& at) {
  const std::string invalid = "invalid attributes: ";
  switch (inst->attributes_type()) {
    case fb::Attributes::NONE: break;
    case fb::Attributes::Binary: {
      const auto* a = inst->attributes_as_Binary();
      if (!a->has_scalar() && has_field(a, fb::Binary::VT_SCALAR)) {
        format_error("scalar given but has_scalar is false", at);
      }
      step.alpha = a->alpha();
      step.scalar = a->scalar();
      step.has_scalar = a->has_scalar();
      step.reverse = a->reverse();
      break;
    }
    case fb::Attributes::Gelu: step.gelu_tanh = inst->attributes_as_Gelu()->tanh_approximation(); break;
    case fb::Attributes::Axis: step.axis = inst->attributes_as_Axis()->axis(); break;
    case fb::Attributes::Fused: {
      auto activation = inst->attributes_as_Fused()->activation();
      if (activation != fb::Activation::None && activation != fb::Activation::Relu) {
        format_error("unknown activation " + std::to_string(static_cast<int>(activation)), at);
      }
      step.fused_relu = activation == fb::Activation::Relu;
      break;
    }
    case fb::Attributes::Conv2d: {
      const auto* a = inst->attributes_as_Conv2d();
      step.stride = pair_of(a->stride(), "stride", at);
      step.padding = pair_of(a->padding(), "padding", at);
      step.dilation = pair_of(a->dilation(), "dilation", at);
      step.groups = a->groups();
      auto activation = a->activation();
      if (activation != fb::Activation::None && activation != fb::Activation::Relu) {
        format_error("unknown activation " + std::to_string(static_cast<int>(activation)), at);
      }
      step.fused_relu = activation == fb::Activation::Relu;
      break;
    }
    case fb::Attributes::LayerNorm: {
      const auto* a = inst->attributes_as_LayerNorm();
      step.normalized_ndim = a->normalized_ndim();
      step.eps = a->eps();
      break;
    }
    case fb::Attributes::Pool2d: {
      const auto* a = inst->attributes_as_Pool2d();
      step.kernel = pair_of(a->kernel(), "kernel", at);
      step.stride = pair_of(a->stride(), "stride", at);
      step.padding = pair_of(a->padding(), "padding", at);
      step.dilation = pair_of(a->dilation(), "dilation", at);
      step.ceil_mode = a->ceil_mode();
      step.count_include_pad = a->count_include_pad();
      step.divisor_override = a->divisor_override();
      break;
    }
    case fb::Attributes::Shape: step.dims = to_vector(inst->attributes_as_Shape()->dims()); break;
    case fb::Attributes::Permute: step.dims = to_vector(inst->attributes_as_Permute()->perm()); break;
    case fb::Attributes::Flatten: {
      const auto* a = inst->attributes_as_Flatten();
      step.start_dim = a->start_dim();
      step.end_dim = a->end_dim();
      break;
    }
    case fb::Attributes::Clamp: {
      const auto* a = inst->attributes_as_Clamp();
      const std::tuple<const char*, bool, flatbuffers::voffset_t, double, std::optional<double>*> bounds[] = {
          {"min", a->has_min(), fb::Clamp::VT_MIN, a->min(), &step.clamp_min},
          {"max", a->has_max(), fb::Clamp::VT_MAX, a->max(), &step.clamp_max}};
      for (const auto& [name, present, field, value, bound] : bounds) {
        if (!present && has_field(a, field)) format_error(std::string(name) + " given but has_" + name + " is false", at);
        if (present) *bound = value;
      }
      break;
    }
    case fb::Attributes::Reduce: {
      const auto* a = inst->attributes_as_Reduce();
      step.dims = to_vector(a->axes());
      step.keepdim = a->keepdim();
      break;
    }
    case fb::Attributes::Slice: {
      const auto* a = inst->attributes_as_Slice();
      step.axis = a->axis();
      step.slice_start = a->start();
      step.slice_end = a->end();
      step.slice_step = a->step();
      break;
    }
  }

  // the value checks of the kernels' factories (ValueError in runtime_py -> "invalid attributes")
  switch (step.op) {
    case fb::OpCode::Add:
    case fb::OpCode::Sub:
    case fb::OpCode::Mul:
    case fb::OpCode::Div:
      if ((step.op == fb::OpCode::Mul || step.op == fb::OpCode::Div) && step.alpha != 1.0) {
        format_error(invalid + "alpha=" + num_str(step.alpha) + " is only allowed for ADD and SUB", at);
      }
      if ((n_inputs == 1) != step.has_scalar) {
        format_error(invalid + "a scalar operand is needed with exactly one input, and only then", at);
      }
      break;
    case fb::OpCode::Conv2d: {
      if (inst->attributes_type() == fb::Attributes::NONE) {
        step.stride = {1, 1};
        step.padding = {0, 0};
        step.dilation = {1, 1};
      }
      std::string problem = window_problem(nullptr, step.stride, step.padding, step.dilation);
      if (!problem.empty()) format_error(invalid + problem, at);
      if (step.groups < 1) format_error(invalid + "groups must be positive, got " + std::to_string(step.groups), at);
      break;
    }
    case fb::OpCode::LayerNorm:
      if (step.normalized_ndim < 1) {
        format_error(invalid + "normalized_ndim must be positive, got " + std::to_string(step.normalized_ndim), at);
      }
      break;
    case fb::OpCode::MaxPool2d:
    case fb::OpCode::AvgPool2d: {
      std::string problem = window_problem(&step.kernel, step.stride, step.padding, step.dilation);
      if (!problem.empty()) format_error(invalid + problem, at);
      if (step.padding[0] > step.kernel[0] / 2 || step.padding[1] > step.kernel[1] / 2) {
        format_error(invalid + "padding " + tuple_str(step.padding) + " should be at most half of the kernel size " +
                         tuple_str(step.kernel), at);
      }
      if (step.op == fb::OpCode::AvgPool2d) {
        if (step.dilation[0] != 1 || step.dilation[1] != 1) {
          format_error(invalid + "avg_pool2d has no dilation, got " + tuple_str(step.dilation), at);
        }
        if (step.divisor_override < 0) {
          format_error(invalid + "divisor_override must be positive, got " + std::to_string(step.divisor_override),
                       at);
        }
      }
      break;
    }
    case fb::OpCode::AdaptiveAvgPool2d:
      if (step.dims.size() != 2) {
        format_error("ADAPTIVE_AVG_POOL2D output size must hold 2 dims, found " + std::to_string(step.dims.size()),
                     at);
      }
      for (int64_t d : step.dims) {
        if (d < 1 && d != -1) {
          format_error(invalid + "output size must be 2 positive sizes (or -1), got " + tuple_str(step.dims), at);
        }
      }
      break;
    case fb::OpCode::Transpose: {
      std::vector<int64_t> sorted = step.dims;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted[i] != static_cast<int64_t>(i)) {
          format_error(invalid + tuple_str(step.dims) + " is not a permutation of the axes 0.." +
                           std::to_string(static_cast<int64_t>(step.dims.size()) - 1), at);
        }
      }
      break;
    }
    case fb::OpCode::Clamp:
      if (!step.clamp_min && !step.clamp_max) format_error(invalid + "clamp needs at least one of min and max", at);
      break;
    case fb::OpCode::Mean:
    case fb::OpCode::Sum: {
      std::vector<int64_t> sorted = step.dims;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        format_error(invalid + "axes " + tuple_str(step.dims) + " repeat an axis", at);
      }
      break;
    }
    case fb::OpCode::Slice:
      if (step.slice_step < 1) format_error(invalid + "step must be positive, got " + std::to_string(step.slice_step), at);
      break;
    case fb::OpCode::Expand:
      if (std::any_of(step.dims.begin(), step.dims.end(), [](int64_t d) { return d < -1; })) {
        format_error(invalid + "shape " + tuple_str(step.dims) + " may hold -1 and otherwise sizes >= 0", at);
      }
      break;
    case fb::OpCode::Reshape: {
      int64_t unknown = std::count(step.dims.begin(), step.dims.end(), -1);
      bool negative = std::any_of(step.dims.begin(), step.dims.end(), [](int64_t d) { return d < -1; });
      if (unknown > 1 || negative) {
        format_error(invalid + "shape " + tuple_str(step.dims) + " may hold one -1 and otherwise sizes >= 0", at);
      }
      break;
    }
    default: break;
  }
}

c10::intrusive_ptr<MethodPlan> build_plan(const std::string& method, const at::Tensor& program_tensor,
                                          const c10::List<c10::IValue>& weights) {
  // A copy: the verifier and the readers need the bytes contiguous and the copy is aligned.
  at::Tensor bytes = program_tensor.contiguous();
  std::vector<uint8_t> buffer(bytes.data_ptr<uint8_t>(), bytes.data_ptr<uint8_t>() + bytes.numel());
  const std::string stored = "program of method '" + method + "'";
  flatbuffers::Verifier verifier(buffer.data(), buffer.size());
  if (buffer.size() < 8 || !flatbuffers::BufferHasIdentifier(buffer.data(), fb::ProgramIdentifier())) {
    format_error("not a liteexport demo program (no \"LXDP\" flatbuffer identifier; " +
                     std::to_string(buffer.size()) + " bytes)", stored);
  }
  if (!fb::VerifyProgramBuffer(verifier)) {
    format_error("the flatbuffer is corrupt (flatbuffers::Verifier rejected it)", stored);
  }
  const fb::Program* program = fb::GetProgram(buffer.data());

  if (program->format_version() != kProgramFormatVersion) {
    format_error("unsupported program format version " + std::to_string(program->format_version()) +
                     " (this runtime reads version " + std::to_string(kProgramFormatVersion) + ")",
                 stored);
  }
  if (program->method() == nullptr) format_error("Program.method is missing", stored);
  std::string program_method = program->method()->str();
  if (program_method != method) {
    format_error("program '" + program_method + "' is stored as method '" + method + "'",
                 "processed module of backend_with_compiler_demo");
  }
  const std::string where = "demo program of method '" + method + "'";

  auto plan = c10::make_intrusive<MethodPlan>();
  plan->method = method;
  plan->num_slots = program->num_slots();
  const int64_t num_slots = plan->num_slots;

  // inputs
  std::vector<const fb::ValueInfo*> infos;
  if (program->inputs() != nullptr) {
    for (const auto* info : *program->inputs()) infos.push_back(info);
  }
  if (static_cast<int64_t>(infos.size()) > num_slots) {
    format_error("the inputs need " + std::to_string(infos.size()) + " slots, num_slots is " +
                     std::to_string(num_slots), where);
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    if (infos[i]->dtype() != fb::DType::Float32) {
      format_error("input " + std::to_string(i) + " has dtype " + std::to_string(static_cast<int>(infos[i]->dtype())) +
                       ", not float32", where);
    }
    if (!infos[i]->has_shape() && has_field(infos[i], fb::ValueInfo::VT_SHAPE)) {
      format_error("shape given but has_shape is false", where + ", input " + std::to_string(i));
    }
  }
  std::vector<bool> defined(num_slots, false);
  for (size_t i = 0; i < infos.size(); ++i) defined[i] = true;

  // constants
  std::vector<bool> views_of_weights(num_slots, false);
  if (program->constants() != nullptr) {
    for (const auto* constant : *program->constants()) {
      int64_t slot = constant->slot();
      int64_t weight = constant->weight();
      std::string what = "constant for slot " + std::to_string(slot) + " (weight " + std::to_string(weight) + ")";
      if (slot >= num_slots) {
        format_error(what + ": slot is out of range (num_slots is " + std::to_string(num_slots) + ")", where);
      }
      if (defined[slot]) format_error(what + ": slot already holds an input or another constant", where);
      if (weight >= static_cast<int64_t>(weights.size())) {
        format_error(what + ": weight index is out of range (there are " + std::to_string(weights.size()) + ")",
                     where);
      }
      c10::IValue value = weights.get(weight);
      if (!value.isTensor() || value.toTensor().scalar_type() != at::kFloat) {
        std::string got = value.isTensor() ? dtype_str(value.toTensor().scalar_type()) : value.tagKind();
        format_error(what + ": weight must be a float32 tensor, got " + got, where);
      }
      plan->constants.emplace_back(slot, value.toTensor());
      defined[slot] = true;
      views_of_weights[slot] = true;
    }
  }

  // instructions
  std::map<int64_t, std::optional<size_t>> first_reader;  // slot -> first instruction reading it
  if (program->instructions() != nullptr) {
    size_t index = 0;
    for (const auto* inst : *program->instructions()) {
      std::vector<int64_t> reads = to_vector(inst->inputs());
      std::vector<int64_t> writes = to_vector(inst->outputs());
      uint16_t raw_op = static_cast<uint16_t>(inst->op());
      Step step;
      step.label = instruction_label(index, raw_op, reads, writes);
      step.debug_handle = inst->debug_handle();
      const std::string at = where + ", " + step.label;
      if (op_name(raw_op) == nullptr) {
        format_error("unknown opcode " + std::to_string(raw_op), where + ", instruction #" + std::to_string(index));
      }
      step.op = inst->op();
      OpSpec spec = op_spec(step.op);
      // attribute type
      fb::Attributes tag = inst->attributes_type();
      if (static_cast<uint8_t>(tag) > static_cast<uint8_t>(fb::Attributes::MAX)) {
        format_error("unknown attribute type " + std::to_string(static_cast<int>(tag)), at);
      }
      if (tag == fb::Attributes::NONE && inst->attributes() != nullptr) {
        format_error("attributes given without a type", at);
      }
      if (tag != fb::Attributes::NONE && inst->attributes() == nullptr) {
        format_error(std::string("attributes of type ") + attrs_name(tag) + " are missing", at);
      }
      if (!(tag == spec.attrs || (tag == fb::Attributes::NONE && spec.attrs_optional))) {
        std::string wanted = spec.attrs == fb::Attributes::NONE ? "no attributes" : attrs_name(spec.attrs);
        format_error(std::string(op_name(raw_op)) + " takes " + wanted + ", found " + attrs_name(tag), at);
      }
      // arity
      int64_t n_inputs = static_cast<int64_t>(reads.size());
      if (n_inputs < spec.min_inputs || (spec.max_inputs >= 0 && n_inputs > spec.max_inputs)) {
        auto count = [](int n) { return std::to_string(n) + (n == 1 ? " input" : " inputs"); };
        std::string expected = spec.max_inputs < 0 ? "at least " + count(spec.min_inputs)
                               : spec.min_inputs == spec.max_inputs
                                   ? count(spec.min_inputs)
                                   : std::to_string(spec.min_inputs) + " to " + std::to_string(spec.max_inputs) +
                                         " inputs";
        format_error("takes " + expected + ", got " + std::to_string(n_inputs), at);
      }
      if (writes.size() != 1) format_error("writes 1 output, got " + std::to_string(writes.size()), at);
      bind_attributes(inst, step, reads.size(), at);
      // slots
      for (const auto* slots : {&reads, &writes}) {
        for (int64_t slot : *slots) {
          if (slot >= num_slots) {
            format_error("slot " + std::to_string(slot) + " is out of range (num_slots is " +
                             std::to_string(num_slots) + ")", at);
          }
        }
      }
      for (int64_t slot : reads) {
        if (!defined[slot]) format_error("reads slot " + std::to_string(slot) + " before anything writes it", at);
        first_reader.emplace(slot, index);
      }
      int64_t output = writes[0];
      defined[output] = true;
      first_reader.emplace(output, std::nullopt);  // later reads of a rewritten input slot see another value
      bool reads_weight_view =
          std::any_of(reads.begin(), reads.end(), [&](int64_t slot) { return views_of_weights[slot]; });
      views_of_weights[output] = spec.may_alias_input && reads_weight_view;
      step.reads = std::move(reads);
      step.write = output;
      plan->steps.push_back(std::move(step));
      ++index;
    }
  }

  // outputs
  std::vector<int64_t> outputs = to_vector(program->outputs());
  std::vector<int64_t> output_handles = to_vector(program->output_debug_handles());
  if (outputs.size() != output_handles.size()) {
    format_error(std::to_string(outputs.size()) + " outputs but " + std::to_string(output_handles.size()) +
                     " output debug handles", where);
  }
  for (size_t position = 0; position < outputs.size(); ++position) {
    int64_t slot = outputs[position];
    if (slot >= num_slots) {
      format_error("output " + std::to_string(position) + ": slot " + std::to_string(slot) + " is out of range", where);
    }
    if (!defined[slot]) {
      format_error("output " + std::to_string(position) + ": slot " + std::to_string(slot) + " is never written",
                   where);
    }
    plan->outputs.emplace_back(slot, views_of_weights[slot]);
  }

  // input checks, blaming the first instruction reading each input
  for (size_t i = 0; i < infos.size(); ++i) {
    InputCheck check;
    check.has_shape = infos[i]->has_shape();
    if (check.has_shape) check.shape = to_vector(infos[i]->shape());
    auto reader = first_reader.find(static_cast<int64_t>(i));
    if (reader == first_reader.end() || !reader->second.has_value()) {
      check.blame = "method '" + method + "'";
      check.debug_handle = -1;
    } else {
      const Step& step = plan->steps[*reader->second];
      check.blame = step.label;
      check.debug_handle = step.debug_handle;
    }
    plan->inputs.push_back(std::move(check));
  }
  return plan;
}

}  // namespace
