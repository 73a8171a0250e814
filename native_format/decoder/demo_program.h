// The one C++ decoder and validator of demo programs (schema/demo_program.fbs), shared by the
// native core (native/src/demo/plan.cpp) and the torch extension
// (liteexport/torch_backend/program_plan.h); header-only, since the torch extension is one
// translation unit built by load_inline.
//
// decode_program checks what runtime_py's program_codec.py and backends/demo/plan.py check -
// flatbuffer structure, format version, enums, each opcode's arity and attribute type (from the
// op spec, demo_ops_generated.h), attribute values, slot ranges, reads before writes, constants
// and outputs - and gives a Program whose slots are numbered densely, ready for an executor to
// bind kernels to. Every problem is a demo_errors::ProgramError (code + fields).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "demo_attr_rules.h"
#include "demo_attrs_generated.h"
#include "demo_dims.h"
#include "demo_error.h"
#include "demo_ops_generated.h"
#include "demo_program_generated.h"
#include "fb_vectors.h"
#include "flatbuffers/flatbuffers.h"

namespace liteexport::demo_program {

// READABLE_PROGRAM_VERSIONS: a version-1 program is a version-2 one whose slots are all float32;
// version 3 adds program state (bundle_format.program.STATE_FORMAT_VERSION)
constexpr uint32_t kFormatVersion = 3;
constexpr uint32_t kStateFormatVersion = 3;
constexpr uint32_t kOldestFormatVersion = 1;
constexpr const char* kReadableVersions = "1 or 2 or 3";
constexpr uint8_t kFloat32 = static_cast<uint8_t>(demo_ops::DType::Float32);

// ---------------------------------------------------------------------------------------------
// The decoded, validated program

struct Instruction {
  Op op;
  Attrs attrs;                 // the op's attribute type (defaults filled in when omitted)
  std::vector<uint32_t> reads;  // dense slots
  uint32_t write = 0;          // dense slot
  int64_t debug_handle = -1;
  std::string label;           // instruction_label(...), with the file's slot numbers
  size_t index = 0;            // its position in the program (profiles name instructions by it)
};

// What input `index` must look like, and whom to blame when it does not.
struct InputCheck {
  size_t index = 0;
  std::optional<std::vector<int64_t>> shape;  // nullopt: any rank; -1 entries: any size
  std::string blame;                          // label of the first instruction reading it, or "method 'm'"
  int64_t debug_handle = -1;                  // that instruction's handle, -1 if none reads it
  uint8_t dtype = kFloat32;                   // its demo_ops::DType (c10::ScalarType number)
};

// A tensor the loaded module keeps across calls (Program.states): the executor binds `slot` to the
// module's one copy of state `name`, shared by every method declaring it (runtime_py's ModuleState).
struct StateDecl {
  std::string name;
  uint32_t slot = 0;            // dense slot
  uint8_t dtype = kFloat32;     // its demo_ops::DType
  std::vector<int64_t> shape;
  int64_t initial = -1;         // weight index of its initial value; -1: zeros
};

struct Program {
  std::string method;
  // An executor holds one value per slot the program uses, not per declared slot: num_slots
  // is a uint32 from the file (4 billion empty slots would be 160 GB). Input i stays slot i;
  // the other slots are numbered densely in order of first use (messages keep the file's numbers).
  uint32_t num_slots = 0;
  std::vector<InputCheck> inputs;
  std::vector<std::pair<uint32_t, uint32_t>> constants;  // (dense slot, weight index)
  std::vector<Instruction> instructions;
  std::vector<std::pair<uint32_t, bool>> outputs;  // (dense slot, may view a weight: copy it)
  std::vector<uint8_t> slot_dtypes;                 // per dense slot: its demo_ops::DType
  NamedDims named_dims;                             // --dim S=1..128: checked on every call (dim_problem)
  uint64_t working_memory = 0;  // bytes of results planned at the named dims' upper bounds; 0: not planned
  std::vector<StateDecl> states;  // the module state it reads and writes (format version 3)
};

// The default: of a switch over one family of opcodes (the native core's make_binary, the torch
// extension's compare, ...), which names each member as a case: the executor routed `op` to a
// family that does not compute it. Our bug, never the program's, and never a kernel computing the
// family's last member instead.
[[noreturn]] inline void not_in_family(Op op, const char* family) {
  const OpInfo* info = demo_ops::op_info(static_cast<uint16_t>(op));
  throw std::logic_error(std::string("internal error: opcode ") + (info != nullptr ? info->name : "?") + " (" +
                         std::to_string(static_cast<int>(op)) + ") reached " + family + ", which does not compute it");
}

// The op spec's dtype rule (schema/demo_ops.toml `result`, bundle_format/dtype_rules.py) on one
// instruction: the result's DType, or an OPERAND_DTYPE error.
inline uint8_t result_dtype(Op op, const OpInfo& info, const Attrs& attrs, const std::vector<uint8_t>& operands,
                            const std::string& where) {
  int shared = -1;
  for (size_t i = 0; i < operands.size(); ++i) {
    const size_t named = std::min(i, info.num_named - 1);
    const uint16_t allowed = info.operand_dtypes[named];
    const uint8_t dtype = operands[i];
    const bool fits = dtype < 16 && ((allowed >> dtype) & 1u) != 0;
    if (!fits || (info.shared[named] && shared >= 0 && dtype != shared)) {
      std::string wanted;
      for (int code = 0; code < 16; ++code) {
        const bool ok = info.shared[named] && shared >= 0 ? code == shared : ((allowed >> code) & 1u) != 0;
        if (ok && demo_ops::dtype_name(code)) wanted += (wanted.empty() ? "" : " or ") + std::string(demo_ops::dtype_name(code));
      }
      const char* got = demo_ops::dtype_name(dtype);
      fail(Code::OPERAND_DTYPE,
           {{"index", std::to_string(i)}, {"name", demo_ops::operand_name(op, i)},
            {"got", got ? got : std::to_string(dtype)}, {"op", info.name}, {"allowed", wanted}},
           where);
    }
    if (info.shared[named] && shared < 0) shared = dtype;
  }
  switch (info.result) {
    case demo_ops::ResultRule::kFixed: return info.result_dtype;
    case demo_ops::ResultRule::kAttr: return static_cast<uint8_t>(std::get<CastAttrs>(attrs).dtype);
    case demo_ops::ResultRule::kWidenInt:
      if (shared == static_cast<int>(demo_ops::DType::Bool) || shared == static_cast<int>(demo_ops::DType::Int32))
        return static_cast<uint8_t>(demo_ops::DType::Int64);
      return static_cast<uint8_t>(shared);
    case demo_ops::ResultRule::kSame: break;
  }
  return static_cast<uint8_t>(shared);
}

namespace detail {

template <typename T>
std::vector<int64_t> ints(const flatbuffers::Vector<T>* v) {
  return read_vector<int64_t>(v);
}

// One field of `out` from table `t` (its default already in place), checked as it is read.
template <typename S>
void read_field(const flatbuffers::Table* t, const FieldOf<S>& f, S& out, const std::string& where) {
  const std::string at = where + "." + f.name;
  std::visit(
      [&](auto member) {
        auto& v = out.*member;
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          v = f.wire == Wire::I32 ? t->GetField<int32_t>(f.vt, static_cast<int32_t>(v)) : t->GetField<int64_t>(f.vt, v);
        } else if constexpr (std::is_same_v<T, double>) {
          v = t->GetField<double>(f.vt, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          v = t->GetField<uint8_t>(f.vt, v ? 1 : 0) != 0;
        } else if constexpr (std::is_same_v<T, Activation>) {
          const int raw = t->GetField<int8_t>(f.vt, static_cast<int8_t>(v));
          if (raw < 0 || raw > static_cast<int>(Activation::MAX))
            fail(Code::UNKNOWN_ENUM, {{"enum", "Activation"}, {"value", std::to_string(raw)}}, at);
          v = static_cast<Activation>(raw);
        } else if constexpr (std::is_same_v<T, Pair>) {
          auto values = ints(t->GetPointer<const flatbuffers::Vector<int32_t>*>(f.vt));
          if (values.size() != 2)
            fail(Code::PAIR_LENGTH, {{"field", f.name}, {"found", std::to_string(values.size())}}, at);
          v = {values[0], values[1]};
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          v = f.wire == Wire::I32s ? ints(t->GetPointer<const flatbuffers::Vector<int32_t>*>(f.vt))
                                   : ints(t->GetPointer<const flatbuffers::Vector<int64_t>*>(f.vt));
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          const bool has = t->GetField<uint8_t>(f.flag_vt, 0) != 0;
          if (!has && t->CheckField(f.vt))
            fail(Code::FIELD_WITHOUT_FLAG, {{"field", f.name}, {"flag", f.flag}}, at);
          if (has) v = t->GetField<double>(f.vt, 0.0);
        } else {  // std::optional<int64_t>: the wire value 0 means none
          const int32_t raw = t->GetField<int32_t>(f.vt, 0);
          if (raw != 0) v = raw;
        }
      },
      f.member);
}

// The attributes of union tag `tag` in table `t` (a known member, present).
template <size_t... I>
Attrs read_attrs(uint8_t tag, const flatbuffers::Table* t, const std::string& where, std::index_sequence<I...>) {
  Attrs attrs;
  auto read = [&](auto index) {
    constexpr size_t kTag = decltype(index)::value;
    if constexpr (kTag > 0) {
      using S = std::variant_alternative_t<kTag, Attrs>;
      if (kTag != tag) return;
      S out;
      for (const auto& field : Table<S>::fields) read_field(t, field, out, where);
      attrs = std::move(out);
    }
  };
  (read(std::integral_constant<size_t, I>{}), ...);
  return attrs;
}
inline Attrs read_attrs(const liteexport::demo::Instruction* ins, const std::string& where) {
  return read_attrs(static_cast<uint8_t>(ins->attributes_type()),
                    reinterpret_cast<const flatbuffers::Table*>(ins->attributes()), where,
                    std::make_index_sequence<std::variant_size_v<Attrs>>{});
}

// The decoder's own attribute rules (schema/demo_ops.toml rows with a code) broken by `attrs`.
inline void check_coded(Op op, const char* op_name, const Attrs& attrs, const std::string& where) {
  std::visit(
      [&](const auto& a) {
        using S = std::decay_t<decltype(a)>;
        if constexpr (!std::is_same_v<S, std::monostate>) {
          auto broken = first_broken(op, a, 0, true);
          if (!broken) return;
          const auto& field = Table<S>::fields[static_cast<size_t>(broken->first->field)];
          std::string found;
          for (const auto& [key, value] : broken->second)
            if (key == "found") found = value;
          fail(static_cast<Code>(broken->first->code), {{"op", op_name}, {"found", found}}, where + "." + field.name);
        }
      },
      attrs);
}

// The attributes of an op that may omit them: the alternative for union tag `tag`, every
// field at its default (monostate for tag 0).
template <size_t... I>
Attrs default_attrs(uint8_t tag, std::index_sequence<I...>) {
  Attrs attrs;
  ((I == tag ? (void)attrs.emplace<I>() : (void)0), ...);
  return attrs;
}
inline Attrs default_attrs(uint8_t tag) {
  return default_attrs(tag, std::make_index_sequence<std::variant_size_v<Attrs>>{});
}

// An instruction as read from the file, before the plan's checks.
struct Raw {
  Op op;
  const OpInfo* info;
  Attrs attrs;
  std::vector<int64_t> inputs, outputs;
  int64_t handle;
};

}  // namespace detail

// Decodes and validates the program in `data` against a weight list of `n_weights` entries.
// `weight_problem(i)` returns "" when weight i is a float32 tensor, the dtype's name when it is a
// tensor of another compiled dtype ("int64", "int32", "bool"), else what it is ("uint8", "int"),
// which is an error. `stored` names the bytes in errors about them as a whole (no
// identifier, corrupt). Throws demo_errors::ProgramError.
inline Program decode_program(const uint8_t* data, size_t size, size_t n_weights,
                              const std::function<std::string(size_t)>& weight_problem,
                              const std::string& stored = "Program") {
  namespace fb = liteexport::demo;
  using detail::ints;
  // flatbuffers reads int64/double fields in place: they need 8-byte alignment in memory
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0) {
    aligned.resize(size / 8 + 1);
    std::copy_n(data, size, reinterpret_cast<uint8_t*>(aligned.data()));
    data = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  if (size < 8 || !fb::ProgramBufferHasIdentifier(data))
    fail(Code::NOT_A_PROGRAM, {{"size", std::to_string(size)}}, stored);
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifyProgramBuffer(verifier)) fail(Code::CORRUPT_PROGRAM, {}, stored);
  const fb::Program* p = fb::GetProgram(data);

