#include "backend.h"

#include <algorithm>
#include <set>

#include "../errors.h"
#include "plan.h"

namespace liteexport::demo_backend {

namespace {

const char* const kWhere = "processed module of backend_with_compiler_demo";

// The opaque handle compile returns per method.
class PlanHandle : public CustomObject {
 public:
  explicit PlanHandle(std::shared_ptr<const MethodPlan> plan) : plan(std::move(plan)) {}
  std::string type_name() const override { return "MethodPlan"; }
  std::shared_ptr<const MethodPlan> plan;
};

const Dict* as_dict(const IValue& v) {
  auto d = v.get_if<std::shared_ptr<Dict>>();
  return d ? d->get() : nullptr;
}

const std::vector<IValue>* as_sequence(const IValue& v) {
  if (auto l = v.get_if<std::shared_ptr<List>>()) return l->get();
  if (auto t = v.get_if<std::shared_ptr<Tuple>>()) return t->get();
  return nullptr;
}

const IValue* find(const Dict& d, const std::string& key) {
  for (const auto& [k, v] : d)
    if (k.key_equals(IValue(key))) return &v;
  return nullptr;
}

IValue compile(const IValue& processed, const IValue& spec) {
  const Dict* top = as_dict(processed);
  std::vector<std::string> keys;
  if (top != nullptr)
    for (const auto& kv : *top) keys.push_back(kv.first.str());
  std::sort(keys.begin(), keys.end());
  if (top == nullptr || keys != std::vector<std::string>{"programs", "weights"}) {
    std::string got = top == nullptr ? processed.kind() : "[";
    if (top != nullptr) {
      for (size_t i = 0; i < keys.size(); ++i) got += (i ? ", '" : "'") + keys[i] + "'";
      got += "]";
    }
    throw_coded(ErrorKind::Format, demo_errors::ProgramError(demo_errors::Code::PROCESSED_MODULE, {{"got", got}}, kWhere));
  }
  const Dict* programs = as_dict(*find(*top, "programs"));
  const std::vector<IValue>* weights = as_sequence(*find(*top, "weights"));
  if (programs == nullptr || weights == nullptr)
    throw_coded(ErrorKind::Format, demo_errors::ProgramError(demo_errors::Code::PROCESSED_TYPES, {}, kWhere));
  std::set<std::string> missing;
  if (const Dict* s = as_dict(spec))
    for (const auto& kv : *s)
      if (find(*programs, kv.first.str()) == nullptr) missing.insert(kv.first.str());
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    throw_coded(ErrorKind::Format, demo_errors::ProgramError(demo_errors::Code::MISSING_PROGRAMS, {{"methods", names}}, kWhere));
  }
  auto handles = std::make_shared<Dict>();
  // one per loaded module: its methods share it, another load has its own (state.h)
  std::shared_ptr<ModuleState> state = new_module_state();
  for (const auto& [name, encoded] : *programs) {
    const ByteTensor* bytes = encoded.get_if<ByteTensor>();
    if (bytes == nullptr) throw_format("program for method '" + name.str() + "' is not a uint8 tensor", kWhere);
    auto plan = build_plan(*bytes, *weights, state);
    if (plan->method != name.str())
      throw_coded(ErrorKind::Format, demo_errors::ProgramError(demo_errors::Code::METHOD_MISMATCH,
                                                               {{"program", plan->method}, {"method", name.str()}}, kWhere));
    handles->emplace_back(name, std::shared_ptr<CustomObject>(std::make_shared<PlanHandle>(plan)));
  }
  return handles;
}

IValue execute(const IValue& handle, const IValue& inputs) {
  auto obj = handle.get_if<std::shared_ptr<CustomObject>>();
  auto plan = obj ? dynamic_cast<PlanHandle*>(obj->get()) : nullptr;
  if (plan == nullptr) throw_execution("demo backend handle must be a MethodPlan, got " + handle.kind());
  const std::vector<IValue>* args = as_sequence(inputs);
  if (args == nullptr) throw_execution("demo backend inputs must be a list, got " + inputs.kind());
  auto out = std::make_shared<List>();
  for (Array& a : run_plan(*plan->plan, *args)) out->emplace_back(std::move(a));
  return out;
}

class DemoBackend : public CustomObject {
 public:
  std::string type_name() const override { return std::string("__torch__.torch.classes.__backends__.") + kBackendName; }
  IValue call(const std::string& method, std::vector<IValue>& args) override {
    auto need = [&](size_t n) {
      if (args.size() != n)
        throw_execution("DemoBackend." + method + "() takes " + std::to_string(n) + " argument(s), got " +
                        std::to_string(args.size()));
    };
    if (method == "__init__") return IValue();
    if (method == "is_available") return true;  // needs nothing but the CPU
    if (method == "compile") {
      need(2);
      return compile(args[0], args[1]);
    }
    if (method == "execute") {
      need(2);
      return execute(args[0], args[1]);
    }
    throw_execution("DemoBackend has no method " + method);
  }
};

}  // namespace

std::shared_ptr<CustomObject> make_backend() { return std::make_shared<DemoBackend>(); }

}  // namespace liteexport::demo_backend
