// A demo Program, decoded and validated by the shared decoder (native_format/decoder/demo_program.h,
// the checks of runtime_py's program_codec + plan.py) and prepared with bound kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../ivalue.h"
#include "kernels.h"
#include "state.h"
#include "xnn.h"

namespace liteexport::demo_backend {

using demo_program::InputCheck;

struct Step {
  Kernel kernel;
  std::vector<uint32_t> reads;
  uint32_t write;
  std::vector<uint32_t> release;  // slots read for the last time here (not outputs): freed after it
  Op op;
  Attrs attrs;
  std::shared_ptr<FastStep> fast;  // its XNNPACK path (xnn.h), which may read NHWC values; null: `kernel` on NCHW
  size_t instruction = 0;  // the instruction's position in the program (a folded step keeps the first's)
};

struct MethodPlan {
  std::string method;
  uint32_t num_slots = 0;  // slots the program uses, numbered densely (inputs first)
  std::vector<uint8_t> slot_dtypes;  // per slot: its DType (c10::ScalarType number)
  std::vector<InputCheck> input_checks;
  demo_program::NamedDims named_dims;  // --dim S=1..128: checked on every call (demo_dims.h)
  uint64_t working_memory = 0;  // Program.working_memory: a call's max_memory must hold it (run_plan)
  std::vector<std::pair<uint32_t, Array>> constants;  // (slot, weight used in place); a qint8 one is widened (finish_plan)
  std::vector<Step> steps;
  std::vector<std::string> labels;       // per instruction, for error messages
  std::vector<int64_t> debug_handles;    // per instruction
  std::vector<uint32_t> outputs;
  // Program state (state.h): the loaded module's state this program reads and writes (shared with
  // its other methods' plans), its Arrays by dense slot, and their names (STATE_POSITION's field)
  std::shared_ptr<ModuleState> module_state;
  std::vector<std::pair<uint32_t, Array>> states;
  std::vector<std::string> state_names;  // parallel to states
};

// Decodes and validates the program in `bytes` against `weights` (the processed module's
// weight list). Throws Error(Format) with the decoder's code and fields.
// `module_state`: the loaded module's state, shared by its methods' plans (null: one of this plan's
// own when the program declares state).
std::shared_ptr<const MethodPlan> build_plan(const ByteTensor& bytes, const std::vector<IValue>& weights,
                                             std::shared_ptr<ModuleState> module_state = nullptr);

// Gives a decoded plan its XNNPACK steps (prepare_fast_steps), its weights in the form its steps
// read them, and its slots' releases: build_plan's last stage (tests make plans by hand).
void finish_plan(MethodPlan& plan);

// The step reading the value that step `i` writes, when it is that value's only reader and may
// write its own result in step i's place (prepare_fast_steps folds a ReLU/clamp into the
// convolution or add before it): the value is no output, the reader reads it once, and no step
// between them reads or writes the reader's slot. Steps marked in `removed` are skipped. Per
// value, not per slot: the compiler reuses slots (mobilenet_v2 writes all its convolutions into
// two), so a slot is read many times over a program while each value has one reader.
std::optional<size_t> sole_reader(const MethodPlan& plan, const std::vector<bool>& removed, size_t i);

// Runs `plan` on `inputs`; throws Error(Execution) carrying the failing instruction's handle.
std::vector<Array> run_plan(const MethodPlan& plan, const std::vector<IValue>& inputs);

}  // namespace liteexport::demo_backend
