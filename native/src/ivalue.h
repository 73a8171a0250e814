// Run-time values of the wrapper bytecode: the handful of TorchScript value kinds a lowered
// module's bytecode moves around. Containers and objects are shared (reference semantics,
// like c10::IValue); scalars and strings are values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "array.h"

namespace liteexport {

struct IValue;
struct Object;
struct List;
struct Tuple;
struct Dict;

// A uint8 tensor of the bundle (demo programs): bytes used in place.
struct ByteTensor {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keepalive;
};

// What UN_INITIALIZED pushes: a placeholder for a value on a path that raises.
struct Uninitialized {};

// A native object with methods (the delegate backend, its method handles, BackendDebugInfo).
class CustomObject {
 public:
  virtual ~CustomObject() = default;
  virtual std::string type_name() const = 0;
  // Throws Error(Execution) for an unknown method.
  virtual IValue call(const std::string& method, std::vector<IValue>& args);
};

struct IValue {
  std::variant<std::monostate, bool, int64_t, double, std::string, Array, ByteTensor, Uninitialized,
               std::shared_ptr<List>, std::shared_ptr<Tuple>, std::shared_ptr<Dict>, std::shared_ptr<Object>,
               std::shared_ptr<CustomObject>>
      v;

  IValue() = default;
  template <typename T, typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, IValue>>>
  IValue(T&& value) : v(std::forward<T>(value)) {}  // NOLINT: implicit on purpose, like c10::IValue

  bool is_none() const { return std::holds_alternative<std::monostate>(v); }
  template <typename T>
  bool is() const { return std::holds_alternative<T>(v); }
  template <typename T>
  const T* get_if() const { return std::get_if<T>(&v); }

  // The Python type name runtime_py would report (for error messages).
  std::string kind() const;
  // Hashable scalar equality (None/bool/int/double/str); false for everything else.
  bool key_equals(const IValue& other) const;
  bool is_hashable() const;
  // Truthiness for JF: bools, ints, doubles; anything else is an execution error.
  bool truthy() const;
  // Python str() of a scalar or string (RAISE_EXCEPTION messages).
  std::string str() const;
};

namespace detail {
// Containers release their items iteratively: bytecode can nest tuples or chain objects
// (SET_ATTR) arbitrarily deep, and a recursive release of such a chain would overflow the
// native stack. Moves the items that are containers to a thread-local work list drained by
// the outermost release.
void release_items(std::vector<IValue>& items);
void release_items(std::vector<std::pair<IValue, IValue>>& items);
}  // namespace detail

// Distinct types (not aliases) so the variant can tell a list from a tuple.
struct List : std::vector<IValue> {
  List() = default;
  explicit List(std::vector<IValue> items) : std::vector<IValue>(std::move(items)) {}
  List(const List&) = default;
  List(List&&) = default;
  List& operator=(const List&) = default;
  List& operator=(List&&) = default;
  ~List() { detail::release_items(*this); }
};
struct Tuple : std::vector<IValue> {
  Tuple() = default;
  explicit Tuple(std::vector<IValue> items) : std::vector<IValue>(std::move(items)) {}
  Tuple(const Tuple&) = default;
  Tuple(Tuple&&) = default;
  Tuple& operator=(const Tuple&) = default;
  Tuple& operator=(Tuple&&) = default;
  ~Tuple() { detail::release_items(*this); }
};
// Insertion order; a bundle's dicts have few keys, so lookup is linear.
struct Dict : std::vector<std::pair<IValue, IValue>> {
  Dict() = default;
  Dict(const Dict&) = default;
  Dict(Dict&&) = default;
  Dict& operator=(const Dict&) = default;
  Dict& operator=(Dict&&) = default;
  ~Dict() { detail::release_items(*this); }
};

// An instance of a TorchScript class: a type name and attribute slots.
struct Object {
  std::string type_name;
  std::vector<IValue> slots;
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  ~Object() { detail::release_items(slots); }
};

}  // namespace liteexport
