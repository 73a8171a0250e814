// Error helpers shared by the core: one place that formats FormatError's "(at where)" suffix
// and Python-style shape/list text, so messages match runtime_py's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "liteexport/runtime.h"

namespace liteexport {

// runtime_py's FormatError(message, where=...) renders as "message (at where)".
[[noreturn]] inline void throw_format(const std::string& message, const std::string& where = "") {
  throw Error(ErrorKind::Format, where.empty() ? message : message + " (at " + where + ")");
}

[[noreturn]] inline void throw_input(const std::string& message) { throw Error(ErrorKind::Input, message); }

[[noreturn]] inline void throw_execution(const std::string& message, int64_t handle = -1) {
  throw Error(ErrorKind::Execution, message, handle);
}

// Python tuple text of a shape: "()", "(5,)", "(2, 3)"; -1 prints as "?" when unknown_as_q.
inline std::string py_shape(const std::vector<int64_t>& shape, bool unknown_as_q = false) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += (unknown_as_q && shape[i] == -1) ? "?" : std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

// Python list text: "[3, 4, 5]".
template <typename T>
std::string py_list(const std::vector<T>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

}  // namespace liteexport
