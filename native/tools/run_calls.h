// liteexport_native_run --calls FILE: a sequence of calls on one loaded module, so that program
// state (a KV cache, issue 34) carries from call to call as in an app. Each line of FILE is
//   METHOD INPUT...   run METHOD on the inputs (.npy or LXT1 files, as the tool's inputs)
//   reset             Module::reset_state()
//   state             keep every state tensor's values now
// Blank lines and lines starting with '#' are skipped. A call that fails is recorded and the
// sequence goes on (the state is as before the call: runtime.h), so a test can check both the
// error and what follows it. Outputs go into OUT.npz as c<line>_<k> (line: 0-based among the
// entries), states as s<line>_<name>; the report (JSON) lists the module's states and, per
// entry, its outputs' count or its error (kind, code, fields, message).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "liteexport/runtime.h"
#include "npy_io.h"
#include "profile_json.h"
#include "tensor_io.h"

namespace run_calls {

inline const char* kind_name(liteexport::ErrorKind kind) {
  switch (kind) {
    case liteexport::ErrorKind::Format: return "format";
    case liteexport::ErrorKind::Input: return "input";
    case liteexport::ErrorKind::Execution: break;
  }
  return "execution";
}

inline std::string error_json(const liteexport::Error& e) {
  using profile_json::quoted;
  std::string fields;
  for (const auto& [key, value] : e.fields()) fields += (fields.empty() ? "" : ", ") + quoted(key) + ": " + quoted(value);
  return std::string("{\"kind\": ") + quoted(kind_name(e.kind())) + ", \"code\": " + quoted(e.code()) +
         ", \"fields\": {" + fields + "}, \"message\": " + quoted(e.what()) + "}";
}

// Runs the entries of `calls_path` on `module`; writes `output` (.npz) and `report` (.json).
// Returns the tool's exit code: 0, or 1 for an unreadable file.
inline int run(liteexport::Module& module, const std::string& calls_path, const std::string& output,
               const std::string& report) {
  using profile_json::quoted;
  std::ifstream in(calls_path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", calls_path.c_str());
    return 1;
  }
  std::vector<std::pair<std::string, liteexport::Tensor>> members;
  std::string entries;
  std::string line;
  size_t index = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> parts;
    for (std::string w; words >> w;) parts.push_back(w);
    if (parts.empty() || parts[0][0] == '#') continue;
    const std::string at = std::to_string(index++);
    std::string entry;
    if (parts[0] == "reset") {
      module.reset_state();
      entry = "{\"reset\": true}";
    } else if (parts[0] == "state") {
      for (const liteexport::StateInfo& s : module.states()) members.emplace_back("s" + at + "_" + s.name, *module.state(s.name));
      entry = "{\"state\": true}";
    } else {
      std::vector<liteexport::Tensor> inputs;
      for (size_t k = 1; k < parts.size(); ++k) inputs.push_back(liteexport::tensor_io::read_file(parts[k]));
      try {
        auto out = module.run_method(parts[0], inputs);
        for (size_t k = 0; k < out.size(); ++k)
          if (out[k]) members.emplace_back("c" + at + "_" + std::to_string(k), *out[k]);
        entry = "{\"method\": " + quoted(parts[0]) + ", \"outputs\": " + std::to_string(out.size()) + "}";
      } catch (const liteexport::Error& e) {
        entry = "{\"method\": " + quoted(parts[0]) + ", \"error\": " + error_json(e) + "}";
      }
    }
    entries += (entries.empty() ? "" : ", ") + entry;
  }
  std::string states;
  for (const liteexport::StateInfo& s : module.states()) {
    std::string shape;
    for (int64_t d : s.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    states += (states.empty() ? "" : ", ") + std::string("{\"name\": ") + quoted(s.name) + ", \"dtype\": " +
              quoted(liteexport::dtype_name(s.dtype)) + ", \"shape\": [" + shape + "], \"bytes\": " +
              std::to_string(s.bytes) + "}";
  }
  if (!output.empty()) liteexport::npy_io::write_npz(output, members);
  const std::string json = "{\"states\": [" + states + "], \"calls\": [" + entries + "]}\n";
  if (report.empty()) {
    std::fputs(json.c_str(), stdout);
  } else {
    std::ofstream(report) << json;
  }
  return 0;
}

}  // namespace run_calls
