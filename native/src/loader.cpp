#include "loader.h"

#include <algorithm>

#include <cstring>

#include "demo/backend.h"
#include "errors.h"
#include "fb_read.h"
#include "narrow_weights.h"

namespace liteexport {

namespace {

const char* const kBackendPrefix = "__torch__.torch.classes.__backends__.";
const char* const kDebugInfoClass = "__torch__.torch.classes.backendutils.BackendDebugInfo";

// torch's BackendDebugInfo holder: torch-side only, nothing to keep here.
class BackendDebugInfo : public CustomObject {
 public:
  std::string type_name() const override { return kDebugInfoClass; }
  IValue call(const std::string& method, std::vector<IValue>& args) override {
    if (method == "__init__") return IValue();
    return CustomObject::call(method, args);
  }
};

const char* type_type_name(ser::TypeType t) {
  switch (t) {
    case ser::TypeType::CLASS_WITH_FIELD: return "CLASS_WITH_FIELD";
    case ser::TypeType::CUSTOM_CLASS: return "CUSTOM_CLASS";
    case ser::TypeType::CLASS_WITH_SETSTATE: return "CLASS_WITH_SETSTATE";
    case ser::TypeType::NON_OBJ: return "NON_OBJ";
    default: return "UNSET";
  }
}

std::string text(const flatbuffers::String* s) { return s == nullptr ? "" : s->str(); }

template <typename T, typename Out = T>
std::shared_ptr<List> list_of(const flatbuffers::Vector<T>* items) {
  auto list = std::make_shared<List>();
  for (Out v : read_vector<Out>(items)) list->emplace_back(v);
  return list;
}

}  // namespace

LoadedBundle::LoadedBundle(std::shared_ptr<Bytes> bytes, const ser::Module* m)
    : bytes_(std::move(bytes)), m_(m), values_(m->ivalues()->size()) {
  if (m_->methods() != nullptr)
    for (uint32_t index : *m_->methods()) {
      value(index);
      const ser::Function* f = m_->ivalues()->Get(index)->val_as_Function();
      functions_[text(f->qn())] = codes_.at(index);
      method_functions_.push_back(f);
    }
  refuse_missing_operators();
  root_ = value(m_->state_obj());
}

// The core runs the wrapper bytecode of lowered bundles, which calls no operator; a bundle whose
// bytecode does (a partially lowered one, liteexport export --lower) is refused at load, naming
// every operator it would need, rather than failing at the first one mid-call.
void LoadedBundle::refuse_missing_operators() const {
  std::vector<std::string> missing;
  for (const auto& [qn, code] : functions_)
    for (const auto& name : code->operators)
      if (name != "prim::unchecked_cast" && std::find(missing.begin(), missing.end(), name) == missing.end())
        missing.push_back(name);
  if (missing.empty()) return;
  std::sort(missing.begin(), missing.end());
  std::string names;
  for (const auto& name : missing) names += (names.empty() ? "" : ", ") + name;
  throw_format("the bundle's TorchScript bytecode uses operators the native runtime does not implement: " +
                   names + " (a partially lowered bundle, e.g. from liteexport export --lower: the native "
                   "runtime runs bundles lowered whole; runtime_py and torch's lite interpreter run this one)",
               "methods");
}

LoadedBundle::~LoadedBundle() {
  // objects may reference each other through slots set by bytecode; break those links so
  // shared_ptr cycles a bundle built at run time cannot leak
  for (auto& weak : objects_)
    if (auto o = weak.lock()) o->slots.clear();
}

void LoadedBundle::track(const std::shared_ptr<Object>& obj) {
  if (objects_.size() >= 64 && objects_.size() == objects_.capacity()) {
    std::vector<std::weak_ptr<Object>> live;
    for (auto& weak : objects_)
      if (!weak.expired()) live.push_back(std::move(weak));
    live.reserve(2 * live.size() + 64);
    objects_ = std::move(live);
  }
  objects_.push_back(obj);
}

const IValue& LoadedBundle::value(uint32_t index) {
  if (values_[index]) return *values_[index];
  // post-order walk over the values not built yet; verify_bundle ruled out cycles, and the
  // explicit stack keeps deep nesting off the native stack
  struct Item {
    uint32_t node;
    std::vector<uint32_t> children;
    size_t next;
  };
  std::vector<Item> stack;
  stack.push_back({index, ivalue_children(m_->ivalues()->Get(index)), 0});
  while (!stack.empty()) {
    Item& top = stack.back();
    if (top.next < top.children.size()) {
      uint32_t child = top.children[top.next++];
      if (!values_[child]) stack.push_back({child, ivalue_children(m_->ivalues()->Get(child)), 0});
      continue;
    }
    uint32_t node = top.node;
    stack.pop_back();
    if (!values_[node]) values_[node] = build(node);
  }
  return *values_[index];
}

IValue LoadedBundle::build(uint32_t index) {
  const ser::IValue* v = m_->ivalues()->Get(index);
  const std::string where = "Module.ivalues[" + std::to_string(index) + "]";
  switch (v->val_type()) {
    case ser::IValueUnion::NONE: return IValue();
    case ser::IValueUnion::Int: return int64_t{v->val_as_Int()->int_val()};
    case ser::IValueUnion::Bool: return v->val_as_Bool()->bool_val();
    case ser::IValueUnion::Double: return v->val_as_Double()->double_val();
    case ser::IValueUnion::String: return text(v->val_as_String()->data());
    case ser::IValueUnion::Device: return text(v->val_as_Device()->str());
    case ser::IValueUnion::IntList: return list_of<int64_t>(v->val_as_IntList()->items());
    case ser::IValueUnion::DoubleList: return list_of<double>(v->val_as_DoubleList()->items());
    case ser::IValueUnion::BoolList: return list_of<uint8_t, bool>(v->val_as_BoolList()->items());
    case ser::IValueUnion::TensorMetadata: return build_tensor(v->val_as_TensorMetadata(), where);
    case ser::IValueUnion::List:
    case ser::IValueUnion::Tuple: {
      const auto* items = v->val_type() == ser::IValueUnion::List ? v->val_as_List()->items() : v->val_as_Tuple()->items();
      std::vector<IValue> out;
      if (items != nullptr)
        for (uint32_t i : *items) out.push_back(*values_[i]);
      if (v->val_type() == ser::IValueUnion::List) return std::make_shared<List>(std::move(out));
      return std::make_shared<Tuple>(std::move(out));
    }
    case ser::IValueUnion::Dict: {
      const ser::Dict* d = v->val_as_Dict();
      auto out = std::make_shared<Dict>();
      for (size_t i = 0; d->keys() != nullptr && i < d->keys()->size(); ++i) {
        const IValue& key = *values_[d->keys()->Get(i)];
        if (!key.is_hashable()) throw_format("unhashable dict key: unhashable type: '" + key.kind() + "'", where);
        out->emplace_back(key, *values_[d->values()->Get(i)]);
      }
      return out;
    }
    case ser::IValueUnion::Object: return build_object(v->val_as_Object(), where);
    case ser::IValueUnion::Function: {
      const ser::Function* f = v->val_as_Function();
      auto code = std::make_shared<Code>();
      code->qn = text(f->qn());
      if (f->instructions() != nullptr)
        for (const auto* ins : *f->instructions()) code->instructions.push_back({ins->op(), ins->x(), ins->n()});
      if (f->constants() != nullptr)
        for (uint32_t c : *f->constants()) code->constants.push_back(*values_[c]);
      if (f->operators() != nullptr)
        for (const auto* op : *f->operators()) {
          std::string overload = text(op->overload_name());
          code->operators.push_back(text(op->name()) + (overload.empty() ? "" : "." + overload));
        }
      if (f->type_annotations() != nullptr)
        for (const auto* t : *f->type_annotations()) code->types.push_back(text(t));
      code->register_size = f->register_size();
      codes_[index] = std::move(code);
      return IValue();  // functions are not run-time values of the wrapper bytecode
    }
    case ser::IValueUnion::ComplexDouble: throw_format("cannot load ivalue of kind ComplexDoubleValue", where);
    default: throw_format("cannot load ivalue of kind EnumValue", where);
  }
}

IValue LoadedBundle::build_tensor(const ser::TensorMetadata* t, const std::string& where) {
  const int scalar_type = t->scalar_type();
  if (scalar_type == kHalf) return widen_weight(t, m_, where);  // narrow weights
  if (scalar_type == kQInt8) return quantized_weight(t, m_, where, bytes_);
  // c10::ScalarType numbers: Byte (a program's bytes) and the four dtypes compiled values have
  if (scalar_type != 0 && scalar_type != 3 && scalar_type != 4 && scalar_type != 6 && scalar_type != 11)
    throw_format("tensors of scalar type " + std::to_string(scalar_type) +
                 " are not supported by the native runtime (only Float, Long, Int, Bool and Byte, and Half and QInt8 weights)", where);
  const size_t itemsize = scalar_type_size(scalar_type);
  Shape shape, strides;
  if (t->sizes() != nullptr) shape.assign(t->sizes()->begin(), t->sizes()->end());
  if (t->strides() != nullptr) strides.assign(t->strides()->begin(), t->strides()->end());
  const int64_t count = numel(shape);
  const auto* storage = m_->storage_data()->Get(t->storage_location_index())->data();
  const uint8_t* base = count == 0 ? nullptr : storage->data() + static_cast<size_t>(t->storage_offset()) * itemsize;
  bool contiguous = true;
  const auto expected = contiguous_strides(shape);
  for (size_t i = 0; i < shape.size(); ++i) contiguous = contiguous && (shape[i] == 1 || strides[i] == expected[i]);
  std::shared_ptr<const void> keepalive = bytes_;
  if (count > 0 && !contiguous) {
    // gather a strided tensor into its own contiguous buffer (liteexport never writes one)
    auto copy = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(count) * itemsize);
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t offset = 0;
      for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
      std::memcpy(copy->data() + k * static_cast<int64_t>(itemsize), base + offset * static_cast<int64_t>(itemsize), itemsize);
      for (size_t d = shape.size(); d-- > 0;) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
    base = copy->data();
    keepalive = copy;
  }
  if (scalar_type == 0) return ByteTensor{base, static_cast<size_t>(count), keepalive};
  const auto dtype = static_cast<DType>(scalar_type);
  if (count == 0 || reinterpret_cast<uintptr_t>(base) % itemsize != 0) {
    // empty (a buffer of its own, never a null pointer), or misaligned (a storage offset the
    // writer did not align): a copy
    return visit_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> copy(static_cast<size_t>(count));
      if (count > 0) std::memcpy(copy.data(), base, copy.size() * sizeof(T));
      return Array::from_vector(shape, std::move(copy));
    });
  }
  return Array::borrowed(shape, base, dtype, keepalive);  // in place
}

