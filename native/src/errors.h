// Error helpers shared by the core: one place that formats FormatError's "(at where)" suffix
// and Python-style shape/list text, so messages match runtime_py's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "demo_error.h"
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

// A structured error of the demo backend (native_format/decoder/demo_error.h) as the core's Error.
[[noreturn]] inline void throw_coded(ErrorKind kind, const demo_errors::ProgramError& e, int64_t handle = -1) {
  throw Error(kind, e.what(), handle, demo_errors::code_name(e.code), e.fields);
}

// Throws the demo backend's error `code` with `fields`, rendered from its template.
[[noreturn]] inline void throw_coded(ErrorKind kind, demo_errors::Code code, demo_errors::Fields fields,
                                     int64_t handle = -1) {
  throw_coded(kind, demo_errors::ProgramError(code, std::move(fields)), handle);
}

// Python tuple text of a shape: "()", "(5,)", "(2, 3)"; -1 prints as "?" when unknown_as_q.
inline std::string py_shape(const std::vector<int64_t>& shape, bool unknown_as_q = false) {
  return demo_errors::tuple_text(shape, unknown_as_q);
}

// Python list text: "[3, 4, 5]".
using demo_errors::list_text;
template <typename T>
std::string py_list(const std::vector<T>& values) {
  return list_text(values);
}

}  // namespace liteexport
