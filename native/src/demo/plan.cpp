#include "plan.h"

#include <algorithm>

#include "../errors.h"
#include "../narrow_weights.h"

namespace liteexport::demo_backend {

namespace {

bool supported(uint8_t dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::Float32:
    case DType::Int64:
    case DType::Int32:
    case DType::Bool: return true;
  }
  return false;
}

size_t count(const std::vector<uint32_t>& slots, uint32_t slot) {
  return static_cast<size_t>(std::count(slots.begin(), slots.end(), slot));
}

}  // namespace

std::optional<size_t> sole_reader(const MethodPlan& plan, const std::vector<bool>& removed, size_t i) {
  const uint32_t slot = plan.steps[i].write;
  std::optional<size_t> reader;
  bool overwritten = false;  // the value's life ends at a later write of its slot
  for (size_t j = i + 1; j < plan.steps.size() && !overwritten; ++j) {
    if (removed[j]) continue;
    const Step& step = plan.steps[j];
    const size_t reads = count(step.reads, slot);
    if (reads > 0 && (reader || reads > 1)) return std::nullopt;
    if (reads > 0) reader = j;
    overwritten = step.write == slot;
  }
  if (!reader) return std::nullopt;
  // alive at the end: the program's output (its last write) is read by the caller too
  if (!overwritten && std::find(plan.outputs.begin(), plan.outputs.end(), slot) != plan.outputs.end())
    return std::nullopt;
  // step i will write the reader's slot: a step between them must not see that change
  const uint32_t target = plan.steps[*reader].write;
  for (size_t k = i + 1; k < *reader; ++k)
    if (!removed[k] && (plan.steps[k].write == target || count(plan.steps[k].reads, target) > 0)) return std::nullopt;
  return reader;
}

void finish_plan(MethodPlan& plan) {
  prepare_fast_steps(plan);  // XNNPACK's operators; may fold steps together
  // the weights the steps read, and the outputs: a qint8 weight as its float values (widened once,
  // shared by the methods); one that only int8 operators use (they hold it) is not set at all
  std::vector<bool> read(plan.num_slots, false);
  for (const Step& step : plan.steps)
    for (uint32_t slot : step.reads) read[slot] = true;
  for (uint32_t slot : plan.outputs) read[slot] = true;
  std::vector<std::pair<uint32_t, Array>> constants;
  for (const auto& [slot, weight] : plan.constants)
    if (read[slot]) constants.emplace_back(slot, float_values(weight));
  plan.constants = std::move(constants);
  // each slot's last read, unless it is an output: run_plan frees it after that step
  std::vector<int64_t> last(plan.num_slots, -1);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (uint32_t slot : plan.steps[i].reads) last[slot] = static_cast<int64_t>(i);
  for (uint32_t slot : plan.outputs) last[slot] = -1;
  for (uint32_t slot = 0; slot < plan.num_slots; ++slot)
    if (last[slot] >= 0) {
      auto& release = plan.steps[static_cast<size_t>(last[slot])].release;
      if (std::find(release.begin(), release.end(), slot) == release.end()) release.push_back(slot);
    }
}

std::shared_ptr<const MethodPlan> build_plan(const ByteTensor& bytes, const std::vector<IValue>& weights,
                                             std::shared_ptr<ModuleState> module_state) {
  demo_program::Program program;
  try {
    program = demo_program::decode_program(bytes.data, bytes.size, weights.size(), [&weights](size_t i) {
      // "" for float32, the dtype's name for the other array dtypes (the decoder matches it with
      // the slot's), what it is otherwise
      const IValue& v = weights[i];
      if (const Array* a = v.get_if<Array>()) return a->dtype == DType::Float32 ? std::string() : std::string(dtype_name(a->dtype));
      return v.is<ByteTensor>() ? std::string("uint8") : v.kind();
    });
  } catch (const demo_errors::ProgramError& e) {
    throw_coded(ErrorKind::Format, e);
  }
  // Array holds the four dtypes of [dtypes] (float32, int64, int32, bool); a dtype added to the
  // spec later is refused whole here, before any kernel is bound, rather than misread
  for (uint32_t slot = 0; slot < program.slot_dtypes.size(); ++slot)
    if (!supported(program.slot_dtypes[slot]))
      throw_coded(ErrorKind::Format, demo_errors::Code::DTYPE_NOT_SUPPORTED,
                  {{"slot", std::to_string(slot)}, {"dtype", demo_ops::dtype_name(program.slot_dtypes[slot])},
                   {"method", program.method}});
  auto plan = std::make_shared<MethodPlan>();
  plan->method = program.method;
  plan->num_slots = program.num_slots;
  plan->slot_dtypes = program.slot_dtypes;
  plan->input_checks = std::move(program.inputs);
  plan->named_dims = std::move(program.named_dims);
  plan->working_memory = program.working_memory;
  for (const auto& [slot, weight] : program.constants) plan->constants.emplace_back(slot, *weights[weight].get_if<Array>());
  if (!program.states.empty()) {
    if (!module_state) module_state = std::make_shared<ModuleState>();
    plan->states = module_state->declare(program.method, program.states, weights);
    for (const auto& s : program.states) plan->state_names.push_back(s.name);
    plan->module_state = std::move(module_state);
  }
  for (auto& ins : program.instructions) {
    plan->steps.push_back({bind_kernel(ins.op, ins.attrs, ins.reads.size()), std::move(ins.reads), ins.write, {}, ins.op,
                           ins.attrs, nullptr, ins.index});
    plan->labels.push_back(std::move(ins.label));
    plan->debug_handles.push_back(ins.debug_handle);
  }
  for (const auto& [slot, may_view_weight] : program.outputs) plan->outputs.push_back(slot);
  finish_plan(*plan);
  return plan;
}

}  // namespace liteexport::demo_backend
