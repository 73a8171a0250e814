#include "ivalue.h"

#include <cstdio>

#include "errors.h"

namespace liteexport {

namespace detail {
namespace {
thread_local std::vector<IValue>* pending = nullptr;

bool is_container(const IValue& v) {
  return v.is<std::shared_ptr<List>>() || v.is<std::shared_ptr<Tuple>>() || v.is<std::shared_ptr<Dict>>() ||
         v.is<std::shared_ptr<Object>>();
}

template <typename Fill>
void release(Fill fill) {
  if (pending != nullptr) {  // inside an outer release: it drains what we add
    fill(*pending);
    return;
  }
  std::vector<IValue> work;
  pending = &work;
  fill(work);
  while (!work.empty()) {
    IValue last = std::move(work.back());
    work.pop_back();
    last = IValue();  // may release a container, which appends its items to `work`
  }
  pending = nullptr;
}
}  // namespace

void release_items(std::vector<IValue>& items) {
  release([&items](std::vector<IValue>& out) {
    for (IValue& v : items)
      if (is_container(v)) out.push_back(std::move(v));
  });
}

void release_items(std::vector<std::pair<IValue, IValue>>& items) {
  release([&items](std::vector<IValue>& out) {
    for (auto& [k, v] : items) {
      if (is_container(k)) out.push_back(std::move(k));
      if (is_container(v)) out.push_back(std::move(v));
    }
  });
}
}  // namespace detail

IValue CustomObject::call(const std::string& method, std::vector<IValue>& /*args*/) {
  throw_execution(type_name() + " has no method " + method);
}

std::string IValue::kind() const {
  switch (v.index()) {
    case 0: return "NoneType";
    case 1: return "bool";
    case 2: return "int";
    case 3: return "float";
    case 4: return "str";
    case 5: return "Tensor";
    case 6: return "Tensor(uint8)";
    case 7: return "Uninitialized";
    case 8: return "list";
    case 9: return "tuple";
    case 10: return "dict";
    case 11: return std::get<std::shared_ptr<Object>>(v)->type_name;
    default: return std::get<std::shared_ptr<CustomObject>>(v)->type_name();
  }
}

bool IValue::is_hashable() const { return v.index() <= 4; }

bool IValue::key_equals(const IValue& other) const {
  if (!is_hashable() || !other.is_hashable() || v.index() != other.v.index()) return false;
  switch (v.index()) {
    case 0: return true;
    case 1: return std::get<bool>(v) == std::get<bool>(other.v);
    case 2: return std::get<int64_t>(v) == std::get<int64_t>(other.v);
    case 3: return std::get<double>(v) == std::get<double>(other.v);
    default: return std::get<std::string>(v) == std::get<std::string>(other.v);
  }
}

bool IValue::truthy() const {
  if (auto b = get_if<bool>()) return *b;
  if (auto i = get_if<int64_t>()) return *i != 0;
  if (auto d = get_if<double>()) return *d != 0.0;
  throw_execution("expected a bool, got " + kind());
}

std::string IValue::str() const {
  if (auto s = get_if<std::string>()) return *s;
  if (is_none()) return "None";
  if (auto b = get_if<bool>()) return *b ? "True" : "False";
  if (auto i = get_if<int64_t>()) return std::to_string(*i);
  if (auto d = get_if<double>()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  return "<" + kind() + ">";
}

}  // namespace liteexport