IValue LoadedBundle::build_object(const ser::Object* o, const std::string& where) {
  const ser::ObjectType* type = m_->object_types()->Get(o->type_index());
  auto obj = std::make_shared<Object>();
  track(obj);
  obj->type_name = text(type->type_name());
  if (type->type() == ser::TypeType::CLASS_WITH_FIELD) {
    if (o->attrs() != nullptr)
      for (uint32_t a : *o->attrs()) obj->slots.push_back(*values_[a]);
  } else if (type->type() == ser::TypeType::CLASS_WITH_SETSTATE) {
    run_code(*codes_.at(o->setstate_func()), {obj, *values_[o->state()]}, *this);
  } else {
    throw_format(std::string("objects of kind ") + type_type_name(type->type()) + " (" + obj->type_name +
                 ") are not supported", where);
  }
  return obj;
}

IValue LoadedBundle::call_method(const IValue& obj, const std::string& name, std::vector<IValue>& args) {
  if (auto o = obj.get_if<std::shared_ptr<Object>>()) {
    auto it = functions_.find((*o)->type_name + "." + name);
    if (it == functions_.end()) throw_execution("object of type " + (*o)->type_name + " has no method " + name);
    std::vector<IValue> full;
    full.reserve(args.size() + 1);
    full.push_back(obj);
    for (auto& a : args) full.push_back(std::move(a));
    return run_code(*it->second, std::move(full), *this);
  }
  if (auto c = obj.get_if<std::shared_ptr<CustomObject>>()) return (*c)->call(name, args);
  throw_execution(obj.kind() + " has no method " + name);
}

IValue LoadedBundle::create_object(const std::string& type_name) {
  const std::string prefix = kBackendPrefix;
  if (type_name.rfind(prefix, 0) == 0) {
    std::string backend = type_name.substr(prefix.size());
    if (backend != demo_backend::kBackendName)
      throw_format("unknown delegate backend '" + backend + "' (known backends: " + demo_backend::kBackendName + ")");
    return demo_backend::make_backend();
  }
  if (type_name == kDebugInfoClass) return std::shared_ptr<CustomObject>(std::make_shared<BackendDebugInfo>());
  auto obj = std::make_shared<Object>();
  track(obj);
  obj->type_name = type_name;
  return obj;
}

}  // namespace liteexport
