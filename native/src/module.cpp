// liteexport::Module: load (map, verify, decode the debug table, run __setstate__) and
// run_method (input checks, the wrapper bytecode, errors mapped through the debug table),
// following runtime_py/module.py.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>

#include "buffer_pool.h"
#include "bundle_verify.h"
#include "debug_table.h"
#include "demo/state.h"
#include "demo/xnn.h"
#include "delegate_trace.h"
#include "errors.h"
#include "liteexport/runtime.h"
#include "narrow_weights.h"
#include "loader.h"
#include "mapped_file.h"
#include "run_limits.h"
#include "step_profiler.h"

namespace liteexport {

namespace {

// Functions of the root type that are plumbing, not methods a user calls.
bool hidden(const std::string& name) { return name == "__setstate__" || name == "__getstate__"; }

// Extra files liteexport writes itself (runtime_py's and liteexport.pipeline's RESERVED_PREFIX):
// not the user's, so not listed by extra_file_names.
bool reserved_extra_file(const std::string& name) { return name.rfind("liteexport/", 0) == 0; }

// How many Tensors a method returning a tuple returns (-1: one, not a tuple), counted in its
// return type's text as runtime_py's Module._wrapper_signature does.
int tuple_outputs(const ser::Schema* schema) {
  const auto* returns = schema->returns();
  const ser::Arg* first = returns != nullptr && returns->size() > 0 ? returns->Get(0) : nullptr;
  const std::string type = first == nullptr ? "Tensor" : first->type() ? first->type()->str() : "";
  if (type.rfind("Tuple[", 0) != 0) return -1;
  int count = 0;
  for (size_t at = type.find("Tensor"); at != std::string::npos; at = type.find("Tensor", at + 6)) ++count;
  return count;
}

// The keys of a wrapper method returning Dict[str, Tensor] (liteexport's dict outputs: the
// segmentation models' {"out": ...}): the string constants after the wrapper's first six, as
// runtime_py's lowered_methods._signature reads them; empty for any other method.
std::vector<std::string> dict_output_keys(const ser::Function* f, const ser::Module* m) {
  const auto* returns = f->schema() != nullptr ? f->schema()->returns() : nullptr;
  const ser::Arg* first = returns != nullptr && returns->size() == 1 ? returns->Get(0) : nullptr;
  if (first == nullptr || first->type() == nullptr || first->type()->str() != "Dict[str, Tensor]") return {};
  std::vector<std::string> keys;
  constexpr uint32_t kWrapperConstants = 6;  // bundle_format/lowered_bytecode.py method_function
  const auto* constants = f->constants();
  for (uint32_t i = kWrapperConstants; constants != nullptr && i < constants->size(); ++i) {
    const uint32_t index = constants->Get(i);
    const ser::IValue* v = index < m->ivalues()->size() ? m->ivalues()->Get(index) : nullptr;
    if (v == nullptr || v->val_type() != ser::IValueUnion::String || v->val_as_String()->data() == nullptr) return {};
    keys.push_back(v->val_as_String()->data()->str());
  }
  return keys;
}

// A caller's tensor as the core's array: one copy, with the room from_vector keeps past the end.
// Bools become 0 or 1 (any nonzero byte is true), the two values the kernels expect.
Array to_array(const Tensor& t) {
  return visit_dtype(t.dtype, [&t](auto zero) {
    using T = decltype(zero);
    std::vector<T> values;
    values.reserve(t.size() + Array::kReadSlack);
    const T* p = static_cast<const T*>(t.bytes());
    values.assign(p, p + t.size());
    if (t.dtype == DType::Bool)
      for (T& v : values) v = v != 0;
    return Array::from_vector(t.shape, std::move(values));
  });
}

Tensor to_tensor(const Array& a) {
  Tensor t;
  t.shape = a.shape;
  t.dtype = a.dtype;
  const auto n = static_cast<size_t>(a.size());
  switch (a.dtype) {
    case DType::Int64: t.int64_data.assign(a.data_as<int64_t>(), a.data_as<int64_t>() + n); break;
    case DType::Int32: t.int32_data.assign(a.data_as<int32_t>(), a.data_as<int32_t>() + n); break;
    case DType::Bool: t.bool_data.assign(a.data_as<uint8_t>(), a.data_as<uint8_t>() + n); break;
    case DType::Float32: t.data.assign(a.ptr(), a.ptr() + n); break;
  }
  return t;
}

void check_num_threads(int n) {
  if (n < 1 || n > demo_backend::kMaxThreads)
    throw_input("num_threads must be between 1 and " + std::to_string(demo_backend::kMaxThreads) + ", got " +
                std::to_string(n));
}

class LoadedModule final : public Module {
 public:
  LoadedModule(std::shared_ptr<Bytes> bytes, std::string name, const LoadOptions& options)
      : name_(std::move(name)), options_(options) {
    const ser::Module* m = verify_bundle(bytes->data(), bytes->size(), name_);
    if (m->extra_files() != nullptr)
      for (const ser::ExtraFile* f : *m->extra_files())
        if (f->name() != nullptr && f->name()->str() == kDebugTableExtraFile) {
          const auto* content = f->content();
          table_ = DebugTable::decode(content ? reinterpret_cast<const uint8_t*>(content->data()) : nullptr,
                                      content ? content->size() : 0);
          break;
        }
    fb_module_ = m;
    {
      demo_backend::StateCollector collector;  // the states the backends' compile makes (state.h)
      bundle_ = std::make_unique<LoadedBundle>(std::move(bytes), m);
      states_ = std::move(collector.states);
    }
    auto root = bundle_->root().get_if<std::shared_ptr<Object>>();
    const std::string prefix = (*root)->type_name + ".";
    for (const ser::Function* f : bundle_->method_functions()) {
      std::string qn = f->qn() ? f->qn()->str() : "";
      if (qn.rfind(prefix, 0) != 0) continue;
      std::string method = qn.substr(prefix.size());
      if (hidden(method)) continue;
      std::optional<std::vector<Param>> args;
      std::optional<WrapperSignature> wrapper;
      if (f->schema() != nullptr) {
        args.emplace();
        wrapper.emplace(WrapperSignature{method, {}, -1});
        const auto* arguments = f->schema()->arguments();
        for (size_t i = 1; arguments != nullptr && i < arguments->size(); ++i) {
          const ser::Arg* a = arguments->Get(i);
          std::string type = a->type() ? a->type()->str() : "";
          bool has_default = a->default_value() != 0 || type.rfind("Optional[", 0) == 0;
          args->push_back({a->name() ? a->name()->str() : "", has_default});
          wrapper->arguments.emplace_back(args->back().name, type);
        }
        wrapper->tuple_outputs = tuple_outputs(f->schema());
      }
      if ((*root)->type_name.rfind(kWrapperRootPrefix, 0) != 0) wrapper.reset();
      methods_.push_back({method, args, wrapper, dict_output_keys(f, m)});
    }
  }

