// liteexport's torch-side backend `backend_with_compiler_demo`.
//
// Registered with torch so that torch's lite interpreter can load and run liteexport bundles:
// loading runs the LoweredModule's __setstate__, which creates this backend and calls
// compile(processed, method_compile_spec). The processed module liteexport writes is
//   {"programs": Dict[str, Tensor(uint8)]  (method -> flatbuffer of schema/demo_program.fbs),
//    "weights": List[Tensor(float32)]}
// compile verifies and decodes every program with the decoder shared with the Android core
// (native_format/decoder/demo_program.h: the checks of runtime_py's program_codec.py and plan.py) into
// a MethodPlan; execute runs a plan with ATen ops, with the semantics of runtime_py's numpy
// kernels (runtime_py/backends/demo/*.py, the reference). A failing instruction throws
// c10::BackendRuntimeException carrying its debug handle. Errors of programs and instructions
// are coded as "[CODE] text" (schema/demo_errors.toml; liteexport.torch_backend.demo_error_of).
#include <torch/csrc/jit/backends/backend.h>
#include <torch/csrc/jit/backends/backend_exception.h>
#include <torch/csrc/jit/backends/backend_preprocess.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/custom_class.h>
#include <torch/script.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "program_plan.h"
#include "aten_kernels.h"

namespace {

// ---------------------------------------------------------------------------------------------
// The backend

constexpr const char* kTracePrefix = "liteexport.trace.";

c10::IValue lookup(const c10::impl::GenericDict& dict, const std::string& key) {
  auto it = dict.find(c10::IValue(key));
  TORCH_CHECK(it != dict.end(), kPrefix, "the processed module has no \"", key, "\" entry; ", kExpected,
              ". Was this bundle written by liteexport?");
  return it->value();
}

class LiteExportBackend : public torch::jit::PyTorchBackendInterface {
 public:
  bool is_available() override { return true; }

  c10::impl::GenericDict compile(c10::IValue processed, c10::impl::GenericDict method_compile_spec) override {
    TORCH_CHECK(processed.isGenericDict(), kPrefix, "the processed module is a ", processed.tagKind(),
                ", not a dict; ", kExpected);
    auto top = processed.toGenericDict();
    auto programs_value = lookup(top, "programs");
    auto weights_value = lookup(top, "weights");
    TORCH_CHECK(programs_value.isGenericDict(), kPrefix, "processed[\"programs\"] is a ", programs_value.tagKind(),
                ", not a Dict[str, Tensor]; ", kExpected);
    TORCH_CHECK(weights_value.isList(), kPrefix, "processed[\"weights\"] is a ", weights_value.tagKind(),
                ", not a List[Tensor]; ", kExpected);
    auto programs = programs_value.toGenericDict();
    auto weights = weights_value.toList();

    for (size_t i = 0; i < weights.size(); ++i) {
      c10::IValue w = weights.get(i);
      TORCH_CHECK(w.isTensor(), kPrefix, "processed[\"weights\"][", i, "] is a ", w.tagKind(),
                  ", not a Tensor");
      // the compiled dtypes (schema/demo_ops.toml [dtypes]): float32 weights, int64/int32 index
      // buffers, bool masks; which one each slot needs, the program decoder checks. float16, qint8:
      // float32 weights stored narrow (--weights fp16, --quantize dynamic-int8), widened when the
      // plan is built
      const auto type = w.toTensor().scalar_type();
      TORCH_CHECK(type == at::kFloat || type == at::kHalf || type == at::kQInt8 || type == at::kLong ||
                      type == at::kInt || type == at::kBool,
                  kPrefix, "processed[\"weights\"][", i,
                  "] must be float32 (or float16, qint8), int64, int32 or bool, got ", type);
    }

    for (const auto& entry : programs) {
      TORCH_CHECK(entry.key().isString(), kPrefix, "processed[\"programs\"] has a non-string key (",
                  entry.key().tagKind(), "); ", kExpected);
      const auto& method = entry.key().toStringRef();
      TORCH_CHECK(entry.value().isTensor(), kPrefix, "the program of method '", method, "' is a ",
                  entry.value().tagKind(), ", not a uint8 Tensor");
      const auto& program = entry.value().toTensor();
      TORCH_CHECK(program.scalar_type() == at::kByte && program.dim() == 1, kPrefix, "the program of method '",
                  method, "' must be a 1-D uint8 tensor holding a flatbuffer-encoded program, got ",
                  program.scalar_type(), " of shape ", program.sizes());
    }
    for (const auto& entry : method_compile_spec) {
      TORCH_CHECK(entry.key().isString(), kPrefix, "method_compile_spec has a non-string key (",
                  entry.key().tagKind(), ")");
      TORCH_CHECK(programs.contains(entry.key()), kPrefix, "method '", entry.key().toStringRef(),
                  "' is in method_compile_spec but processed[\"programs\"] has no program for it");
    }

    for (const auto& entry : method_compile_spec) read_traces(entry.value());

    // every program is verified and planned, as runtime_py does; torch gets the spec's handles
    std::map<std::string, c10::intrusive_ptr<MethodPlan>> plans;
    state_ = std::make_shared<ModuleState>();  // one per loaded module: its methods share it
    for (const auto& entry : programs) {
      const auto& method = entry.key().toStringRef();
      plans[method] = build_plan(method, entry.value().toTensor(), weights, state_);
    }
    auto handles = c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get());
    for (const auto& entry : method_compile_spec) {
      handles.insert(entry.key(), c10::IValue(plans.at(entry.key().toStringRef())));
    }
    return handles;
  }

