// The bundle's debug-handle -> source table (extra file "liteexport/debug_table") and the one
// place an execution error is mapped to its module hierarchy and TorchScript-style traceback,
// exactly like runtime_py's module.source_mapped_message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace liteexport {

constexpr const char* kDebugTableExtraFile = "liteexport/debug_table";
constexpr uint32_t kDebugTableFormatVersion = 1;

struct SourceFrame {
  std::string function, file, snippet;
  uint32_t line = 0;
};

struct DebugEntry {
  int64_t handle = 0;
  std::string method, node_kind, module_hierarchy;
  std::vector<SourceFrame> frames;  // outermost first
};

class DebugTable {
 public:
  // Verifies and decodes the table's flatbuffer (copied first: inside the bundle it sits in a
  // string, which only guarantees 4-byte alignment). Throws Error(Format).
  static DebugTable decode(const uint8_t* data, size_t size);
  const DebugEntry* lookup(int64_t handle) const;  // nullptr if absent

 private:
  std::vector<DebugEntry> entries_;  // sorted by handle, unique
};

// `message` followed by the module hierarchy and traceback of `handle`'s entry; without an
// entry (or table) "<method>: <message>".
std::string source_mapped_message(const std::string& message, int64_t handle, const DebugTable* table,
                                  const std::string& method);

}  // namespace liteexport
