// Per-instruction timing of compiled programs, for Module::profile (the native side of
// `liteexport profile --engine native`). Module::profile installs a StepProfiler for the calling
// thread (ProfileScope); run_plan, which the wrapper bytecode reaches through the backend's
// `execute` without any context, finds it with current_profiler() and times each step. Outside
// a profile the cost is one thread-local read per program run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace liteexport {

struct StepCost {
  std::string op;            // the demo opcode's name, e.g. CONV2D
  int64_t debug_handle = -1;  // the instruction's handle (the bundle's debug table maps it)
  double seconds = 0;         // summed over the profiled runs
  int64_t calls = 0;
  bool int8 = false;  // it ran on int8 values (demo/xnn_int8.cpp)
};

struct StepProfiler {
  // (method, instruction index in its compiled program) -> its cost
  std::map<std::pair<std::string, size_t>, StepCost> steps;
  double program_seconds = 0;  // inside compiled programs, all steps together

  void add(const std::string& method, size_t instruction, const char* op, int64_t debug_handle, double seconds,
           bool int8);
};

// Installs `profiler` for the calling thread for its lifetime (restoring the previous one).
class ProfileScope {
 public:
  explicit ProfileScope(StepProfiler* profiler);
  ~ProfileScope();
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  StepProfiler* previous_;
};

// The calling thread's profiler, or null when no profile runs.
StepProfiler* current_profiler();

}  // namespace liteexport