  std::vector<std::string> method_names() const override {
    std::vector<std::string> names;
    for (const auto& m : methods_) names.push_back(m.name);
    return names;
  }

  std::vector<std::string> output_names(const std::string& method) const override {
    return method_info(method).output_keys;
  }

  std::vector<std::string> extra_file_names() const override {
    std::vector<std::string> names;
    if (fb_module_->extra_files() != nullptr)
      for (const ser::ExtraFile* f : *fb_module_->extra_files())
        if (f->name() != nullptr && !reserved_extra_file(f->name()->str())) names.push_back(f->name()->str());
    return names;
  }

  std::optional<std::string> extra_file(const std::string& name) const override {
    if (reserved_extra_file(name)) return std::nullopt;
    return stored_file(name);
  }

  // The extra file `name` of the bundle, whoever wrote it.
  std::optional<std::string> stored_file(const std::string& name) const {
    if (fb_module_->extra_files() == nullptr) return std::nullopt;
    for (const ser::ExtraFile* f : *fb_module_->extra_files())
      if (f->name() != nullptr && f->name()->str() == name) {
        const auto* content = f->content();  // verified in bounds with the bundle
        return content == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(content->data()), content->size());
      }
    return std::nullopt;
  }

  std::optional<std::string> liteexport_file(const std::string& name) const override {
    if (!reserved_extra_file(name)) return std::nullopt;
    return stored_file(name);
  }

