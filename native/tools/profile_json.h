// Module::profile's result as JSON (liteexport_native_run --profile OUT.json), the fields of
// liteexport.profile's InstructionCost rows, which `liteexport profile --engine native` reads.
#pragma once

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "liteexport/runtime.h"

namespace profile_json {

inline std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

inline std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

inline void write(const std::string& path, const liteexport::MethodProfile& profile) {
  std::string json = "{\"method\": " + quoted(profile.method) + ", \"runs\": " + std::to_string(profile.runs) +
                     ", \"total_seconds\": " + number(profile.total_seconds) +
                     ", \"other_seconds\": " + number(profile.other_seconds) + ", \"instructions\": [";
  for (size_t i = 0; i < profile.instructions.size(); ++i) {
    const liteexport::InstructionProfile& row = profile.instructions[i];
    json += std::string(i ? ",\n  " : "\n  ") + "{\"method\": " + quoted(row.method) +
            ", \"index\": " + std::to_string(row.index) + ", \"op\": " + quoted(row.op) +
            ", \"node\": " + quoted(row.node) + ", \"location\": " + quoted(row.location) +
            ", \"module_hierarchy\": " + quoted(row.module_hierarchy) + ", \"seconds\": " + number(row.seconds) +
            ", \"calls\": " + std::to_string(row.calls) + ", \"int8\": " + (row.int8 ? "true" : "false") + "}";
  }
  json += "]}\n";
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << json;
  if (!file.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace profile_json