  c10::impl::GenericList execute(c10::IValue handle, c10::impl::GenericList inputs) override {
    TORCH_CHECK(handle.isCustomClass(), kPrefix, "the method handle is a ", handle.tagKind(),
                ", not the plan compile returned");
    auto plan = handle.toCustomClass<MethodPlan>();
    try {
      return run_plan(*plan, inputs);
    } catch (c10::BackendRuntimeException& e) {
      // torch's flatbuffer loader reads no debug info, so torch's own context for this error
      // names no module ("Debug info for handle(s): ... was not found"): add the node's text
      auto trace = traces_.find(e.getDebugHandles().front());
      if (trace != traces_.end()) e.add_context(trace->second);
      throw;
    }
  }

 private:
  // Spec options "liteexport.trace.<handle>" (written by liteexport.mixed_debug into a mixed
  // bundle's compile spec): the failing node's module hierarchy and traceback, torch's text.
  // Backends ignore options they do not know, as torch's demo does; so does this one.
  void read_traces(const c10::IValue& method_spec) {
    if (!method_spec.isGenericDict()) return;
    const std::string prefix = kTracePrefix;
    for (const auto& option : method_spec.toGenericDict()) {
      if (!option.key().isString() || !option.value().isString()) continue;
      const auto& key = option.key().toStringRef();
      if (key.rfind(prefix, 0) != 0) continue;
      try {
        size_t used = 0;
        int64_t handle = std::stoll(key.substr(prefix.size()), &used);
        if (used == key.size() - prefix.size()) traces_[handle] = option.value().toStringRef();
      } catch (const std::exception&) {  // not a handle: an option of someone else's
      }
    }
  }

  std::map<int64_t, std::string> traces_;
  std::shared_ptr<ModuleState> state_;
};

// ---------------------------------------------------------------------------------------------
// The preprocess: torch's to_backend (torch._C._jit_to_backend, codegen_backend_module) calls it
// with the module to lower. liteexport's compiler is Python (liteexport.torch_backend.preprocess),
// registered here when the extension is loaded (set_preprocess); this function hands it the
// module, the compile spec and the debug handles torch generated for every node of each
// method's inlined graph, and turns its result into the processed module compile() reads.

// Leaked on purpose: a py::object must not be destroyed after the interpreter is finalized.
py::object* python_preprocess = nullptr;

