#include "run_limits.h"

#include <cstdio>
#include <string>

namespace liteexport {

namespace {
thread_local std::shared_ptr<RunState> t_run;
thread_local int64_t t_work = 0;
constexpr int64_t kWorkPerCheck = int64_t{1} << 20;
}  // namespace

RunScope::RunScope(std::shared_ptr<RunState> state) : previous_(std::move(t_run)) { t_run = std::move(state); }
RunScope::~RunScope() { t_run = std::move(previous_); }

const std::shared_ptr<RunState>& current_run() { return t_run; }

void check_deadline() {
  const RunState* run = t_run.get();
  if (run == nullptr || run->timeout_seconds <= 0) return;
  if (std::chrono::steady_clock::now() > run->deadline) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", run->timeout_seconds);
    throw RunLimitError(std::string("the run exceeded its timeout of ") + text + " s (option timeout)");
  }
}

void poll_deadline(int64_t work) {
  t_work += work;
  if (t_work < kWorkPerCheck) return;
  t_work = 0;
  check_deadline();
}

}  // namespace liteexport
