// The XNNPACK kernel path of demo programs (issue 21): convolutions, linear layers, pooling and
// elementwise chains run on XNNPACK's operators (the CPU kernels ExecuTorch and TFLite use: NHWC,
// 1x1 convolutions as GEMMs, dedicated depthwise kernels, bias and activation fused, weights packed
// once), on the Module's thread pool.
//
// Layout: a program's values are NCHW. A slot written by an XNNPACK convolution or pooling is
// kept NHWC (its Array's shape is then the physical [N, H, W, C]) as long as the steps reading it
// can take NHWC (other convolutions and pools, elementwise ops); the first step that needs NCHW
// converts the slot in place, once, and outputs are converted before they are returned. So a
// conv/pool/elementwise chain converts only at its ends.
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

namespace liteexport::demo_backend {

struct MethodPlan;

// A run's values and their layouts (run_plan's slots).
class Slots {
 public:
  explicit Slots(uint32_t n) : values_(n), nhwc_(n, 0) {}
  void set(uint32_t slot, Array value, bool nhwc) {
    values_[slot] = std::move(value);
    nhwc_[slot] = nhwc;
  }
  void reset(uint32_t slot) { values_[slot].reset(); }
  bool is_nhwc(uint32_t slot) const { return nhwc_[slot] != 0; }
  // The value as stored (NHWC when is_nhwc).
  const Array& raw(uint32_t slot) const { return *values_[slot]; }
  // The value in NCHW (its program shape): an NHWC slot is converted in place, once.
  const Array& nchw(uint32_t slot);
  // A 4-D value in NHWC: an NCHW slot is converted in place, once.
  const Array& nhwc(uint32_t slot);
  // The program (NCHW) shape of the value.
  Shape logical_shape(uint32_t slot) const;

 private:
  std::vector<std::optional<Array>> values_;
  std::vector<uint8_t> nhwc_;
};

// A step that runs through XNNPACK (or an own kernel that works in either layout).
class FastStep {
 public:
  virtual ~FastStep() = default;
  // Computes the step from `slots` (reading `reads`); sets *nhwc to the result's layout.
  virtual Array run(Slots& slots, const std::vector<uint32_t>& reads, bool* nhwc) = 0;
};

// Gives the plan's steps their XNNPACK path and fuses a convolution's (or an add's) ReLU/clamp
// into it when the clamp is the only reader of its result (not necessarily the next step:
// sole_reader in plan.h): creates the operators. Called by build_plan before it computes the
// slots' releases.
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
