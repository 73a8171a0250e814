#include "plan.h"

#include <cstring>
#include <map>
#include <set>

#include "../errors.h"
#include "../fb_read.h"
#include "demo_program_generated.h"

namespace liteexport::demo_backend {

namespace fb = liteexport::demo;

namespace {

// Presence of a scalar field (the generated accessors return its default when absent).
template <typename T>
bool has_field(const T* table, flatbuffers::voffset_t field) {
  return reinterpret_cast<const flatbuffers::Table*>(table)->CheckField(field);
}

template <typename T>
std::vector<int64_t> ints(const flatbuffers::Vector<T>* v) {
  return read_vector<int64_t>(v);
}

Pair pair_at(const flatbuffers::Vector<int32_t>* v, const char* name, const std::string& where) {
  auto values = ints(v);
  if (values.size() != 2)
    throw_format(std::string(name) + " must hold 2 values [h, w], found " + std::to_string(values.size()),
                 where + "." + name);
  return {values[0], values[1]};
}

bool activation_relu(fb::Activation a, const std::string& where) {
  if (static_cast<int>(a) > 1) throw_format("unknown Activation value " + std::to_string(static_cast<int>(a)), where);
  return a == fb::Activation::Relu;
}

// A Clamp bound: its value when its has_ flag is set (a value without the flag is malformed).
std::optional<double> clamp_bound(const fb::Clamp* r, bool present, flatbuffers::voffset_t field, double value,
                                  const char* name, const std::string& where) {
  if (!present && has_field(r, field))
    throw_format(std::string(name) + " given but has_" + name + " is false", where + "." + name);
  return present ? std::optional<double>(value) : std::nullopt;
}

// The attributes of instruction `ins` as the variant (tag already known to be 1..13).
Attrs read_attrs(const fb::Instruction* ins, const std::string& where) {
  switch (ins->attributes_type()) {
    case fb::Attributes::Binary: {
      auto r = ins->attributes_as_Binary();
      if (!r->has_scalar() && has_field(r, fb::Binary::VT_SCALAR))
        throw_format("scalar given but has_scalar is false", where + ".scalar");
      BinaryAttrs a{r->alpha(), std::nullopt, r->reverse()};
      if (r->has_scalar()) a.scalar = r->scalar();
      return a;
    }
    case fb::Attributes::Gelu: return GeluAttrs{ins->attributes_as_Gelu()->tanh_approximation()};
    case fb::Attributes::Axis: return AxisAttrs{ins->attributes_as_Axis()->axis()};
    case fb::Attributes::Fused: return FusedAttrs{activation_relu(ins->attributes_as_Fused()->activation(), where)};
    case fb::Attributes::Conv2d: {
      auto r = ins->attributes_as_Conv2d();
      return Conv2dAttrs{pair_at(r->stride(), "stride", where), pair_at(r->padding(), "padding", where),
                         pair_at(r->dilation(), "dilation", where), r->groups(),
                         activation_relu(r->activation(), where + ".activation")};
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
    case fb::Attributes::Clamp: {
      auto r = ins->attributes_as_Clamp();
      return ClampAttrs{clamp_bound(r, r->has_min(), fb::Clamp::VT_MIN, r->min(), "min", where),
                        clamp_bound(r, r->has_max(), fb::Clamp::VT_MAX, r->max(), "max", where)};
    }
    case fb::Attributes::Reduce:
      return ReduceAttrs{ints(ins->attributes_as_Reduce()->axes()), ins->attributes_as_Reduce()->keepdim()};
    case fb::Attributes::Slice: {
      auto r = ins->attributes_as_Slice();
      return SliceAttrs{r->axis(), r->start(), r->end(), r->step()};
    }
    default: return FlattenAttrs{ins->attributes_as_Flatten()->start_dim(), ins->attributes_as_Flatten()->end_dim()};
  }
}

// Python's attribute class name -> the fbs table name in "attributes of type X are missing".
std::string table_name(size_t tag) {
  std::string name = attrs_name(tag);
  return name.substr(0, name.size() - 5);  // drop "Attrs"
}

std::string count_text(size_t n) { return std::to_string(n) + (n == 1 ? " input" : " inputs"); }

std::string label(size_t index, const KernelSpec& spec, const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  return "instruction #" + std::to_string(index) + " " + spec.name + " (slots " + py_list(in) + " -> " +
         py_list(out) + ")";
}

}  // namespace

std::shared_ptr<const MethodPlan> build_plan(const ByteTensor& bytes, const std::vector<IValue>& weights) {
  // flatbuffers reads int64/double fields in place: they need 8-byte alignment in memory
  std::vector<uint64_t> aligned;
  const uint8_t* data = bytes.data;
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0) {
    aligned.resize((bytes.size + 7) / 8);
    if (bytes.size) std::memcpy(aligned.data(), bytes.data, bytes.size);
    data = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  if (bytes.size < 8 || !fb::ProgramBufferHasIdentifier(data))
    throw_format("malformed program: missing file identifier b'LXDP'", "Program");
  flatbuffers::Verifier verifier(data, bytes.size);
  if (!fb::VerifyProgramBuffer(verifier))
    throw_format("malformed program: flatbuffers verification failed", "Program");
  const fb::Program* p = fb::GetProgram(data);

  // --- the codec's checks ---
  if (p->format_version() != kProgramFormatVersion)
    throw_format("unsupported program format version " + std::to_string(p->format_version()) +
                 "; this runtime reads version " + std::to_string(kProgramFormatVersion), "Program.format_version");
  const auto outputs = ints(p->outputs());
  const auto output_handles = ints(p->output_debug_handles());
  if (outputs.size() != output_handles.size())
    throw_format(std::to_string(outputs.size()) + " outputs but " + std::to_string(output_handles.size()) +
                 " output debug handles", "Program.output_debug_handles");
  if (p->method() == nullptr) throw_format("required field 'method' is missing", "Program");

  auto plan = std::make_shared<MethodPlan>();
  plan->method = p->method()->str();
  plan->num_slots = p->num_slots();
  const std::string where = "demo program of method '" + plan->method + "'";
  const size_t n_inputs = p->inputs() ? p->inputs()->size() : 0;
  std::vector<std::optional<Shape>> input_shapes;
  for (size_t i = 0; i < n_inputs; ++i) {
    auto info = p->inputs()->Get(i);
    std::string at = "Program.inputs[" + std::to_string(i) + "]";
    if (!info->has_shape() && info->shape() != nullptr) throw_format("shape given but has_shape is false", at + ".shape");
    if (info->dtype() != fb::DType::Float32)
      throw_format("unknown DType value " + std::to_string(static_cast<int>(info->dtype())), at + ".dtype");
    input_shapes.push_back(info->has_shape() ? std::optional<Shape>(ints(info->shape())) : std::nullopt);
  }
  struct Decoded {
    const KernelSpec* spec;
    Attrs attrs;
    std::vector<int64_t> inputs, outputs;
    int64_t handle;
  };
  std::vector<Decoded> decoded;
  const size_t n_ins = p->instructions() ? p->instructions()->size() : 0;
  for (size_t i = 0; i < n_ins; ++i) {
    auto ins = p->instructions()->Get(i);
    std::string at = "Program.instructions[" + std::to_string(i) + "]";
    const KernelSpec* spec = kernel_spec(static_cast<uint16_t>(ins->op()));
    if (spec == nullptr) throw_format("unknown OpCode value " + std::to_string(static_cast<int>(ins->op())), at + ".op");
    const auto tag = static_cast<size_t>(ins->attributes_type());
    Attrs attrs;
    if (tag == 0) {
      if (ins->attributes() != nullptr) throw_format("attributes given without a type", at + ".attributes");
      if (spec->attrs_index != 0 && !spec->attrs_optional)
        throw_format(std::string(spec->name) + " takes " + attrs_name(spec->attrs_index) + ", found none",
                     at + ".attributes_type");
      if (spec->attrs_index != 0) attrs = [&]() -> Attrs {  // the all-defaults attributes
          switch (spec->attrs_index) {
            case 1: return BinaryAttrs{};
            case 2: return GeluAttrs{};
            case 4: return FusedAttrs{};
            default: return Conv2dAttrs{};
          }
        }();
    } else {
      if (tag > 13) throw_format("unknown attribute type " + std::to_string(tag), at + ".attributes_type");
      if (tag != spec->attrs_index)
        throw_format(std::string(spec->name) + " takes " +
                         (spec->attrs_index ? attrs_name(spec->attrs_index) : "no attributes") + ", found " +
                         attrs_name(tag), at + ".attributes_type");
      if (ins->attributes() == nullptr)
        throw_format("attributes of type " + table_name(tag) + " are missing", at + ".attributes");
      attrs = read_attrs(ins, at + ".attributes");
      if (tag == 8 && spec->name == std::string("ADAPTIVE_AVG_POOL2D") && std::get<ShapeAttrs>(attrs).dims.size() != 2)
        throw_format("ADAPTIVE_AVG_POOL2D output size must hold 2 dims, found " +
                     std::to_string(std::get<ShapeAttrs>(attrs).dims.size()), at + ".attributes.dims");
    }
    decoded.push_back({spec, std::move(attrs), ints(ins->inputs()), ints(ins->outputs()), ins->debug_handle()});
  }

  // --- the plan's checks ---
  const uint32_t num_slots = plan->num_slots;
  if (n_inputs > num_slots)
    throw_format("the inputs need " + std::to_string(n_inputs) + " slots, num_slots is " + std::to_string(num_slots),
                 where);
  // run_plan holds one value per slot the program uses, not per declared slot: num_slots is a
  // uint32 from the file, and 4 billion empty slots would be 160 GB. Input i stays slot i;
  // other slots are numbered densely in order of first use (messages keep the file's numbers).
  std::map<int64_t, uint32_t> dense;
  for (size_t i = 0; i < n_inputs; ++i) dense.emplace(static_cast<int64_t>(i), static_cast<uint32_t>(i));
  auto dense_slot = [&dense](int64_t slot) {
    return dense.emplace(slot, static_cast<uint32_t>(dense.size())).first->second;
  };
  std::set<int64_t> defined;
  for (size_t i = 0; i < n_inputs; ++i) defined.insert(static_cast<int64_t>(i));
  const size_t n_constants = p->constants() ? p->constants()->size() : 0;
  for (size_t i = 0; i < n_constants; ++i) {
    auto c = p->constants()->Get(i);
    std::string what = "constant for slot " + std::to_string(c->slot()) + " (weight " + std::to_string(c->weight()) + ")";
    if (c->slot() >= num_slots)
      throw_format(what + ": slot is out of range (num_slots is " + std::to_string(num_slots) + ")", where);
    if (defined.count(c->slot())) throw_format(what + ": slot already holds an input or another constant", where);
    if (c->weight() >= weights.size())
      throw_format(what + ": weight index is out of range (there are " + std::to_string(weights.size()) + ")", where);
    const Array* w = weights[c->weight()].get_if<Array>();
    if (w == nullptr) {
      const IValue& v = weights[c->weight()];
      throw_format(what + ": weight must be a float32 array, got " + (v.is<ByteTensor>() ? "uint8" : v.kind()), where);
    }
    plan->constants.emplace_back(dense_slot(c->slot()), *w);
    defined.insert(c->slot());
  }
  std::vector<std::optional<size_t>> first_reader(n_inputs);
  std::vector<bool> touched(n_inputs, false);
  for (size_t i = 0; i < decoded.size(); ++i) {
    const Decoded& d = decoded[i];
    const std::string lbl = label(i, *d.spec, d.inputs, d.outputs);
    const std::string at = where + ", " + lbl;
    const size_t n = d.inputs.size();
    if (n < d.spec->min_inputs || n > d.spec->max_inputs) {
      std::string expected = d.spec->max_inputs == SIZE_MAX ? "at least " + count_text(d.spec->min_inputs)
                             : d.spec->min_inputs == d.spec->max_inputs
                                 ? count_text(d.spec->min_inputs)
                                 : std::to_string(d.spec->min_inputs) + " to " + std::to_string(d.spec->max_inputs) + " inputs";
      throw_format("takes " + expected + ", got " + std::to_string(n), at);
    }
    if (d.outputs.size() != 1) throw_format("writes 1 output, got " + std::to_string(d.outputs.size()), at);
    Kernel kernel;
    try {
      kernel = d.spec->factory(d.attrs, n);
    } catch (const AttrError& e) {
      throw_format(std::string("invalid attributes: ") + e.what(), at);
    }
    for (const auto* slots : {&d.inputs, &d.outputs})
      for (int64_t slot : *slots)
        if (slot < 0 || slot >= num_slots)
          throw_format("slot " + std::to_string(slot) + " is out of range (num_slots is " + std::to_string(num_slots) + ")", at);
    for (int64_t slot : d.inputs) {
      if (!defined.count(slot)) throw_format("reads slot " + std::to_string(slot) + " before anything writes it", at);
      if (static_cast<size_t>(slot) < n_inputs && !touched[static_cast<size_t>(slot)]) {
        touched[static_cast<size_t>(slot)] = true;
        first_reader[static_cast<size_t>(slot)] = i;
      }
    }
    const int64_t out = d.outputs[0];
    defined.insert(out);
    // later reads of a rewritten input slot see another value
    if (static_cast<size_t>(out) < n_inputs) touched[static_cast<size_t>(out)] = true;
    std::vector<uint32_t> reads;
    for (int64_t slot : d.inputs) reads.push_back(dense_slot(slot));
    plan->steps.push_back({std::move(kernel), std::move(reads), dense_slot(out)});
    plan->labels.push_back(lbl);
    plan->debug_handles.push_back(d.handle);
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k] >= num_slots)
      throw_format("output " + std::to_string(k) + ": slot " + std::to_string(outputs[k]) + " is out of range", where);
    if (!defined.count(outputs[k]))
      throw_format("output " + std::to_string(k) + ": slot " + std::to_string(outputs[k]) + " is never written", where);
    plan->outputs.push_back(dense_slot(outputs[k]));
  }
  plan->num_slots = static_cast<uint32_t>(dense.size());
  for (size_t i = 0; i < n_inputs; ++i) {
    const auto& reader = first_reader[i];
    plan->input_checks.push_back({i, input_shapes[i],
                                  reader ? plan->labels[*reader] : "method '" + plan->method + "'",
                                  reader ? plan->debug_handles[*reader] : -1});
  }
  return plan;
}

}  // namespace liteexport::demo_backend
