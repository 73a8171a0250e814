// The one C++ decoder and validator of demo programs (schema/demo_program.fbs), shared by the
// Android native core (android_sample/native/src/demo/plan.cpp) and the torch extension
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
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "demo_error.h"
#include "demo_ops_generated.h"
#include "demo_program_generated.h"
#include "fb_vectors.h"
#include "flatbuffers/flatbuffers.h"

namespace liteexport::demo_program {

using demo_errors::Code;
using demo_errors::fail;
using demo_errors::list_text;
using demo_errors::tuple_text;
using demo_ops::Op;
using demo_ops::OpInfo;

constexpr uint32_t kFormatVersion = 1;  // runtime_py.format.program.PROGRAM_FORMAT_VERSION

// ---------------------------------------------------------------------------------------------
// Decoded attributes. The variant's index is the fbs union tag (Binary = 1 ... Slice = 13).

using Pair = std::array<int64_t, 2>;

struct BinaryAttrs {
  double alpha = 1.0;
  std::optional<double> scalar;
  bool reverse = false;
};
struct GeluAttrs {
  bool tanh_approximation = false;
};
struct AxisAttrs {
  int64_t axis = 0;
};
struct FusedAttrs {
  bool relu = false;
};
struct Conv2dAttrs {
  Pair stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  bool relu = false;
};
struct LayerNormAttrs {
  int64_t normalized_ndim = 0;
  double eps = 0;
};
struct Pool2dAttrs {
  Pair kernel{}, stride{}, padding{0, 0}, dilation{1, 1};
  bool ceil_mode = false, count_include_pad = true;
  int64_t divisor_override = 0;  // 0 = none
};
struct ShapeAttrs {
  std::vector<int64_t> dims;
};
struct PermuteAttrs {
  std::vector<int64_t> perm;
};
struct FlattenAttrs {
  int64_t start_dim = 0, end_dim = 0;
};
struct ClampAttrs {
  std::optional<double> min, max;  // nullopt: no bound
};
struct ReduceAttrs {
  std::vector<int64_t> axes;  // empty: every axis
  bool keepdim = false;
};
struct SliceAttrs {
  int64_t axis = 0, start = 0, end = INT64_MAX, step = 1;
};

using Attrs = std::variant<std::monostate, BinaryAttrs, GeluAttrs, AxisAttrs, FusedAttrs, Conv2dAttrs,
                           LayerNormAttrs, Pool2dAttrs, ShapeAttrs, PermuteAttrs, FlattenAttrs, ClampAttrs,
                           ReduceAttrs, SliceAttrs>;
static_assert(std::variant_size_v<Attrs> == demo_ops::kNumAttributeTypes + 1,
              "one Attrs alternative per Attributes union member (schema/demo_ops.toml [attributes])");

// ---------------------------------------------------------------------------------------------
// Text of values in messages, as Python prints them

// Python's repr of a float: the shortest text that reads back the same value, "2.0" not "2".
inline std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// "1 input", "2 inputs"
inline std::string count_text(size_t n) { return std::to_string(n) + (n == 1 ? " input" : " inputs"); }

// "instruction #7 LINEAR (slots [3, 4, 5] -> [6])": how errors name an instruction
inline std::string instruction_label(size_t index, const std::string& op_name, const std::vector<int64_t>& inputs,
                                     const std::vector<int64_t>& outputs) {
  return "instruction #" + std::to_string(index) + " " + op_name + " (slots " + list_text(inputs) + " -> " +
         list_text(outputs) + ")";
}

// ---------------------------------------------------------------------------------------------
// Attribute values each op accepts (runtime_py's kernel factories raise the same ValueErrors)

namespace detail {

inline std::string window_problem(const Pair* kernel, const Pair& stride, const Pair& padding, const Pair& dilation) {
  auto positive = [](const char* name, const Pair& p) -> std::string {
    return std::min(p[0], p[1]) < 1 ? std::string(name) + " must be positive, got " + tuple_text(p) : "";
  };
  std::string problem = kernel ? positive("kernel", *kernel) : "";
  if (problem.empty()) problem = positive("stride", stride);
  if (problem.empty() && std::min(padding[0], padding[1]) < 0)
    problem = "padding must be non-negative, got " + tuple_text(padding);
  if (problem.empty()) problem = positive("dilation", dilation);
  return problem;
}

inline std::string pool_problem(const Pool2dAttrs& a, bool avg) {
  std::string problem = window_problem(&a.kernel, a.stride, a.padding, a.dilation);
  if (!problem.empty()) return problem;
  if (a.padding[0] > a.kernel[0] / 2 || a.padding[1] > a.kernel[1] / 2)  // torch's rule, on the undilated kernel
    return "padding " + tuple_text(a.padding) + " should be at most half of the kernel size " + tuple_text(a.kernel);
  if (avg && a.dilation != Pair{1, 1}) return "avg_pool2d has no dilation, got " + tuple_text(a.dilation);
  if (avg && a.divisor_override < 0)
    return "divisor_override must be positive, got " + std::to_string(a.divisor_override);
  return "";
}

}  // namespace detail

// Why `op` cannot run with these attributes and `n_inputs` operands ("" when it can).
inline std::string attribute_problem(Op op, const Attrs& attrs, size_t n_inputs) {
  if (const auto* a = std::get_if<BinaryAttrs>(&attrs)) {
    if ((op == Op::MUL || op == Op::DIV || op == Op::POW) && a->alpha != 1.0)
      return "alpha=" + float_text(a->alpha) + " is only allowed for ADD and SUB";
    if ((n_inputs == 1) != a->scalar.has_value()) return "a scalar operand is needed with exactly one input, and only then";
  } else if (const auto* a = std::get_if<Conv2dAttrs>(&attrs)) {
    std::string problem = detail::window_problem(nullptr, a->stride, a->padding, a->dilation);
    if (!problem.empty()) return problem;
    if (a->groups < 1) return "groups must be positive, got " + std::to_string(a->groups);
  } else if (const auto* a = std::get_if<LayerNormAttrs>(&attrs)) {
    if (a->normalized_ndim < 1) return "normalized_ndim must be positive, got " + std::to_string(a->normalized_ndim);
  } else if (const auto* a = std::get_if<Pool2dAttrs>(&attrs)) {
    return detail::pool_problem(*a, op == Op::AVG_POOL2D);
  } else if (const auto* a = std::get_if<ClampAttrs>(&attrs)) {
    if (!a->min && !a->max) return "clamp needs at least one of min and max";
  } else if (const auto* a = std::get_if<ReduceAttrs>(&attrs)) {
    std::vector<int64_t> sorted = a->axes;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return "axes " + tuple_text(a->axes) + " repeat an axis";
  } else if (const auto* a = std::get_if<SliceAttrs>(&attrs)) {
    if (a->step < 1) return "step must be positive, got " + std::to_string(a->step);
  } else if (const auto* a = std::get_if<ShapeAttrs>(&attrs)) {
    const auto& d = a->dims;
    if (op == Op::EXPAND && std::any_of(d.begin(), d.end(), [](int64_t x) { return x < -1; }))
      return "shape " + tuple_text(d) + " may hold -1 and otherwise sizes >= 0";
    if (op == Op::ADAPTIVE_AVG_POOL2D && (d.size() != 2 || (d[0] < 1 && d[0] != -1) || (d[1] < 1 && d[1] != -1)))
      return "output size must be 2 positive sizes (or -1), got " + tuple_text(d);
    if (op == Op::RESHAPE && (std::count(d.begin(), d.end(), -1) > 1 ||
                              std::any_of(d.begin(), d.end(), [](int64_t x) { return x < -1; })))
      return "shape " + tuple_text(d) + " may hold one -1 and otherwise sizes >= 0";
  } else if (const auto* a = std::get_if<PermuteAttrs>(&attrs)) {
    std::vector<int64_t> sorted = a->perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != static_cast<int64_t>(i))
        return tuple_text(a->perm) + " is not a permutation of the axes 0.." + std::to_string(a->perm.size() - 1);
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// The decoded, validated program

struct Instruction {
  Op op;
  Attrs attrs;                 // the op's attribute type (defaults filled in when omitted)
  std::vector<uint32_t> reads;  // dense slots
  uint32_t write = 0;          // dense slot
  int64_t debug_handle = -1;
  std::string label;           // instruction_label(...), with the file's slot numbers
};

// What input `index` must look like, and whom to blame when it does not.
struct InputCheck {
  size_t index = 0;
  std::optional<std::vector<int64_t>> shape;  // nullopt: any rank; -1 entries: any size
  std::string blame;                          // label of the first instruction reading it, or "method 'm'"
  int64_t debug_handle = -1;                  // that instruction's handle, -1 if none reads it
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
};

namespace detail {

// Presence of a scalar field (the generated accessors return its default when absent; the
// generated tables inherit flatbuffers::Table privately).
template <typename T>
bool has_field(const T* table, flatbuffers::voffset_t field) {
  return reinterpret_cast<const flatbuffers::Table*>(table)->CheckField(field);
}

template <typename T>
std::vector<int64_t> ints(const flatbuffers::Vector<T>* v) {
  return read_vector<int64_t>(v);
}

inline Pair pair_at(const flatbuffers::Vector<int32_t>* v, const char* name, const std::string& where) {
  auto values = ints(v);
  if (values.size() != 2)
    fail(Code::PAIR_LENGTH, {{"field", name}, {"found", std::to_string(values.size())}}, where + "." + name);
  return {values[0], values[1]};
}

inline bool relu_of(liteexport::demo::Activation a, const std::string& where) {
  if (static_cast<int>(a) > static_cast<int>(liteexport::demo::Activation::MAX))
    fail(Code::UNKNOWN_ENUM, {{"enum", "Activation"}, {"value", std::to_string(static_cast<int>(a))}},
         where + ".activation");
  return a == liteexport::demo::Activation::Relu;
}

// The attributes of `ins` (its tag is a known union member, its table present).
inline Attrs read_attrs(const liteexport::demo::Instruction* ins, const std::string& where) {
  namespace fb = liteexport::demo;
  switch (ins->attributes_type()) {
    case fb::Attributes::Binary: {
      auto r = ins->attributes_as_Binary();
      if (!r->has_scalar() && has_field(r, fb::Binary::VT_SCALAR))
        fail(Code::FIELD_WITHOUT_FLAG, {{"field", "scalar"}, {"flag", "has_scalar"}}, where + ".scalar");
      BinaryAttrs a{r->alpha(), std::nullopt, r->reverse()};
      if (r->has_scalar()) a.scalar = r->scalar();
      return a;
    }
    case fb::Attributes::Gelu: return GeluAttrs{ins->attributes_as_Gelu()->tanh_approximation()};
    case fb::Attributes::Axis: return AxisAttrs{ins->attributes_as_Axis()->axis()};
    case fb::Attributes::Fused: return FusedAttrs{relu_of(ins->attributes_as_Fused()->activation(), where)};
    case fb::Attributes::Conv2d: {
      auto r = ins->attributes_as_Conv2d();
      return Conv2dAttrs{pair_at(r->stride(), "stride", where), pair_at(r->padding(), "padding", where),
                         pair_at(r->dilation(), "dilation", where), r->groups(), relu_of(r->activation(), where)};
    }
    case fb::Attributes::LayerNorm: {
      auto r = ins->attributes_as_LayerNorm();
      return LayerNormAttrs{r->normalized_ndim(), r->eps()};
    }
    case fb::Attributes::Pool2d: {
      auto r = ins->attributes_as_Pool2d();
      return Pool2dAttrs{pair_at(r->kernel(), "kernel", where), pair_at(r->stride(), "stride", where),
                         pair_at(r->padding(), "padding", where), pair_at(r->dilation(), "dilation", where),
                         r->ceil_mode(), r->count_include_pad(), r->divisor_override()};
    }
    case fb::Attributes::Shape: return ShapeAttrs{ints(ins->attributes_as_Shape()->dims())};
    case fb::Attributes::Permute: return PermuteAttrs{ints(ins->attributes_as_Permute()->perm())};
    case fb::Attributes::Flatten: {
      auto r = ins->attributes_as_Flatten();
      return FlattenAttrs{r->start_dim(), r->end_dim()};
    }
    case fb::Attributes::Clamp: {
      auto r = ins->attributes_as_Clamp();
      auto bound = [&](bool present, flatbuffers::voffset_t field, double value, const char* name) {
        if (!present && has_field(r, field))
          fail(Code::FIELD_WITHOUT_FLAG, {{"field", name}, {"flag", std::string("has_") + name}},
               where + "." + name);
        return present ? std::optional<double>(value) : std::nullopt;
      };
      return ClampAttrs{bound(r->has_min(), fb::Clamp::VT_MIN, r->min(), "min"),
                        bound(r->has_max(), fb::Clamp::VT_MAX, r->max(), "max")};
    }
    case fb::Attributes::Reduce: {
      auto r = ins->attributes_as_Reduce();
      return ReduceAttrs{ints(r->axes()), r->keepdim()};
    }
    case fb::Attributes::Slice: {
      auto r = ins->attributes_as_Slice();
      return SliceAttrs{r->axis(), r->start(), r->end(), r->step()};
    }
    case fb::Attributes::NONE: break;
  }
  return std::monostate{};
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
// `weight_problem(i)` returns "" when weight i can be used (a float32 tensor), else what it
// is ("uint8", "int"). `stored` names the bytes in errors about them as a whole (no
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

  // --- the codec's checks (runtime_py/format/program_codec.py), where: the table path ---
  if (p->format_version() != kFormatVersion)
    fail(Code::UNSUPPORTED_VERSION,
         {{"found", std::to_string(p->format_version())}, {"supported", std::to_string(kFormatVersion)}},
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
  for (size_t i = 0; i < n_inputs; ++i) {
    auto info = p->inputs()->Get(i);
    const std::string at = "Program.inputs[" + std::to_string(i) + "]";
    if (!info->has_shape() && info->shape() != nullptr)
      fail(Code::FIELD_WITHOUT_FLAG, {{"field", "shape"}, {"flag", "has_shape"}}, at + ".shape");
    if (info->dtype() != fb::DType::Float32)
      fail(Code::UNKNOWN_ENUM, {{"enum", "DType"}, {"value", std::to_string(static_cast<int>(info->dtype()))}},
           at + ".dtype");
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
      const auto* shape = std::get_if<ShapeAttrs>(&attrs);
      if (shape && static_cast<Op>(raw_op) == Op::ADAPTIVE_AVG_POOL2D && shape->dims.size() != 2)
        fail(Code::OUTPUT_SIZE_LENGTH, {{"op", info->name}, {"found", std::to_string(shape->dims.size())}},
             at + ".attributes.dims");
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
    if (!problem.empty()) fail(Code::WEIGHT_TYPE, with("got", problem), where);
    plan.constants.emplace_back(dense_slot(c->slot()), c->weight());
    defined.insert(c->slot());
    views_of_weights.insert(c->slot());
  }
  std::vector<std::optional<size_t>> first_reader(n_inputs);
  std::vector<bool> touched(n_inputs, false);
  for (size_t i = 0; i < raws.size(); ++i) {
    detail::Raw& r = raws[i];
    Instruction out;
    out.label = instruction_label(i, r.info->name, r.inputs, r.outputs);
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
  for (size_t i = 0; i < n_inputs; ++i) {
    const auto& reader = first_reader[i];
    plan.inputs.push_back({i, input_shapes[i],
                           reader ? plan.instructions[*reader].label : "method '" + plan.method + "'",
                           reader ? plan.instructions[*reader].debug_handle : -1});
  }
  return plan;
}

}  // namespace liteexport::demo_program
