#include "ivalue.h"

#include <cstdio>

#include "errors.h"

namespace liteexport {

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
