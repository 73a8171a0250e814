// The XNNPACK kernel path of demo programs (issue 21): convolutions, linear layers, pooling and
// elementwise chains run on XNNPACK's operators (the CPU kernels ExecuTorch and TFLite use: NHWC,
// 1x1 convolutions as GEMMs, dedicated depthwise kernels, bias and activation fused, weights packed
// once), on the Module's thread pool.
//
// Layout: a program's values are NCHW. A slot written by an XNNPACK convolution or pooling is
// kept NHWC as long as the steps reading it can take NHWC (other convolutions and pools,
// elementwise ops); the first step that needs NCHW converts it (slots.h), and outputs are
// converted before they are returned. So a conv/pool/elementwise chain converts only at its ends.
//
// int8 (issue 22, xnn_int8.cpp): a quantized program computes each quantized op in float and
// rounds its result to an 8-bit grid (FAKE_QUANTIZE). Such values are kept as int8, and a
// convolution, linear layer, add or global average pool whose result only a FAKE_QUANTIZE reads
// (through a ReLU/clamp) runs on XNNPACK's int8 operators, writing the grid's int8 values directly.
//
// The own kernels (kernels.h) stay for the ops XNNPACK lacks (layer norm, softmax, matmul, ...)
// and for inputs an XNNPACK step does not handle: a shape that does not fit the weight goes to the
// own kernel, whose error is runtime_py's (the error tests compare the texts), and an unbatched
// (3-D) input too. An XNNPACK call that fails is an error, never a silent fallback.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kernels.h"
#include "slots.h"

namespace liteexport::demo_backend {

struct MethodPlan;

// How a step's result is stored (slots.h).
struct Stored {
  bool nhwc = false;
  std::optional<Grid> int8;  // int8 values on this grid; none: the program's dtype
};

// A step that runs through XNNPACK (or an own kernel that works in either layout).
class FastStep {
 public:
  virtual ~FastStep() = default;
  // Computes the step from `slots` (reading `reads`); sets *stored to how its result is stored.
  virtual Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) = 0;
  // The grid of its result when it writes int8 values (the same on every run; the int8 steps of
  // xnn_int8.cpp, which the profile marks), else null.
  virtual const Grid* int8_output() const { return nullptr; }
};

// Gives the plan's steps their XNNPACK path, int8 (xnn_int8.cpp) or float, and fuses a
// convolution's (or an add's) ReLU/clamp into it when the clamp is the only reader of its result
// (not necessarily the next step: sole_reader in plan.h), and an int8 step's FAKE_QUANTIZE: creates
// the operators that hold no weights. Called by finish_plan (plan.h) before it computes the slots'
// releases.
void prepare_fast_steps(MethodPlan& plan);

// The threads XNNPACK runs on: a pthreadpool of n threads (n >= 2; one thread needs no pool: the
// caller's thread computes).
class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  void* handle() const { return pool_; }

 private:
  void* pool_;
};

// Installs `pool` (null: one thread) as the calling thread's pool for XNNPACK's operators for its
// lifetime; LoadedModule::run_method does so for its Module's pool, as RunScope its limits.
class ThreadPoolScope {
 public:
  explicit ThreadPoolScope(const ThreadPool* pool);
  ~ThreadPoolScope();
  ThreadPoolScope(const ThreadPoolScope&) = delete;
  ThreadPoolScope& operator=(const ThreadPoolScope&) = delete;

 private:
  const ThreadPool* previous_;
};

// Most threads a Module may use (LoadOptions::num_threads, Module::set_num_threads).
constexpr int kMaxThreads = 64;

}  // namespace liteexport::demo_backend
