// The limits of one run_method call (LoadOptions::max_memory, LoadOptions::timeout_seconds).
// A run reaches the kernels through the wrapper bytecode and the backend object's `execute`,
// which carry no context, so LoadedModule::run_method installs the call's RunState for the
// calling thread (RunScope) and the allocator (Array::zeros) and the long kernels consult it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace liteexport {

// What a limit reached throws; run_plan reports it as the instruction's ExecutionError.
struct RunLimitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class BufferPool;

struct RunState {
  uint64_t max_memory = 0;  // bytes of live kernel results; 0 = no budget
  double timeout_seconds = 0;  // 0 = none
  std::chrono::steady_clock::time_point deadline{};
  std::atomic<uint64_t> live{0};  // bytes of the kernel results alive now (freed ones subtracted)
  std::shared_ptr<BufferPool> pool;  // the Module's recycled result buffers (buffer_pool.h); null: none
};

// Installs `state` as the calling thread's run for its lifetime (restoring the previous one).
class RunScope {
 public:
  explicit RunScope(std::shared_ptr<RunState> state);
  ~RunScope();
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

 private:
  std::shared_ptr<RunState> previous_;
};

// The calling thread's run, or null outside run_method (kernel tests, tools calling kernels).
const std::shared_ptr<RunState>& current_run();

// Throws RunLimitError once the run's deadline has passed.
void check_deadline();
// `work` more units (multiply-adds, elements) done: checks the deadline every 2^20 units, so a
// kernel can call it often and the clock is read about once a millisecond.
void poll_deadline(int64_t work);

}  // namespace liteexport
