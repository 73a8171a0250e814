// Runs a prepared demo program: check the inputs, then one loop over the steps.
#include <chrono>
#include <cstring>
#include <optional>

#include "../errors.h"
#include "demo_input_reach.h"
#include "../narrow_weights.h"
#include "../run_limits.h"
#include "../step_profiler.h"
#include "plan.h"

namespace liteexport::demo_backend {

namespace {

bool fits(const Shape& shape, const Shape& expected) {
  if (shape.size() != expected.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (expected[i] != -1 && expected[i] != shape[i]) return false;
  return true;
}

[[noreturn]] void input_error(const InputCheck& check, const IValue& value) {
  // runtime_py's text: "expected int64 of shape (1, 8), got float32 of shape (1, 8)"
  const std::string dtype = dtype_name(static_cast<DType>(check.dtype));
  std::string expected = check.shape ? dtype + " of shape " + py_shape(*check.shape, true) : dtype;
  std::string got;
  if (auto a = value.get_if<Array>()) got = std::string(dtype_name(a->dtype)) + " of shape " + py_shape(a->shape);
  else if (auto b = value.get_if<ByteTensor>()) got = "uint8 of shape (" + std::to_string(b->size) + ",)";
  else got = value.kind() + " (not an ndarray)";
  throw_coded(ErrorKind::Input, demo_errors::Code::INPUT_MISMATCH,
              {{"instruction", check.blame}, {"index", std::to_string(check.index)}, {"expected", expected}, {"got", got}},
              check.debug_handle);
}

// The name of the state in dense slot `slot`, "?" if none (runtime_py's plan.state_names.get).
std::string state_name(const MethodPlan& plan, uint32_t slot) {
  for (size_t k = 0; k < plan.states.size(); ++k)
    if (plan.states[k].first == slot) return plan.state_names[k];
  return "?";
}

// A copy of `a`'s values in a result buffer of its own.
Array copied(const Array& a) {
  if (!a.data) return a;
  return visit_dtype(a.dtype, [&a](auto zero) {
    using T = decltype(zero);
    T* y;
    Array out = Array::uninitialized<T>(a.shape, &y);
    std::memcpy(y, a.data.get(), static_cast<size_t>(a.size()) * sizeof(T));
    return out;
  });
}

// What an in-place write (INDEX_COPY, STATE_WRITE) writes: the state's own buffer when its
// operand 0 is a state slot, whatever the slot holds now (a reader may have left it converted);
// otherwise a copy of the operand, so that a program writing a weight or a shared result in place
// changes nothing else (the compiler never emits that: the decoder only checks who writes a state).
const Array& in_place_target(const MethodPlan& plan, const Step& step, Slots& slots, std::optional<Array>& copy) {
  for (const auto& [slot, state] : plan.states)
    if (slot == step.reads[0]) return state;
  copy = copied(slots.nchw(step.reads[0]));
  return *copy;
}

}  // namespace

std::vector<Array> run_plan(const MethodPlan& plan, const std::vector<IValue>& inputs) {
  if (inputs.size() != plan.input_checks.size())
    throw_coded(ErrorKind::Input, demo_errors::Code::INPUT_COUNT,
                {{"method", plan.method}, {"expected", std::to_string(plan.input_checks.size())},
                 {"got", std::to_string(inputs.size())}});
  Slots slots(plan.num_slots);  // with their layouts: XNNPACK's steps keep NHWC values (xnn.h)
  for (const InputCheck& check : plan.input_checks) {
    const IValue& value = inputs[check.index];
    const Array* a = value.get_if<Array>();
    if (a == nullptr || a->dtype != static_cast<DType>(check.dtype) || (check.shape && !fits(a->shape, *check.shape)))
      input_error(check, value);
    slots.set(check.index, float_values(*a), false);  // a qint8 weight passed on: its float values
  }
  auto problem = demo_program::dim_problem(plan.named_dims, [&inputs](size_t index, size_t axis) {
    return inputs[index].get_if<Array>()->shape[axis];  // ranks were checked above
  });
  if (problem) {
    const InputCheck& check = plan.input_checks[problem->index];
    problem->fields.insert(problem->fields.begin(), {"instruction", check.blame});
    throw_coded(ErrorKind::Input, problem->code, std::move(problem->fields), check.debug_handle);
  }
  const std::shared_ptr<RunState>& run = current_run();
  if (run && run->max_memory > 0 && plan.working_memory > run->max_memory) {
    // runtime_py's check (executor._steps): a budget short of the longest input the program was
    // compiled for fails every call, so it shows in testing, not in the field
    std::string dims;
    for (const auto& d : plan.named_dims.dims) dims += (dims.empty() ? "" : ", ") + d.text();
    throw_execution("method '" + plan.method + "' is planned to hold up to " + std::to_string(plan.working_memory) +
                        " bytes of results at the upper bounds of " + dims + ": more than the memory budget of " +
                        std::to_string(run->max_memory) + " bytes (option max_memory)",
                    -1);
  }
  for (const auto& [slot, weight] : plan.constants) slots.set(slot, weight, false);
  for (const auto& [slot, state] : plan.states) slots.set(slot, state, false);
  // the call's state writes, undone if it fails (state.h); committed after the last step
  std::optional<StateJournal> journal;
  if (plan.module_state) journal.emplace();
  Inputs args;
  using Clock = std::chrono::steady_clock;
  StepProfiler* profiler = current_profiler();  // Module::profile's; null otherwise
  Clock::time_point started;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i];
    if (profiler != nullptr) started = Clock::now();
    try {
      check_deadline();
      // float errors (overflow in exp, division by zero) give inf/NaN silently, as in torch
      Stored stored;
      Array result;
      if (step.fast) {
        result = step.fast->run(slots, step.reads, &stored);
      } else {
        args.clear();
        for (uint32_t slot : step.reads) args.push_back(&slots.nchw(slot));  // defined: the plan checked it
        std::optional<Array> target;
        if (step.op == Op::INDEX_COPY || step.op == Op::STATE_WRITE) args[0] = &in_place_target(plan, step, slots, target);
        result = step.kernel(args);
        // a result sharing a state's buffer where runtime_py's kernel copies (a CAST to the same
        // dtype returns its input here): copied, so a later in-place write does not show in it
        if (!plan.states.empty() && !demo_ops::kOps[static_cast<size_t>(step.op)].may_alias_input &&
            step.op != Op::INDEX_COPY && step.op != Op::STATE_WRITE)
          for (const auto& [slot, state] : plan.states)
            if (result.data == state.data) result = copied(result);
      }
      // values read for the last time are freed now, so the memory budget counts what is live
      for (uint32_t slot : step.release) slots.reset(slot);
      if (stored.int8)
        slots.set_int8(step.write, std::move(result), stored.nhwc, *stored.int8);
      else
        slots.set(step.write, std::move(result), stored.nhwc);
      if (profiler != nullptr)
        profiler->add(plan.method, step.instruction, demo_ops::kOps[static_cast<size_t>(step.op)].name,
                      plan.debug_handles[i], std::chrono::duration<double>(Clock::now() - started).count(),
                      step.fast != nullptr && step.fast->int8_output() != nullptr);
    } catch (const Error&) {
      throw;
    } catch (const StatePositionError& e) {  // a cache position the inputs gave: the caller's (exit 6)
      throw_coded(ErrorKind::Input, demo_errors::Code::STATE_POSITION,
                  {{"instruction", plan.labels[i]}, {"position", std::to_string(e.position)},
                   {"state", state_name(plan, step.reads[0])}, {"size", std::to_string(e.size)},
                   {"axis", std::to_string(e.axis)}},
                  plan.debug_handles[i]);
    } catch (const std::exception& e) {
      // an input whose shape the program does not declare is checked by the steps it reaches
      // (demo_input_reach.h): runtime_py's INPUT_UNFIT
      const auto unfit = demo_program::undeclared_input_reaching(
          plan.steps, i, plan.num_slots, demo_program::undeclared_inputs(plan.input_checks));
      if (unfit) {
        const Array& input = *inputs[*unfit].get_if<Array>();  // an array: the input checks passed
        throw_coded(ErrorKind::Input, demo_errors::Code::INPUT_UNFIT,
                    {{"instruction", plan.labels[i]}, {"index", std::to_string(*unfit)},
                     {"got", std::string(dtype_name(input.dtype)) + " of shape " + py_shape(input.shape)},
                     {"reason", e.what()}},
                    plan.debug_handles[i]);
      }
      throw_coded(ErrorKind::Execution, demo_errors::Code::KERNEL_FAILED,
                  {{"instruction", plan.labels[i]}, {"reason", e.what()}}, plan.debug_handles[i]);
    }
  }
  std::vector<Array> out;
  for (uint32_t slot : plan.outputs) out.push_back(slots.nchw(slot));
  // an output reading a state is copied: the next call changes the state
  for (Array& a : out)
    for (const auto& [slot, state] : plan.states)
      if (a.data == state.data) a = copied(a);
  if (journal) journal->commit();  // last: a failure up to here (a copy over the budget) undoes the writes
  return out;
}

}  // namespace liteexport::demo_backend