  // --- the codec's checks (bundle_format/program_codec.py), where: the table path ---
  if (p->format_version() < kOldestFormatVersion || p->format_version() > kFormatVersion)
    fail(Code::UNSUPPORTED_VERSION, {{"found", std::to_string(p->format_version())}, {"supported", kReadableVersions}},
         "Program.format_version");
  const auto outputs = ints(p->outputs());
  const auto output_handles = ints(p->output_debug_handles());
  if (outputs.size() != output_handles.size())
    fail(Code::OUTPUT_HANDLES,
         {{"outputs", std::to_string(outputs.size())}, {"handles", std::to_string(output_handles.size())}},
         "Program.output_debug_handles");
  if (p->method() == nullptr) fail(Code::MISSING_FIELD, {{"field", "method"}}, "Program");

  Program plan;
  plan.method = p->method()->str();
  const size_t n_inputs = p->inputs() ? p->inputs()->size() : 0;
  std::vector<std::optional<std::vector<int64_t>>> input_shapes;
  std::vector<uint8_t> input_dtypes;
  for (size_t i = 0; i < n_inputs; ++i) {
    auto info = p->inputs()->Get(i);
    const std::string at = "Program.inputs[" + std::to_string(i) + "]";
    if (!info->has_shape() && info->shape() != nullptr)
      fail(Code::FIELD_WITHOUT_FLAG, {{"field", "shape"}, {"flag", "has_shape"}}, at + ".shape");
    if (demo_ops::dtype_name(static_cast<int>(info->dtype())) == nullptr)
      fail(Code::UNKNOWN_ENUM, {{"enum", "DType"}, {"value", std::to_string(static_cast<int>(info->dtype()))}},
           at + ".dtype");
    input_dtypes.push_back(static_cast<uint8_t>(info->dtype()));
    input_shapes.push_back(info->has_shape() ? std::optional(ints(info->shape())) : std::nullopt);
  }
  std::vector<detail::Raw> raws;
  const size_t n_ins = p->instructions() ? p->instructions()->size() : 0;
  for (size_t i = 0; i < n_ins; ++i) {
    auto ins = p->instructions()->Get(i);
    const std::string at = "Program.instructions[" + std::to_string(i) + "]";
    const auto raw_op = static_cast<uint16_t>(ins->op());
    const OpInfo* info = demo_ops::op_info(raw_op);
    if (info == nullptr) fail(Code::UNKNOWN_ENUM, {{"enum", "OpCode"}, {"value", std::to_string(raw_op)}}, at + ".op");
    const auto tag = static_cast<uint8_t>(ins->attributes_type());
    Attrs attrs;
    auto wrong_type = [&](const char* found) {
      const std::string expected = info->attrs ? demo_ops::kAttributeNames[info->attrs] : "no attributes";
      fail(Code::ATTRIBUTE_TYPE, {{"op", info->name}, {"expected", expected}, {"found", found}},
           at + ".attributes_type");
    };
    if (tag == 0) {
      if (ins->attributes() != nullptr) fail(Code::ATTRIBUTES_WITHOUT_TYPE, {}, at + ".attributes");
      if (info->attrs != 0 && !info->attrs_optional) wrong_type("none");
      attrs = detail::default_attrs(info->attrs);
    } else {
      if (tag > demo_ops::kNumAttributeTypes)
        fail(Code::UNKNOWN_ATTRIBUTE_TYPE, {{"tag", std::to_string(tag)}}, at + ".attributes_type");
      if (tag != info->attrs) wrong_type(demo_ops::kAttributeNames[tag]);
      if (ins->attributes() == nullptr)
        fail(Code::ATTRIBUTES_MISSING, {{"table", fb::EnumNameAttributes(ins->attributes_type())}}, at + ".attributes");
      attrs = detail::read_attrs(ins, at + ".attributes");
      detail::check_coded(static_cast<Op>(raw_op), info->name, attrs, at + ".attributes");
    }
    raws.push_back({static_cast<Op>(raw_op), info, std::move(attrs), ints(ins->inputs()), ints(ins->outputs()),
                    ins->debug_handle()});
  }

