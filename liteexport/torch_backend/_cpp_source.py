"""C++ source of the torch-side backend (kept in Python so it ships with the package)."""

CPP_SOURCE = r"""
// liteexport's torch-side backend `backend_with_compiler_demo`.
//
// Registered with torch so that torch can load liteexport bundles: loading runs the
// LoweredModule's __setstate__, which creates this backend and calls
// compile(processed, method_compile_spec). The processed module liteexport writes is
//   {"programs": Dict[str, Tensor(uint8)]  (method -> flatbuffer-encoded compiled program),
//    "weights": List[Tensor(float32)]}
// compile validates it and returns, per method of the spec, the handle
// Tuple(program tensor, weights list). execute is not implemented yet (issue 3).
#include <torch/csrc/jit/backends/backend.h>
#include <torch/script.h>

#include <string>

namespace {

constexpr const char* kBackendName = "backend_with_compiler_demo";
constexpr const char* kExpected =
    "expected the processed module liteexport writes: Dict[str, Any] "
    "{\"programs\": Dict[str, Tensor(uint8)], \"weights\": List[Tensor(float32)]}";

c10::IValue lookup(const c10::impl::GenericDict& dict, const std::string& key) {
  auto it = dict.find(c10::IValue(key));
  TORCH_CHECK(it != dict.end(), kBackendName, " (liteexport): the processed module has no \"", key,
              "\" entry; ", kExpected, ". Was this bundle written by liteexport?");
  return it->value();
}

class LiteExportBackend : public torch::jit::PyTorchBackendInterface {
 public:
  bool is_available() override { return true; }

  c10::impl::GenericDict compile(c10::IValue processed,
                                 c10::impl::GenericDict method_compile_spec) override {
    TORCH_CHECK(processed.isGenericDict(), kBackendName,
                " (liteexport): the processed module is a ", processed.tagKind(),
                ", not a dict; ", kExpected);
    auto top = processed.toGenericDict();
    auto programs_value = lookup(top, "programs");
    auto weights_value = lookup(top, "weights");
    TORCH_CHECK(programs_value.isGenericDict(), kBackendName,
                " (liteexport): processed[\"programs\"] is a ", programs_value.tagKind(),
                ", not a Dict[str, Tensor]; ", kExpected);
    TORCH_CHECK(weights_value.isList(), kBackendName, " (liteexport): processed[\"weights\"] is a ",
                weights_value.tagKind(), ", not a List[Tensor]; ", kExpected);
    auto programs = programs_value.toGenericDict();
    auto weights = weights_value.toList();

    for (const auto& entry : programs) {
      TORCH_CHECK(entry.key().isString(), kBackendName,
                  " (liteexport): processed[\"programs\"] has a non-string key (", entry.key().tagKind(),
                  "); ", kExpected);
      const auto& method = entry.key().toStringRef();
      TORCH_CHECK(entry.value().isTensor(), kBackendName, " (liteexport): the program of method '",
                  method, "' is a ", entry.value().tagKind(), ", not a uint8 Tensor");
      const auto& program = entry.value().toTensor();
      TORCH_CHECK(program.scalar_type() == at::kByte && program.dim() == 1, kBackendName,
                  " (liteexport): the program of method '", method,
                  "' must be a 1-D uint8 tensor holding a flatbuffer-encoded program, got ",
                  program.scalar_type(), " of shape ", program.sizes());
    }
    for (size_t i = 0; i < weights.size(); ++i) {
      c10::IValue w = weights.get(i);
      TORCH_CHECK(w.isTensor(), kBackendName, " (liteexport): processed[\"weights\"][", i, "] is a ",
                  w.tagKind(), ", not a float32 Tensor");
      TORCH_CHECK(w.toTensor().scalar_type() == at::kFloat, kBackendName,
                  " (liteexport): processed[\"weights\"][", i, "] must be float32, got ",
                  w.toTensor().scalar_type());
    }

    auto handles = c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get());
    for (const auto& entry : method_compile_spec) {
      TORCH_CHECK(entry.key().isString(), kBackendName,
                  " (liteexport): method_compile_spec has a non-string key (", entry.key().tagKind(), ")");
      const auto& method = entry.key().toStringRef();
      auto it = programs.find(entry.key());
      TORCH_CHECK(it != programs.end(), kBackendName, " (liteexport): method '", method,
                  "' is in method_compile_spec but processed[\"programs\"] has no program for it");
      handles.insert(entry.key(), c10::ivalue::Tuple::create(it->value(), weights_value));
    }
    return handles;
  }

  c10::impl::GenericList execute(c10::IValue handle, c10::impl::GenericList inputs) override {
    TORCH_CHECK(false, kBackendName,
                " (liteexport): execution of liteexport programs inside torch is not implemented "
                "yet; use runtime_py (liteexport run) to run this bundle. Loading it with torch "
                "(torch.jit.mobile._load_for_lite_interpreter) works; only calling its methods does not.");
  }
};

static auto registration = torch::jit::backend<LiteExportBackend>(kBackendName);

}  // namespace

std::string registered_backend() { return kBackendName; }
"""
