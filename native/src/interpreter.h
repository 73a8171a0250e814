// The lite interpreter's bytecode loop for the wrapper functions of a lowered module
// (semantics of torch/csrc/jit/mobile/interpreter.cpp, like runtime_py/interpreter.py).
#pragma once

#include <string>
#include <vector>

#include "bytecode.h"
#include "ivalue.h"

namespace liteexport {

// What the interpreter needs from the loaded module.
class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual IValue call_method(const IValue& obj, const std::string& name, std::vector<IValue>& args) = 0;
  virtual IValue create_object(const std::string& type_name) = 0;
};

// Runs `code` on `args` (self first) and returns its result. Errors: Format for an
// unsupported opcode or a function without RET; Execution for a failing instruction.
IValue run_code(const Code& code, std::vector<IValue> args, Runtime& runtime);

}  // namespace liteexport