  // --- the plan's checks (runtime_py/backends/demo/plan.py), where: the method and instruction ---
  const int64_t num_slots = p->num_slots();
  const std::string where = "demo program of method '" + plan.method + "'";
  if (static_cast<int64_t>(n_inputs) > num_slots)
    fail(Code::INPUTS_EXCEED_SLOTS, {{"inputs", std::to_string(n_inputs)}, {"num_slots", std::to_string(num_slots)}},
         where);
  // the dtype of every slot (absent: all float32)
  std::vector<uint8_t> file_dtypes;
  if (p->slot_dtypes() != nullptr) {
    if (static_cast<int64_t>(p->slot_dtypes()->size()) != num_slots)
      fail(Code::SLOT_DTYPES_LENGTH,
           {{"found", std::to_string(p->slot_dtypes()->size())}, {"num_slots", std::to_string(num_slots)}},
           "Program.slot_dtypes");
    for (auto d : *p->slot_dtypes()) {
      if (demo_ops::dtype_name(static_cast<int>(d)) == nullptr)
        fail(Code::UNKNOWN_ENUM, {{"enum", "DType"}, {"value", std::to_string(static_cast<int>(d))}},
             "Program.slot_dtypes");
      file_dtypes.push_back(static_cast<uint8_t>(d));
    }
  }
  auto slot_dtype = [&file_dtypes](int64_t slot) {
    return file_dtypes.empty() ? kFloat32 : file_dtypes[static_cast<size_t>(slot)];
  };
  for (size_t i = 0; i < n_inputs; ++i)
    if (input_dtypes[i] != slot_dtype(static_cast<int64_t>(i)))
      fail(Code::INPUT_DTYPE,
           {{"index", std::to_string(i)}, {"dtype", demo_ops::dtype_name(input_dtypes[i])},
            {"expected", demo_ops::dtype_name(slot_dtype(static_cast<int64_t>(i)))}},
           where);
  if (p->symbolic_dims() != nullptr)
    for (auto d : *p->symbolic_dims()) {
      if (d->name() == nullptr) fail(Code::MISSING_FIELD, {{"field", "name"}}, "Program.symbolic_dims");
      plan.named_dims.dims.push_back({d->name()->str(), d->min(), d->max()});
      check_dim_bounds(plan.named_dims.dims.back(), where);
    }
  for (size_t i = 0; i < n_inputs; ++i)
    add_dim_checks(plan.named_dims, i, input_shapes[i], ints(p->inputs()->Get(i)->dim_symbols()), where);
  plan.working_memory = p->working_memory();
  std::map<int64_t, uint32_t> dense;
  for (size_t i = 0; i < n_inputs; ++i) dense.emplace(static_cast<int64_t>(i), static_cast<uint32_t>(i));
  auto dense_slot = [&dense](int64_t slot) {
    return dense.emplace(slot, static_cast<uint32_t>(dense.size())).first->second;
  };
  std::set<int64_t> defined, views_of_weights;
  for (size_t i = 0; i < n_inputs; ++i) defined.insert(static_cast<int64_t>(i));
  const size_t n_constants = p->constants() ? p->constants()->size() : 0;
  for (size_t i = 0; i < n_constants; ++i) {
    auto c = p->constants()->Get(i);
    demo_errors::Fields fields{{"slot", std::to_string(c->slot())}, {"weight", std::to_string(c->weight())}};
    auto with = [&fields](const char* name, const std::string& value) {
      demo_errors::Fields out = fields;
      out.emplace_back(name, value);
      return out;
    };
    if (c->slot() >= num_slots) fail(Code::CONSTANT_SLOT_RANGE, with("num_slots", std::to_string(num_slots)), where);
    if (defined.count(c->slot())) fail(Code::CONSTANT_SLOT_TAKEN, fields, where);
    if (c->weight() >= n_weights) fail(Code::WEIGHT_INDEX_RANGE, with("weights", std::to_string(n_weights)), where);
    const std::string problem = weight_problem(c->weight());
    int weight_dtype = kFloat32;
    if (!problem.empty()) {
      weight_dtype = -1;
      for (int code = 0; code < 16 && weight_dtype < 0; ++code)
        if (demo_ops::dtype_name(code) && problem == demo_ops::dtype_name(code)) weight_dtype = code;
      if (weight_dtype < 0) fail(Code::WEIGHT_TYPE, with("got", problem), where);
    }
    if (weight_dtype != slot_dtype(c->slot())) {
      demo_errors::Fields typed = with("expected", demo_ops::dtype_name(slot_dtype(c->slot())));
      typed.emplace_back("got", demo_ops::dtype_name(weight_dtype));
      fail(Code::WEIGHT_DTYPE, typed, where);
    }
    plan.constants.emplace_back(dense_slot(c->slot()), c->weight());
    defined.insert(c->slot());
    views_of_weights.insert(c->slot());
  }
  // program state (runtime_py/backends/demo/state.py _declaration_problem, but the initial value's
  // dtype and shape: the executor checks them against its weights, state_initial_problem)
  const size_t n_states = p->states() ? p->states()->size() : 0;
  std::set<std::string> state_names;
  std::set<int64_t> state_slots;
  for (size_t i = 0; i < n_states; ++i) {
    auto st = p->states()->Get(i);
    const std::string path = "Program.states[" + std::to_string(i) + "]";
    if (st->name() == nullptr) fail(Code::MISSING_FIELD, {{"field", "name"}}, path);
    if (demo_ops::dtype_name(static_cast<int>(st->dtype())) == nullptr)
      fail(Code::UNKNOWN_ENUM, {{"enum", "DType"}, {"value", std::to_string(static_cast<int>(st->dtype()))}},
           path + ".dtype");
    StateDecl decl{st->name()->str(), 0, static_cast<uint8_t>(st->dtype()), ints(st->shape()), st->initial()};
    const int64_t slot = st->slot();
    auto problem = [&]() -> std::string {
      if (state_names.count(decl.name)) return "declared twice";
      if (p->format_version() < kStateFormatVersion)
        return "program format version " + std::to_string(p->format_version()) + " has no state (version 3 does)";
      if (slot < static_cast<int64_t>(n_inputs) || slot >= num_slots)
        return "slot " + std::to_string(slot) + " is not a free slot (inputs take 0.." +
               std::to_string(static_cast<int64_t>(n_inputs) - 1) + ", num_slots is " + std::to_string(num_slots) + ")";
      if (state_slots.count(slot) || defined.count(slot))
        return "slot " + std::to_string(slot) + " already holds a constant or another state";
      if (slot_dtype(slot) != decl.dtype)
        return std::string("is ") + demo_ops::dtype_name(decl.dtype) + " but slot " + std::to_string(slot) + " holds " +
               demo_ops::dtype_name(slot_dtype(slot));
      for (int64_t size : decl.shape)
        if (size < 0) return "shape " + tuple_text(decl.shape) + " has a negative size";
      if (decl.initial >= static_cast<int64_t>(n_weights))
        return "initial value is weight " + std::to_string(decl.initial) + ", but there are " +
               std::to_string(n_weights);
      for (size_t k = 0; k < raws.size(); ++k) {
        const auto& r = raws[k];
        const bool in_place = (r.op == Op::INDEX_COPY || r.op == Op::STATE_WRITE) && !r.inputs.empty() &&
                              r.inputs[0] == slot;
        for (int64_t written : r.outputs)
          if (written == slot && !in_place)
            return "instruction #" + std::to_string(k) + " writes its slot " + std::to_string(slot) +
                   " (only its in-place writes may)";
      }
      return "";
    }();
    if (!problem.empty()) fail(Code::STATE_DECLARATION, {{"name", decl.name}, {"problem", problem}}, where);
    state_names.insert(decl.name);
    state_slots.insert(slot);
    decl.slot = dense_slot(slot);
    // a method output must not alias a state (the next call changes it): copied, as a weight's view
    views_of_weights.insert(slot);
    plan.states.push_back(std::move(decl));
  }
  defined.insert(state_slots.begin(), state_slots.end());
  std::vector<std::optional<size_t>> first_reader(n_inputs);
  std::vector<bool> touched(n_inputs, false);
  for (size_t i = 0; i < raws.size(); ++i) {
    detail::Raw& r = raws[i];
    Instruction out;
    out.label = instruction_label(i, r.info->name, r.inputs, r.outputs);
    out.index = i;
    const std::string at = where + ", " + out.label;
    const size_t n = r.inputs.size();
    if (n < r.info->min_inputs || n > r.info->max_inputs) {
      const OpInfo& s = *r.info;
      std::string expected = s.max_inputs == demo_ops::kAnyNumber ? "at least " + count_text(s.min_inputs)
                             : s.min_inputs == s.max_inputs
                                 ? count_text(s.min_inputs)
                                 : std::to_string(s.min_inputs) + " to " + std::to_string(s.max_inputs) + " inputs";
      fail(Code::ARITY, {{"expected", expected}, {"got", std::to_string(n)}}, at);
    }
    if (r.outputs.size() != 1) fail(Code::OUTPUT_COUNT, {{"got", std::to_string(r.outputs.size())}}, at);
    const std::string problem = attribute_problem(r.op, r.attrs, n);
    if (!problem.empty()) fail(Code::INVALID_ATTRIBUTES, {{"problem", problem}}, at);
    for (const auto* slots : {&r.inputs, &r.outputs})
      for (int64_t slot : *slots)
        if (slot >= num_slots)
          fail(Code::SLOT_RANGE, {{"slot", std::to_string(slot)}, {"num_slots", std::to_string(num_slots)}}, at);
    bool reads_weight_view = false;
    for (int64_t slot : r.inputs) {
      if (!defined.count(slot)) fail(Code::READ_BEFORE_WRITE, {{"slot", std::to_string(slot)}}, at);
      reads_weight_view = reads_weight_view || views_of_weights.count(slot);
      if (static_cast<size_t>(slot) < n_inputs && !touched[static_cast<size_t>(slot)]) {
        touched[static_cast<size_t>(slot)] = true;
        first_reader[static_cast<size_t>(slot)] = i;
      }
    }
    const int64_t written = r.outputs[0];
    std::vector<uint8_t> operand_dtypes;
    for (int64_t slot : r.inputs) operand_dtypes.push_back(slot_dtype(slot));
    const uint8_t result = result_dtype(r.op, *r.info, r.attrs, operand_dtypes, at);
    if (result != slot_dtype(written))
      fail(Code::RESULT_DTYPE,
           {{"result", demo_ops::dtype_name(result)}, {"slot", std::to_string(written)},
            {"expected", demo_ops::dtype_name(slot_dtype(written))}},
           at);
    defined.insert(written);
    // later reads of a rewritten input slot see another value
    if (static_cast<size_t>(written) < n_inputs) touched[static_cast<size_t>(written)] = true;
    // a slot holds a view of a weight if a view-returning op read one (slots can be rewritten)
    if (r.info->may_alias_input && reads_weight_view) {
      views_of_weights.insert(written);
    } else {
      views_of_weights.erase(written);
    }
    out.op = r.op;
    out.attrs = std::move(r.attrs);
    for (int64_t slot : r.inputs) out.reads.push_back(dense_slot(slot));
    out.write = dense_slot(written);
    out.debug_handle = r.handle;
    plan.instructions.push_back(std::move(out));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    demo_errors::Fields fields{{"position", std::to_string(k)}, {"slot", std::to_string(outputs[k])}};
    if (outputs[k] >= num_slots) fail(Code::OUTPUT_SLOT_RANGE, fields, where);
    if (!defined.count(outputs[k])) fail(Code::OUTPUT_NEVER_WRITTEN, fields, where);
    plan.outputs.emplace_back(dense_slot(outputs[k]), views_of_weights.count(outputs[k]) > 0);
  }
  plan.num_slots = static_cast<uint32_t>(dense.size());
  plan.slot_dtypes.assign(dense.size(), kFloat32);
  for (const auto& [slot, at] : dense) plan.slot_dtypes[at] = slot_dtype(slot);
  for (size_t i = 0; i < n_inputs; ++i) {
    const auto& reader = first_reader[i];
    plan.inputs.push_back({i, input_shapes[i],
                           reader ? plan.instructions[*reader].label : "method '" + plan.method + "'",
                           reader ? plan.instructions[*reader].debug_handle : -1, input_dtypes[i]});
  }
  return plan;
}

// The initial value of a state against the weight it names (runtime_py's text): "" when it fits.
// `weight_dtype` and `weight_shape` describe the weight as the executor holds it (float16 and
// qint8 weights widened to float32).
inline std::string state_initial_problem(const StateDecl& state, const std::string& weight_dtype,
                                         const std::vector<int64_t>& weight_shape) {
  const std::string wanted = demo_ops::dtype_name(state.dtype);
  if (weight_dtype == wanted && weight_shape == state.shape) return "";
  return "initial value (weight " + std::to_string(state.initial) + ") is " + weight_dtype + " " +
         tuple_text(weight_shape) + ", not " + wanted + " " + tuple_text(state.shape);
}

}  // namespace liteexport::demo_program
