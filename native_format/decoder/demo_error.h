// Structured errors of the demo backend in C++: a code (schema/demo_errors.toml) and named
// fields, rendered to text here and only here, from the same templates as runtime_py's
// (bundle_format/error_codes.py). Shared by the Android native core and the torch extension.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "demo_errors_generated.h"

namespace liteexport::demo_errors {

// (name, value as text), in the order the raiser gave them
using Fields = std::vector<std::pair<std::string, std::string>>;

// Field values as Python prints them:
// "(2, 3)", "(5,)", "()"; -1 as "?" when unknown_as_q (a size known only at run time)
template <typename T>
std::string tuple_text(const T& values, bool unknown_as_q = false) {
  std::string out = "(";
  size_t i = 0;
  for (auto v : values) {
    if (i++) out += ", ";
    out += (unknown_as_q && v == -1) ? "?" : std::to_string(v);
  }
  if (i == 1) out += ",";
  return out + ")";
}

// "[3, 4, 5]"
template <typename T>
std::string list_text(const std::vector<T>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

inline const char* code_name(Code code) { return kCodeNames[static_cast<size_t>(code)]; }

// `text` with every {name} replaced by that field's value.
inline std::string render_text(const std::string& text, const Fields& fields) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out += text[i];
      continue;
    }
    const std::string name = text.substr(i + 1, close - i - 1);
    bool found = false;
    for (const auto& [key, value] : fields) {
      if (key == name) {
        out += value;
        found = true;
        break;
      }
    }
    if (!found) out += "{" + name + "}";  // a raiser's bug; visible rather than hidden
    i = close;
  }
  return out;
}

// The template of `code` with every {name} replaced by that field's value.
inline std::string render(Code code, const Fields& fields) {
  return render_text(kTemplates[static_cast<size_t>(code)], fields);
}

// What every decoding or validation problem throws. what(): the rendered text, followed by
// " (at <where>)" when there is a where, as runtime_py's FormatError renders.
class ProgramError : public std::runtime_error {
 public:
  ProgramError(Code code, Fields fields, std::string where = "")
      : std::runtime_error(with_where(render(code, fields), where)),
        code(code),
        fields(std::move(fields)),
        where(std::move(where)) {}
  Code code;
  Fields fields;
  std::string where;

 private:
  static std::string with_where(const std::string& message, const std::string& where) {
    return where.empty() ? message : message + " (at " + where + ")";
  }
};

[[noreturn]] inline void fail(Code code, Fields fields, const std::string& where = "") {
  throw ProgramError(code, std::move(fields), where);
}

}  // namespace liteexport::demo_errors
