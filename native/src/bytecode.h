// Lite-interpreter opcodes (torch/csrc/jit/runtime/instruction.h, bytecode >= 8) and a
// Function ready to run: constants resolved to IValues.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ivalue.h"

namespace liteexport {

enum Opcode : int {
  OP = 0, OPN, LOAD, MOVE, STOREN, STORE, DROP, DROPR, LOADC, JF, JMP, LOOP, RET, WAIT, CALL, GUARD,
  TYPECHECK, FAIL_GUARD, PROFILE_OP, TAIL_CALL, INTERFACE_CALL, GET_ATTR, SET_ATTR, LIST_UNPACK,
  TUPLE_CONSTRUCT, NAMED_TUPLE_CONSTRUCT, LIST_CONSTRUCT, DICT_CONSTRUCT, CREATE_OBJECT, ISINSTANCE,
  TUPLE_SLICE, TUPLE_INDEX, RAISE_EXCEPTION, DICT_INDEX, UNCHECKED_CAST, IS, UN_INITIALIZED, ISNOT,
  FORMAT, DEVICE, DTYPE, DIM, NOT, TO_LIST, NUM_TO_TENSOR, IS_CUDA, FORK, WARN, ENTER, EXIT, AWAITABLE,
  NUM_OPCODES
};

// runtime_py's name of an opcode ("LOAD"), or "opcode N" for an unknown one.
std::string opcode_name(int op);

struct Instr {
  int op;
  int32_t x;
  uint16_t n;
};

struct Code {
  std::string qn;
  std::vector<Instr> instructions;
  std::vector<IValue> constants;
  std::vector<std::string> operators;  // "name" or "name.overload"
  std::vector<std::string> types;      // type annotations
  int32_t register_size = 0;
};

}  // namespace liteexport
