#include "step_profiler.h"

namespace liteexport {

namespace {
thread_local StepProfiler* active_profiler = nullptr;
}  // namespace

void StepProfiler::add(const std::string& method, size_t instruction, const char* op, int64_t debug_handle,
                       double seconds, bool int8) {
  StepCost& cost = steps[{method, instruction}];
  if (cost.calls == 0) {
    cost.op = op;
    cost.debug_handle = debug_handle;
    cost.int8 = int8;
  }
  cost.seconds += seconds;
  cost.calls += 1;
  program_seconds += seconds;
}

ProfileScope::ProfileScope(StepProfiler* profiler) : previous_(active_profiler) { active_profiler = profiler; }

ProfileScope::~ProfileScope() { active_profiler = previous_; }

StepProfiler* current_profiler() { return active_profiler; }

}  // namespace liteexport