// "top(C).B0(B).A0(A)": the module hierarchy of an inlined node, as liteexport's compiler
// writes it (calls of free functions and of the module's own methods add no level).
std::string node_hierarchy(const torch::jit::Node* node, const std::string& top) {
  std::string out = "top(" + top + ")";
  auto stack = node->callstack();
  if (!stack) return out;
  for (const auto& entry : (*stack)->vec()) {
    const auto& info = std::get<2>(entry);
    if (!info || info->instance_name() == "SELF" || !info->class_type()) continue;
    out += "." + info->instance_name() + "(" + info->class_type()->name()->name() + ")";
  }
  return out;
}

c10::IValue preprocess(const torch::jit::Module& mod, const c10::Dict<c10::IValue, c10::IValue>& method_compile_spec,
                       const torch::jit::BackendDebugHandleGenerator& generate_debug_handles) {
  TORCH_CHECK(python_preprocess != nullptr, kPrefix,
              "liteexport's compiler is not registered; load the backend with "
              "liteexport.torch_backend.load_torch_backend()");
  const std::string top = mod.type()->name()->name();
  // per method: (debug handle, node kind, module hierarchy, source range) of every node
  std::vector<std::tuple<std::string, std::vector<std::tuple<int64_t, std::string, std::string, std::string>>>>
      nodes_by_method;
  for (const auto& entry : method_compile_spec) {
    TORCH_CHECK(entry.key().isString(), kPrefix, "method_compile_spec has a non-string key (",
                entry.key().tagKind(), ")");
    const auto& name = entry.key().toStringRef();
    auto method = mod.find_method(name);
    TORCH_CHECK(method.has_value(), "method_compile_spec names '", name, "', which the module (", top,
                ") does not have");
    auto graph = torch::jit::toGraphFunction(method->function()).graph()->copy();
    torch::jit::Inline(*graph);
    std::vector<std::tuple<int64_t, std::string, std::string, std::string>> records;
    for (const auto& [node, handle] : generate_debug_handles(graph)) {
      records.emplace_back(handle, node->kind().toQualString(), node_hierarchy(node, top),
                           node->sourceRange().str());
    }
    std::sort(records.begin(), records.end());
    nodes_by_method.emplace_back(name, std::move(records));
  }

  py::gil_scoped_acquire gil;
  py::object result;
  try {
    result = (*python_preprocess)(py::cast(mod), torch::jit::toPyObject(method_compile_spec), py::cast(nodes_by_method));
  } catch (py::error_already_set& e) {
    // liteexport's own message (an unsupported node, in torch's demo wording), raised as torch's
    // RuntimeError the way torch's demo preprocess raises it
    std::string message = py::str(e.value());
    TORCH_CHECK(false, message);
  }
  auto parts = result.cast<py::tuple>();
  auto programs = c10::impl::GenericDict(c10::StringType::get(), c10::TensorType::get());
  for (const auto& item : parts[0].cast<py::dict>()) {
    programs.insert(item.first.cast<std::string>(), item.second.cast<at::Tensor>());
  }
  auto weights = c10::impl::GenericList(c10::TensorType::get());
  for (const auto& weight : parts[1].cast<py::list>()) weights.push_back(weight.cast<at::Tensor>());
  auto processed = c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get());
  processed.insert("programs", programs);
  processed.insert("weights", weights);
  return processed;
}

static auto plan_class = torch::class_<MethodPlan>("liteexport", "DemoMethodPlan");
static auto registration = torch::jit::backend<LiteExportBackend>(kBackendName);
static auto preprocess_registration = torch::jit::backend_preprocess_register(kBackendName, preprocess);

}  // namespace

std::string registered_backend() { return kBackendName; }

// Registers liteexport's compiler (a Python callable) as the preprocess torch's to_backend runs.
void set_preprocess(py::object compiler) {
  if (python_preprocess == nullptr) {
    python_preprocess = new py::object(std::move(compiler));
  } else {
    *python_preprocess = std::move(compiler);
  }
}