  std::vector<std::optional<Tensor>> run_method(const std::string& name, const std::vector<Tensor>& inputs) override {
    // one call at a time: its results' buffers, XNNPACK's operators and the program state are the
    // Module's (runtime.h)
    std::lock_guard<std::mutex> lock(call_mutex_);
    const MethodInfo* info = &method_info(name);
    if (info->args && info->args->size() != inputs.size()) {
      // like runtime_py's _with_defaults; lowered methods take Tensors without defaults
      std::string list;
      for (const auto& a : *info->args) list += (list.empty() ? "" : ", ") + a.name;
      std::string message = name + "(" + list + ") takes " + std::to_string(info->args->size()) +
                            " input(s), got " + std::to_string(inputs.size());
      if (inputs.size() < info->args->size()) {
        const Param& missing = (*info->args)[inputs.size()];
        message += missing.has_default ? "; default values are not supported by the native runtime"
                                       : "; '" + missing.name + "' has no default value";
      }
      throw_input(message);
    }
    std::vector<IValue> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      bool negative = false;
      for (int64_t d : t.shape) negative = negative || d < 0;
      if (negative || static_cast<int64_t>(t.size()) != numel(t.shape))
        throw_input("input " + std::to_string(i) + ": shape " + py_shape(t.shape) + " needs " +
                    (negative ? std::string("non-negative sizes") : std::to_string(numel(t.shape)) + " values") +
                    ", got " + std::to_string(t.size()));
      args.emplace_back(to_array(t));
    }
    // this call's limits, for the allocator and the kernels on this thread
    auto run = std::make_shared<RunState>();
    run->max_memory = options_.max_memory;
    run->timeout_seconds = options_.timeout_seconds;
    run->pool = buffers_;  // results reuse the buffers of earlier steps and calls (no page faults)
    if (options_.timeout_seconds > 0)
      run->deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(std::min(options_.timeout_seconds, 1e9)));
    RunScope scope(run);
    demo_backend::ThreadPoolScope threads(pool_.get());  // XNNPACK's operators run on the Module's threads
    IValue result;
    try {
      result = bundle_->call_method(bundle_->root(), name, args);
    } catch (const Error& e) {
      // a misfit input: one line saying what is wrong, then the module that reads it (as runtime_py)
      const DebugEntry* reader = e.kind() == ErrorKind::Input && e.debug_handle() >= 0 && table_
                                     ? table_->lookup(e.debug_handle()) : nullptr;
      if (reader != nullptr)
        throw Error(ErrorKind::Input, name + ": " + e.what() + "\nModule hierarchy: " + reader->module_hierarchy,
                    e.debug_handle(), e.code(), e.fields());
      if (e.kind() != ErrorKind::Execution || e.debug_handle() < 0) throw;
      throw Error(ErrorKind::Execution,
                  source_mapped_message(e.what(), e.debug_handle(), table_ ? &*table_ : nullptr, name,
                                        info->wrapper ? &*info->wrapper : nullptr),
                  e.debug_handle(), e.code(), e.fields());
    }
    std::vector<std::optional<Tensor>> out;
    const auto tuple = result.get_if<std::shared_ptr<Tuple>>();
    auto add = [&](const IValue& v) {
      const Array* a = v.get_if<Array>();
      if (a != nullptr) {
        out.emplace_back(to_tensor(float_values(*a)));  // a qint8 weight returned: its float values
      } else if (v.is_none() && tuple != nullptr) {  // the wrapper's LOADC None: (logits, None, None)
        out.emplace_back(std::nullopt);
      } else {
        throw_execution(tuple ? name + " output " + std::to_string(out.size()) + " is of type " + v.kind() +
                                    ": the native runtime returns only Tensors, and None in a tuple"
                              : name + " returned a " + v.kind() + ", not a Tensor");
      }
    };
    const auto dict = result.get_if<std::shared_ptr<Dict>>();
    if (tuple != nullptr) {
      for (const IValue& v : **tuple) add(v);
    } else if (dict != nullptr) {  // a dict of tensors: its values in order (output_names gives the keys)
      for (const auto& entry : **dict) add(entry.second);
    } else {
      add(result);
    }
    return out;
  }

  MethodProfile profile(const std::string& method, const std::vector<Tensor>& inputs, int runs, int warmup) override {
    if (runs < 1 || warmup < 0)
      throw_input("profile needs runs >= 1 and warmup >= 0, got runs " + std::to_string(runs) + ", warmup " +
                  std::to_string(warmup));
    for (int i = 0; i < warmup; ++i) run_method(method, inputs);
    StepProfiler steps;
    MethodProfile profile;
    profile.method = method;
    profile.runs = runs;
    {
      ProfileScope scope(&steps);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < runs; ++i) run_method(method, inputs);
      profile.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    profile.other_seconds = std::max(0.0, profile.total_seconds - steps.program_seconds);
    for (const auto& [key, cost] : steps.steps) {
      InstructionProfile row;
      row.method = key.first;
      row.index = static_cast<int64_t>(key.second);
      row.op = cost.op;
      row.seconds = cost.seconds;
      row.calls = cost.calls;
      row.int8 = cost.int8;
      if (const DebugEntry* entry = table_ ? table_->lookup(cost.debug_handle) : nullptr) {
        row.node = entry->node_kind;
        row.module_hierarchy = entry->module_hierarchy;
        if (const SourceFrame* frame = user_frame(*entry)) row.location = frame->file + ":" + std::to_string(frame->line);
      }
      profile.instructions.push_back(std::move(row));
    }
    std::stable_sort(profile.instructions.begin(), profile.instructions.end(),
                     [](const InstructionProfile& a, const InstructionProfile& b) { return a.seconds > b.seconds; });
    return profile;
  }

  std::vector<StateInfo> states() const override {
    std::vector<StateInfo> out;
    for (const auto& module_state : states_)
      for (const auto& t : module_state->tensors())
        out.push_back({t->decl.name, static_cast<DType>(t->decl.dtype), t->decl.shape, t->bytes});
    return out;
  }

  std::optional<Tensor> state(const std::string& name) override {
    std::lock_guard<std::mutex> lock(call_mutex_);  // not while a call writes it
    for (const auto& module_state : states_)
      for (const auto& t : module_state->tensors())
        if (t->decl.name == name) return to_tensor(t->value);
    return std::nullopt;
  }

  void reset_state() override {
    std::lock_guard<std::mutex> lock(call_mutex_);
    for (const auto& module_state : states_) module_state->reset();
  }

  void set_num_threads(int num_threads) override {
    check_num_threads(num_threads);
    // one thread needs no pool: XNNPACK computes on the caller's thread
    pool_ = num_threads > 1 ? std::make_unique<demo_backend::ThreadPool>(num_threads) : nullptr;
    num_threads_ = num_threads;
  }
  int num_threads() const override { return num_threads_; }

 private:
  struct Param {
    std::string name;
    bool has_default;
  };
  struct MethodInfo {
    std::string name;
    std::optional<std::vector<Param>> args;  // argument names after self; none without a schema
    std::optional<WrapperSignature> wrapper;  // when the root is torch's LoweredWrapper
    std::vector<std::string> output_keys;     // a method returning a dict of tensors: its keys
  };
  std::string name_;
  const ser::Module* fb_module_ = nullptr;  // in bundle_'s bytes, which it keeps alive
  LoadOptions options_;
  std::optional<DebugTable> table_;
  std::unique_ptr<LoadedBundle> bundle_;
  std::vector<MethodInfo> methods_;
  int num_threads_ = 1;

  // The method `name`, or an Input error naming the bundle's methods.
  const MethodInfo& method_info(const std::string& name) const {
    for (const auto& m : methods_)
      if (m.name == name) return m;
    std::string known;
    for (const auto& m : methods_) known += (known.empty() ? "" : ", ") + m.name;
    throw_input(name_ + " has no method '" + name + "'; its methods: " + known);
  }

  std::unique_ptr<demo_backend::ThreadPool> pool_;
  std::vector<std::shared_ptr<demo_backend::ModuleState>> states_;  // one per compiled module (state.h)
  std::mutex call_mutex_;  // serializes run_method and reset_state
  // shared: a result freed after the Module (a caller's array) still returns its buffer safely
  std::shared_ptr<BufferPool> buffers_ = std::make_shared<BufferPool>();
};

}  // namespace

