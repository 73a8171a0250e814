#include "debug_table.h"

#include <algorithm>
#include <cstring>

#include "debug_table_generated.h"
#include "errors.h"

namespace liteexport {

namespace fbd = liteexport::debug;

namespace {

std::string required(const flatbuffers::String* s, const std::string& table, const char* field) {
  if (s == nullptr) throw_format(std::string("required field '") + field + "' is missing", table);
  return s->str();
}

}  // namespace

DebugTable DebugTable::decode(const uint8_t* data, size_t size) {
  std::vector<uint64_t> aligned((size + 7) / 8);
  if (size) std::memcpy(aligned.data(), data, size);
  const auto* buf = reinterpret_cast<const uint8_t*>(aligned.data());
  if (size < 8 || !fbd::DebugTableBufferHasIdentifier(buf))
    throw_format("malformed debug table: missing file identifier b'LXDT'", "DebugTable");
  flatbuffers::Verifier verifier(buf, size);
  if (!fbd::VerifyDebugTableBuffer(verifier))
    throw_format("malformed debug table: flatbuffers verification failed", "DebugTable");
  const fbd::DebugTable* t = fbd::GetDebugTable(buf);
  if (t->format_version() != kDebugTableFormatVersion)
    throw_format("unsupported debug table format version " + std::to_string(t->format_version()) +
                 "; this runtime reads version " + std::to_string(kDebugTableFormatVersion),
                 "DebugTable.format_version");
  DebugTable table;
  if (t->entries() == nullptr) return table;
  for (size_t i = 0; i < t->entries()->size(); ++i) {
    const fbd::DebugEntry* e = t->entries()->Get(i);
    std::string where = "DebugTable.entries[" + std::to_string(i) + "]";
    DebugEntry entry;
    entry.handle = e->handle();
    if (!table.entries_.empty() && entry.handle <= table.entries_.back().handle)
      throw_format("entries not sorted by unique handle: " + std::to_string(entry.handle) + " follows " +
                   std::to_string(table.entries_.back().handle), where);
    entry.method = required(e->method(), where, "method");
    entry.node_kind = required(e->node_kind(), where, "node_kind");
    entry.module_hierarchy = required(e->module_hierarchy(), where, "module_hierarchy");
    if (e->frames() != nullptr)
      for (size_t j = 0; j < e->frames()->size(); ++j) {
        const fbd::SourceFrame* f = e->frames()->Get(j);
        std::string at = where + ".frames[" + std::to_string(j) + "]";
        entry.frames.push_back({required(f->function(), at, "function"), required(f->file(), at, "file"),
                                required(f->snippet(), at, "snippet"), f->line()});
      }
    table.entries_.push_back(std::move(entry));
  }
  return table;
}

const SourceFrame* user_frame(const DebugEntry& entry) {
  for (auto it = entry.frames.rbegin(); it != entry.frames.rend(); ++it)
    if (it->file.rfind("torch/", 0) != 0) return &*it;
  return entry.frames.empty() ? nullptr : &entry.frames.back();
}

const DebugEntry* DebugTable::lookup(int64_t handle) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), handle,
                             [](const DebugEntry& e, int64_t h) { return e.handle < h; });
  return it != entries_.end() && it->handle == handle ? &*it : nullptr;
}

}  // namespace liteexport
