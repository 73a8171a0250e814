// A compiled program as a MethodPlan: decoded and checked by the shared decoder
// (native_format/decoder/demo_program.h, the checks of runtime_py's program_codec.py and plan.py),
// with its weights bound (part of backend.cpp's one translation unit; see there).
#pragma once

#include "demo_input_reach.h"
#include "demo_program.h"

#include <map>
#include <memory>
#include <mutex>

namespace {

namespace dp = liteexport::demo_program;
using liteexport::demo_ops::Op;

constexpr const char* kBackendName = "backend_with_compiler_demo";
constexpr const char* kPrefix = "backend_with_compiler_demo (liteexport): ";
constexpr const char* kExpected =
    "expected the processed module liteexport writes: Dict[str, Any] "
    "{\"programs\": Dict[str, Tensor(uint8)], \"weights\": List[Tensor(float32)]}";

std::string shape_str(at::IntArrayRef sizes) { return dp::tuple_text(sizes); }

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

// A structured error (native_format/decoder/demo_error.h) in the text torch reports: "[CODE] text";
// liteexport.torch_backend.demo_error_of reads the code and fields back from it.
std::string coded_text(const liteexport::demo_errors::ProgramError& e) {
  return std::string("[") + liteexport::demo_errors::code_name(e.code) + "] " + e.what();
}

[[noreturn]] void throw_program_error(const liteexport::demo_errors::ProgramError& e) {
  TORCH_CHECK(false, kPrefix, coded_text(e));
}

// A kernel's own check failed: caught by the executor and re-thrown with the instruction's handle.
[[noreturn]] void kernel_error(const std::string& message) { throw std::invalid_argument(message); }

// The tensors a loaded module keeps across calls (a KV cache): one per compile() - so per loaded
// module - shared by all of its methods' plans, by name (runtime_py's ModuleState).
struct ModuleState {
  struct Entry {
    std::string method;  // the first method declaring it
    dp::StateDecl decl;
    at::Tensor tensor;
    at::Tensor initial;  // undefined: zeros
  };
  std::map<std::string, Entry> entries;
  std::mutex mutex;  // one call at a time writes a module's state

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& [name, entry] : entries) {
      if (entry.initial.defined()) {
        entry.tensor.copy_(entry.initial);
      } else {
        entry.tensor.zero_();
      }
    }
  }
};

// "float32 1x8x4 starting as zeros": how STATE_MISMATCH names a declaration (state.py _describe)
std::string describe_state(const dp::StateDecl& decl) {
  std::string shape;
  for (int64_t size : decl.shape) shape += (shape.empty() ? "" : "x") + std::to_string(size);
  return std::string(liteexport::demo_ops::dtype_name(decl.dtype)) + " " + (shape.empty() ? "a scalar" : shape) +
         " starting as " + (decl.initial < 0 ? "zeros" : "weight " + std::to_string(decl.initial));
}

struct Step {
  Op op;
  dp::Attrs attrs;
  std::vector<uint32_t> reads;
  uint32_t write = 0;
  int64_t debug_handle = -1;
  std::string label;
  // how torch.profiler names the step: "CONV2D (liteexport forward#3, handle 12)"
  // (liteexport/profile.py reads it back for `liteexport profile --engine torch`)
  std::string profile_name;
};

struct MethodPlan : torch::CustomClassHolder {
  std::string method;
  int64_t num_slots = 0;
  std::vector<dp::InputCheck> inputs;
  dp::NamedDims named_dims;  // --dim S=1..128, checked on every call
  std::vector<std::pair<uint32_t, at::Tensor>> constants;  // (slot, weight)
  std::vector<Step> steps;
  std::vector<std::pair<uint32_t, bool>> outputs;  // (slot, clone it: it may view a weight or a state)
  std::shared_ptr<ModuleState> module_state;          // null: the program has no state
  std::vector<std::pair<uint32_t, at::Tensor>> states;  // (slot, the module's tensor)
  std::map<uint32_t, std::string> state_names;          // by slot: how STATE_POSITION names it
};

// A weight as the kernels see it: float16 and qint8 weights widened to float32.
at::Tensor widened(at::Tensor tensor) {
  if (tensor.is_quantized()) tensor = tensor.dequantize();
  return tensor.scalar_type() == at::kHalf ? tensor.to(at::kFloat) : tensor;
}

