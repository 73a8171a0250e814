// Which undeclared input a failing step depends on, as runtime_py's
// executor._undeclared_input_reaching decides: shared by the Android native core and the torch
// extension. A program that declares no shape for an input (a bundle exported without
// --input-shape) cannot check it before it runs; every shape in it follows from those inputs' and
// the weights', so a step that fails on values reached from one such input alone is that input's
// check, and the failure the caller's (INPUT_UNFIT, exit 6) rather than the program's (KERNEL_FAILED).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace liteexport::demo_program {

// The one input among `undeclared` (inputs whose shape the program does not declare; input i is
// slot i) that step `failed` depends on through the steps before it, or none (none, or several).
// `steps[i].reads` / `steps[i].write` are slots below `num_slots`; slots are reused, so a write
// replaces what the slot depended on.
template <typename Steps>
std::optional<size_t> undeclared_input_reaching(const Steps& steps, size_t failed, size_t num_slots,
                                                const std::vector<size_t>& undeclared) {
  if (undeclared.empty() || failed >= steps.size()) return std::nullopt;
  // slot -> the inputs (bits by position in `undeclared`, at most 64 tracked: enough for any
  // method's inputs; more are reported as the lowest of the first 64)
  const size_t tracked = undeclared.size() < 64 ? undeclared.size() : 64;
  std::vector<uint64_t> reaches(num_slots, 0);
  for (size_t k = 0; k < tracked; ++k)
    if (undeclared[k] < num_slots) reaches[undeclared[k]] |= uint64_t{1} << k;
  for (size_t i = 0; i <= failed; ++i) {
    uint64_t depends = 0;
    for (auto slot : steps[i].reads)
      if (static_cast<size_t>(slot) < num_slots) depends |= reaches[static_cast<size_t>(slot)];
    if (i == failed) {
      // one input alone reaches the step: its shape is what misfits. Where several meet (x + h),
      // the program cannot tell which, so the failure stays the call's (KERNEL_FAILED, as torch).
      if (depends == 0 || (depends & (depends - 1)) != 0) return std::nullopt;
      for (size_t k = 0; k < tracked; ++k)
        if (depends >> k & 1) return undeclared[k];
      return std::nullopt;
    }
    if (static_cast<size_t>(steps[i].write) < num_slots) reaches[static_cast<size_t>(steps[i].write)] = depends;
  }
  return std::nullopt;
}

// The inputs of `checks` (InputCheck-like: .index, .shape an optional) whose shape is undeclared.
template <typename Checks>
std::vector<size_t> undeclared_inputs(const Checks& checks) {
  std::vector<size_t> out;
  for (const auto& check : checks)
    if (!check.shape) out.push_back(check.index);
  return out;
}

}  // namespace liteexport::demo_program
