// The row types of the generated attribute tables (native_format/generated/demo_attrs_generated.h,
// from schema/demo_ops.toml): how a field sits in the flatbuffer and which struct member it
// fills, and one constraint. demo_program.h interprets them, one loop for reading and one for
// checking; bundle_format/attr_rows.py holds the same rows for Python.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "demo_errors_generated.h"
#include "demo_ops_generated.h"
#include "demo_program_generated.h"

namespace liteexport::demo_attrs {

using Activation = liteexport::demo::Activation;
using Pair = std::array<int64_t, 2>;
using demo_errors::Code;

// How a field sits in the flatbuffer (the kinds of schema/demo_ops.toml's field types).
enum class Wire : uint8_t { I32, I64, F64, Bool, Enum, Pair, I32s, I64s, OptF64, OptI32 };

// The struct member a field fills: one alternative per C++ member type the spec's types map to.
template <typename S>
using Member = std::variant<int64_t S::*, double S::*, bool S::*, Activation S::*, Pair S::*,
                            std::vector<int64_t> S::*, std::optional<double> S::*, std::optional<int64_t> S::*>;

template <typename S>
struct FieldOf {
  const char* name;
  Wire wire;
  uint16_t vt;       // vtable offset (4 + 2 * field id)
  uint16_t flag_vt;  // OptF64: its presence field's vtable offset
  const char* flag;  // OptF64: its presence field's name
  Member<S> member;
};

// schema/demo_ops.toml's constraint checks and named rules (scripts/demo_attrs_codegen.py CHECKS, RULES)
enum class Check : uint8_t { Min, Equals, Length, MaxCount, Distinct, AnyPresent, Rule };
enum class NamedRule : uint8_t { None, PaddingAtMostHalfKernel, ScalarIffOneInput, Permutation, KnownDtype, QuantizeRange, FillSizes };
constexpr size_t kOpWords = (demo_ops::kNumOps + 63) / 64;
constexpr int kNoCode = -1;

struct Rule {
  Check check;
  int field, field2;  // indexes into Table<S>::fields; -1: none
  double value;
  int64_t other;  // Min: the excepted value; MaxCount: the value counted
  bool has_other;
  std::array<uint64_t, kOpWords> ops;  // opcode bit set; all zero: every op carrying the table
  const char* text;  // INVALID_ATTRIBUTES problem template ({field}, {got}), or nullptr
  int code;          // or: the demo_errors code the decoder raises (fields op, found)
  NamedRule rule;
  bool applies(uint16_t op) const {
    bool any = false;
    for (uint64_t w : ops) any = any || w != 0;
    return !any || ((ops[op / 64] >> (op % 64)) & 1u) != 0;
  }
};

// Specialized per attribute struct by the generated header: name, fields, rules.
template <typename S>
struct Table;

}  // namespace liteexport::demo_attrs
