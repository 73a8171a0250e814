// A failing instruction's module hierarchy and traceback in the words torch's lite interpreter
// uses, for delegated (lowered) modules too: the C++ port of runtime_py/delegate_trace.py and
// runtime_py/module.py's source_mapped_message (their rules and text; the two must stay equal,
// tests/android compares them byte for byte).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "debug_table.h"

namespace liteexport {

// What torch names the root type of a module its to_backend lowered as a whole.
constexpr const char* kWrapperRootPrefix = "torch.jit.LoweredWrapper.";

// A lowered method as torch's to_backend generated its wrapper: the arguments (name and
// annotation, self excluded) and how many Tensors it returns (-1: one, not a tuple).
struct WrapperSignature {
  std::string method;
  std::vector<std::pair<std::string, std::string>> arguments;
  int tuple_outputs = -1;
};

// `message` followed by the module hierarchy and traceback of `handle`'s entry; without an
// entry (or table) "<method>: <message>". `wrapper`: the lowered method, when the bundle's root
// is torch's LoweredWrapper (else nullptr).
std::string source_mapped_message(const std::string& message, int64_t handle, const DebugTable* table,
                                  const std::string& method, const WrapperSignature* wrapper);

}  // namespace liteexport
