// See delegate_trace.h. Each function mirrors the runtime_py function of the same name.
#include "delegate_trace.h"

#include <algorithm>
#include <regex>

namespace liteexport {

namespace {

const char* const kRootFunction = "<unknown>";
const char* const kSource = "<string>";  // what torch names the source of code it generates
constexpr size_t kContextLines = 3;      // TorchScript's SourceRange::CONTEXT

constexpr size_t npos = std::string::npos;

// Python's text[a:b] for 0 <= a, b.
std::string slice(const std::string& text, size_t a, size_t b) {
  b = std::min(b, text.size());
  return a < b ? text.substr(a, b - a) : std::string();
}

// Python's text.rfind("\n", 0, end): the last newline before `end`, or npos.
size_t newline_before(const std::string& text, size_t end) {
  return end == 0 ? npos : text.rfind('\n', end - 1);
}

std::string drop_final_newline(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// runtime_py.source_range.format_source_range (line_offset 0, TorchScript's context).
std::string format_source_range(const std::string& file, const std::string& text, size_t start, size_t end,
                                const std::string& function) {
  const size_t size = text.size();
  start = std::min(start, size);
  const size_t range_end = std::max(start, std::min(end, size));
  if (range_end - start == size) return drop_final_newline(text);
  const size_t first_line = static_cast<size_t>(std::count(text.begin(), text.begin() + start, '\n'));
  std::string out = "  File \"" + file + "\", line " + std::to_string(first_line + 1);
  if (!function.empty()) out += ", in " + function;
  out += "\n";

  size_t begin_line = newline_before(text, start);
  begin_line = begin_line == npos ? 0 : begin_line + 1;
  size_t end_line = text.find('\n', range_end);
  end_line = end_line == npos ? size : end_line;
  size_t begin_context = begin_line, end_context = end_line;
  bool before_start = false;  // Python's begin_context of -1
  for (size_t i = 0; i < kContextLines; ++i) {
    begin_context = newline_before(text, begin_context);
    if (begin_context == npos) {
      before_start = true;
      break;
    }
  }
  begin_context = before_start ? 0 : begin_context + 1;
  end_context -= 1;  // end_line >= 1 here unless the text starts with the range's line end
  for (size_t i = 0; i < kContextLines; ++i) {
    end_context = text.find('\n', end_context + 1);
    if (end_context == npos) {
      end_context = size;
      break;
    }
  }

  out += slice(text, begin_context, start);
  size_t line_start = start, line_end = start;
  while (line_start < range_end) {
    line_end = text.find('\n', line_end);
    line_end = line_end == npos ? size : line_end;
    std::string actual = slice(text, line_start, line_end + 1);
    out += actual.empty() || actual.back() != '\n' ? actual + "\n" : actual;
    size_t hl_begin = newline_before(text, line_start);
    hl_begin = hl_begin == npos ? 0 : hl_begin + 1;
    const size_t hl_end = std::min(line_end, range_end);
    const size_t lead = std::min(std::max(hl_begin, start), hl_end);
    size_t blanks = 0;
    while (lead + blanks < hl_end && text[lead + blanks] == ' ') ++blanks;
    const size_t empty = lead - hl_begin + blanks;
    if (hl_end > hl_begin + empty) {
      // Trailing blank lines inside the range get neither a marker nor the HERE.
      const std::string after = slice(text, line_end, std::min(range_end + 1, size));
      const bool more = after.find_first_not_of("\n ") != npos;
      const char* tail = more && line_end != range_end ? "\n" : " <--- HERE\n";
      out += std::string(empty, ' ') + std::string(hl_end - hl_begin - empty, '~') + tail;
    }
    line_end += 1;
    line_start = line_end;
  }
  if (line_end <= size) out += slice(text, line_end, end_context);
  return drop_final_newline(out);
}

// runtime_py.source_range.format_frame.
std::string format_frame(const std::string& function, const std::string& snippet) {
  if (snippet.rfind("  File \"", 0) != 0) return snippet;
  const size_t nl = snippet.find('\n');
  if (nl == npos) return snippet + ", in " + function;
  const std::string body = snippet.substr(nl + 1);
  return snippet.substr(0, nl) + ", in " + function + (body.empty() ? "" : "\n" + body);
}

// The frame of `source` highlighting its first occurrence of `call`.
std::string generated_frame(const std::string& source, const std::string& call, const std::string& function) {
  const size_t at = source.find(call);
  return format_source_range(kSource, source, at, at + call.size(), function);
}

std::vector<std::string> wrapper_frames(const WrapperSignature& signature) {
  const std::string& method = signature.method;
  std::string defs, names, typed;
  for (const auto& [name, annotation] : signature.arguments) {
    defs += ", " + name + ": " + annotation;
    names += (names.empty() ? "" : ", ") + name;
    typed += name + ", ";
  }
  const std::string wrapper = "\n            def " + method + "(self" + defs + "):\n" +
                              "                return self.__loweredModule__." + method + "(" + names +
                              ")\n            ";
  std::string outputs, refine;
  for (int i = 0; i < std::max(signature.tuple_outputs, 1); ++i) {
    const std::string out = "_" + std::to_string(i);
    outputs += (i ? ", " : "") + out;
    refine += "                  assert isinstance(" + out + ", Tensor)\n";
  }
  const std::string lowered =
      "\n            def " + method + "(self" + defs + "):\n" + "                typed_inputs: List[Any] = [" + typed +
      "]\n" + "                if self.__backend.is_available() :\n" + "                  " + outputs +
      ", = self.__backend.execute(self.__handles[\"" + method + "\"], typed_inputs)\n" + refine +
      "                  return " + outputs + "\n" + "                else:\n" +
      "                  raise Exception(\"Backend is not available.\")\n            ";
  return {generated_frame(wrapper, "self.__loweredModule__." + method, kRootFunction),
          generated_frame(lowered, "self.__backend.execute", method)};
}

// Entries read from torch's debug info carry torch's levels ("::"); liteexport's compiler
// writes "top(M).sub(Sub)".
bool from_torch(const DebugEntry& entry) {
  return entry.module_hierarchy.find("::") != npos || entry.method == kRootFunction;
}

std::string top(const DebugEntry& entry) {
  const std::string first = entry.module_hierarchy.substr(0, entry.module_hierarchy.find("::"));
  return first.substr(0, first.find('.'));
}

// Python's top[len("top("):-1]: the root's type.
std::string top_type(const std::string& top_level) {
  return top_level.size() > 5 ? top_level.substr(4, top_level.size() - 5) : std::string();
}

std::string torch_levels(const DebugEntry& entry) {
  const std::string marker = std::string("::") + kRootFunction;
  const size_t at = entry.module_hierarchy.find(marker);
  const std::string rest = at == npos ? "" : entry.module_hierarchy.substr(at + marker.size());
  return rest.empty() ? "" : rest + "::" + entry.method;
}

// The text a snippet underlines (its first underlined line).
std::string highlighted(const std::string& snippet) {
  static const std::regex marker("^ *~+(?: <--- HERE)?$");
  std::vector<std::string> lines;
  for (size_t begin = 0;;) {
    const size_t nl = snippet.find('\n', begin);
    lines.push_back(snippet.substr(begin, nl == npos ? npos : nl - begin));
    if (nl == npos) break;
    begin = nl + 1;
  }
  for (size_t i = 1; i < lines.size(); ++i)
    if (std::regex_match(lines[i], marker)) {
      const size_t start = lines[i].find_first_not_of(' ');
      const auto width = static_cast<size_t>(std::count(lines[i].begin(), lines[i].end(), '~'));
      return start < lines[i - 1].size() ? lines[i - 1].substr(start, width) : std::string();
    }
  return "";
}

// Levels and frames of an entry liteexport's compiler wrote, in torch's naming (the rules are
// explained at runtime_py.delegate_trace._compiler_levels).
std::string compiler_levels(const DebugEntry& entry, std::vector<SourceFrame>& frames) {
  static const std::regex level(R"(\.([^.()]+)\(([^()]*)\))");
  const std::string top_level = top(entry);
  const std::string below = entry.module_hierarchy.substr(top_level.size());
  std::vector<std::pair<std::string, std::string>> levels;
  for (std::sregex_iterator it(below.begin(), below.end(), level), end; it != end; ++it)
    levels.emplace_back((*it)[1].str(), (*it)[2].str());
  std::string current_type = top_type(top_level);
  frames = entry.frames;
  std::string text;
  size_t used = 0;
  for (size_t i = 0; i + 1 < frames.size(); ++i) {  // each call site and its callee
    const std::string& callee = frames[i + 1].function;
    if (highlighted(frames[i].snippet) == "self." + callee) {
      text += ".SELF(" + current_type + ")::" + callee;
    } else if (used < levels.size()) {
      current_type = levels[used].second;
      text += "." + levels[used].first + "(" + current_type + ")::" + callee;
      ++used;
    } else {
      text += ".UNKNOWN_INSTANCE(UNKNOWN_TYPE)::" + callee;
    }
  }
  for (; used < levels.size(); ++used)
    text += "." + levels[used].first + "(" + levels[used].second + ")::" + entry.method;
  if (!frames.empty()) frames[0].function = kRootFunction;
  return text;
}

// runtime_py.delegate_trace.torch_style_trace: entries outermost first, the last failed.
std::string torch_style_trace(const std::vector<const DebugEntry*>& entries, const WrapperSignature* wrapper) {
  const DebugEntry& innermost = *entries.back();
  std::string hierarchy = top(*entries.front()) + "::" + kRootFunction;
  std::vector<std::string> rendered;
  if (wrapper != nullptr && !from_torch(innermost)) {
    hierarchy += ".__loweredModule__(" + top_type(top(innermost)) + ")::" + wrapper->method;
    rendered = wrapper_frames(*wrapper);
  }
  for (const DebugEntry* entry : entries) {
    std::vector<SourceFrame> frames;
    if (from_torch(*entry)) {
      hierarchy += torch_levels(*entry);
      frames = entry->frames;
    } else {
      hierarchy += compiler_levels(*entry, frames);
    }
    for (const SourceFrame& frame : frames) rendered.push_back(format_frame(frame.function, frame.snippet));
  }
  std::string out = "Module hierarchy:" + hierarchy + "." + innermost.node_kind +
                    "\nTraceback of TorchScript (most recent call last):";
  for (const std::string& line : rendered) out += "\n" + line;
  return out;
}

}  // namespace

std::string source_mapped_message(const std::string& message, int64_t handle, const DebugTable* table,
                                  const std::string& method, const WrapperSignature* wrapper) {
  const DebugEntry* innermost = table != nullptr && handle >= 0 ? table->lookup(handle) : nullptr;
  if (innermost == nullptr) return method + ": " + message;
  // The core's interpreter does not stack the handles of the bytecode frames an error leaves
  // (runtime_py's outer_handles): liteexport's tables hold only the compiled programs' nodes,
  // which those frames never are, so the stack is the failing node's entry alone.
  return message + "\n" + torch_style_trace({innermost}, wrapper);
}

}  // namespace liteexport
