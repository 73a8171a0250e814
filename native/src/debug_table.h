// The bundle's debug-handle -> source table (extra file "liteexport/debug_table"); errors are
// mapped through it in delegate_trace.h.
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

// The innermost frame in the model's own code (bundle_format/debug_table.py's user_frame):
// frames inside torch (named "torch/..." by the compiler) show how torch implements a module,
// not the user's line. nullptr when the entry has no frames.
const SourceFrame* user_frame(const DebugEntry& entry);

class DebugTable {
 public:
  // Verifies and decodes the table's flatbuffer (copied first: inside the bundle it sits in a
  // string, which only guarantees 4-byte alignment). Throws Error(Format).
  static DebugTable decode(const uint8_t* data, size_t size);
  const DebugEntry* lookup(int64_t handle) const;  // nullptr if absent

 private:
  std::vector<DebugEntry> entries_;  // sorted by handle, unique
};

}  // namespace liteexport