// The states `program` declares bound to `state`'s tensors (allocated by the first method that
// declares each), checked against the weights and the other methods' declarations.
void bind_states(MethodPlan& plan, const dp::Program& program, const c10::List<c10::IValue>& weights,
                 const std::shared_ptr<ModuleState>& state) {
  using liteexport::demo_errors::Code;
  const std::string where = "demo program of method '" + plan.method + "'";
  for (const auto& decl : program.states) {
    at::Tensor initial;
    if (decl.initial >= 0) {
      initial = widened(weights.get(static_cast<size_t>(decl.initial)).toTensor());
      const std::string problem = dp::state_initial_problem(decl, dtype_str(initial.scalar_type()), initial.sizes().vec());
      if (!problem.empty())
        throw_program_error(liteexport::demo_errors::ProgramError(
            Code::STATE_DECLARATION, {{"name", decl.name}, {"problem", problem}}, where));
    }
    auto found = state->entries.find(decl.name);
    if (found != state->entries.end()) {
      const std::string mine = describe_state(decl), theirs = describe_state(found->second.decl);
      if (mine != theirs)
        throw_program_error(liteexport::demo_errors::ProgramError(
            Code::STATE_MISMATCH, {{"name", decl.name}, {"got", mine}, {"method", plan.method}, {"expected", theirs},
                                   {"other", found->second.method}}, where));
    } else {
      at::Tensor tensor = at::zeros(decl.shape, at::TensorOptions().dtype(static_cast<at::ScalarType>(decl.dtype)));
      if (initial.defined()) tensor.copy_(initial);
      found = state->entries.emplace(decl.name, ModuleState::Entry{plan.method, decl, tensor, initial}).first;
    }
    plan.states.emplace_back(decl.slot, found->second.tensor);
    plan.state_names[decl.slot] = decl.name;
  }
  if (!program.states.empty()) plan.module_state = state;
}

c10::intrusive_ptr<MethodPlan> build_plan(const std::string& method, const at::Tensor& program_tensor,
                                          const c10::List<c10::IValue>& weights,
                                          const std::shared_ptr<ModuleState>& state) {
  at::Tensor bytes = program_tensor.contiguous();
  dp::Program program;
  try {
    program = dp::decode_program(bytes.data_ptr<uint8_t>(), static_cast<size_t>(bytes.numel()), weights.size(),
                                 [&weights](size_t i) -> std::string {
                                   c10::IValue value = weights.get(i);
                                   if (!value.isTensor()) return value.tagKind();
                                   // "" for float32, the dtype's name otherwise: the decoder
                                   // accepts the compiled ones ("int64", "bool") where slots hold them
                                   // (float16 and qint8: float32 weights stored narrow, --weights
                                   // fp16 and --quantize dynamic-int8)
                                   auto type = value.toTensor().scalar_type();
                                   return type == at::kFloat || type == at::kHalf || type == at::kQInt8
                                              ? ""
                                              : dtype_str(type);
                                 },
                                 "program of method '" + method + "'");
    if (program.method != method)
      liteexport::demo_errors::fail(liteexport::demo_errors::Code::METHOD_MISMATCH,
                                    {{"program", program.method}, {"method", method}},
                                    "processed module of backend_with_compiler_demo");
  } catch (const liteexport::demo_errors::ProgramError& e) {
    throw_program_error(e);
  }
  auto plan = c10::make_intrusive<MethodPlan>();
  plan->method = method;
  plan->num_slots = program.num_slots;
  plan->inputs = std::move(program.inputs);
  plan->named_dims = std::move(program.named_dims);
  // float16 and qint8 weights are widened once, here: every kernel computes in float32
  for (const auto& [slot, weight] : program.constants) plan->constants.emplace_back(slot, widened(weights.get(weight).toTensor()));
  bind_states(*plan, program, weights, state);
  for (auto& ins : program.instructions) {
    std::string profile_name = std::string(liteexport::demo_ops::kOps[static_cast<size_t>(ins.op)].name) +
                               " (liteexport " + method + "#" + std::to_string(ins.index) + ", handle " +
                               std::to_string(ins.debug_handle) + ")";
    plan->steps.push_back({ins.op, std::move(ins.attrs), std::move(ins.reads), ins.write, ins.debug_handle,
                           std::move(ins.label), std::move(profile_name)});
  }
  plan->outputs = std::move(program.outputs);
  return plan;
}

}  // namespace