namespace {

// Every loader checks its options before it reads anything, and applies all of them.
void check_options(const LoadOptions& options) {
  if (!(options.timeout_seconds >= 0)) throw_input("timeout_seconds must be >= 0 (0: none)");
  check_num_threads(options.num_threads);
}

std::unique_ptr<Module> loaded(std::shared_ptr<Bytes> bytes, const std::string& name, const LoadOptions& options) {
  auto module = std::make_unique<LoadedModule>(std::move(bytes), name, options);
  module->set_num_threads(options.num_threads);
  return module;
}

}  // namespace

std::unique_ptr<Module> Module::load(const std::string& path, const LoadOptions& options) {
  check_options(options);
  return loaded(options.copy ? Bytes::read_file(path) : Bytes::map_file(path), path, options);
}

std::unique_ptr<Module> Module::load_from_buffer(const uint8_t* data, size_t size, const LoadOptions& options) {
  check_options(options);
  return loaded(Bytes::wrap(data, size), "bundle", options);
}

// The loaders below are new with the Android library (issue 23): a bundle inside a larger file
// (an APK's asset, by descriptor) and a copied buffer (an asset read through a stream).
std::unique_ptr<Module> Module::load_from_fd(int fd, int64_t offset, int64_t length, const LoadOptions& options) {
  check_options(options);
  const std::string name = "bundle at offset " + std::to_string(offset) + " of descriptor " + std::to_string(fd);
  return loaded(options.copy ? Bytes::read_fd(fd, offset, length, name) : Bytes::map_fd(fd, offset, length, name),
                name, options);
}

std::unique_ptr<Module> Module::load_from_copy(const uint8_t* data, size_t size, const LoadOptions& options) {
  check_options(options);
  return loaded(Bytes::copy(data, size), "bundle", options);
}

}  // namespace liteexport
