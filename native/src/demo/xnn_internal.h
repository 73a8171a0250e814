// What the XNNPACK steps of xnn.cpp (float) and xnn_int8.cpp (int8) share: status checks,
// operator ownership, the calling thread's pool, fused output bounds, the own-kernel path.
#pragma once

#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../errors.h"
#include "kernels.h"
#include "slots.h"
#include "xnn.h"

namespace liteexport::demo_backend {

// The pool of the Module running on this thread (ThreadPoolScope); null: the calling thread.
pthreadpool_t threadpool();

// XNNPACK is initialized once per process (it detects the CPU's kernels); a CPU it cannot run on
// (no SSE2 / NEON) is an error at load.
void initialize_xnnpack();

inline void check(xnn_status status, const char* what) {
  if (status != xnn_status_success)
    throw KernelError(std::string("XNNPACK ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

struct OperatorDeleter {
  void operator()(xnn_operator_t op) const { xnn_delete_operator(op); }
};
using Operator = std::unique_ptr<xnn_operator, OperatorDeleter>;

// `op` by reference: read after the creating call (an argument by value may be read before it).
inline Operator created(xnn_status status, const xnn_operator_t& op, const char* what) {
  if (status != xnn_status_success)  // the configuration was checked, so this is XNNPACK's refusal
    throw Error(ErrorKind::Format, std::string("XNNPACK ") + what + " creation failed with status " +
                                       std::to_string(static_cast<int>(status)));
  return Operator(op);
}

// XNNPACK's operators are reshaped for input dimensions and a thread count (which picks their
// tiling), then set up with the run's pointers. A step reshapes only when either changed since its
// last run, and keeps the workspace the reshape asked for (its address must not move while the
// reshape holds).
class Reshaped {
 public:
  // Calls reshape(&workspace_size, &workspace_alignment) unless `key` and the thread count are
  // those of the last successful call; the workspace.
  template <typename Reshape>
  void* ensure(std::vector<size_t> key, Reshape reshape) {
    key.push_back(threads());
    if (!valid_ || key != key_) {
      valid_ = false;  // until this reshape succeeds
      size_t size = 0, alignment = 1;
      reshape(&size, &alignment);
      workspace_.assign(size + alignment, 0);
      aligned_ = workspace_.data() + (alignment - reinterpret_cast<uintptr_t>(workspace_.data()) % alignment) % alignment;
      key_ = std::move(key);
      valid_ = true;
    }
    return aligned_;
  }

 private:
  static size_t threads();
  std::vector<size_t> key_;
  bool valid_ = false;
  std::vector<char> workspace_;
  char* aligned_ = nullptr;
};

// ensure() for the operators whose reshape takes (op, N, H, W, &workspace, &alignment, &OH, &OW,
// pool): convolutions, float and int8.
template <typename Reshape>
void* reshape_image(Reshaped& reshaped, Reshape reshape, xnn_operator_t op, size_t n, size_t h, size_t w,
                    const char* what) {
  return reshaped.ensure({n, h, w}, [&](size_t* size, size_t* alignment) {
    size_t oh = 0, ow = 0;
    check(reshape(op, n, h, w, size, alignment, &oh, &ow, threadpool()), what);
  });
}

// Reshapes (when the shapes changed), sets up and runs a binary elementwise operator (float or int8).
void run_binary(xnn_operator_t op, Reshaped& reshaped, const std::vector<size_t>& a, const std::vector<size_t>& b,
                const void* x, const void* z, void* y, const char* what);

// The output bounds XNNPACK's binary and mean operators do not take, applied after them.
template <typename T>
void clamp_in_place(T* __restrict y, int64_t n, T lo, T hi) {
  if (!(lo > std::numeric_limits<T>::lowest() || hi < std::numeric_limits<T>::max())) return;
  for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(y[i], lo), hi);
}

inline float lower(const std::optional<double>& v) { return v ? static_cast<float>(*v) : -INFINITY; }
inline float upper(const std::optional<double>& v) { return v ? static_cast<float>(*v) : INFINITY; }

// The output bounds a step fuses (its own ReLU, then folded ReLU/clamp steps).
struct Bounds {
  float lo = -INFINITY, hi = INFINITY;
  Kernel after;  // the folded step's own kernel, for the own-kernel path of the fused step
  // clamp(v, a, b) after clamp(v, lo, hi) is clamp(v, max(lo, a), min(hi, b)) while lo < hi
  bool fold(float a, float b) {
    const float l = std::max(lo, a), h = std::min(hi, b);
    if (!(l < h)) return false;  // XNNPACK needs min < max; torch's clamp with min > max gives max
    lo = l;
    hi = h;
    return true;
  }
};

// The own kernel on NCHW values (the inputs XNNPACK's step does not take), then a folded step's.
Array own(Slots& slots, const std::vector<uint32_t>& reads, const Kernel& kernel, const Kernel& after);

// Whether numpy broadcasts shapes a and b together.
bool broadcastable(const Shape& a, const Shape& b);

// The result of a step a FAKE_QUANTIZE (and ReLU/clamp steps before it) folded into (xnn_int8.cpp).
struct Requantized {
  QuantizeAttrs attrs;           // the FAKE_QUANTIZE's
  Grid grid;                     // its int8 grid
  int8_t min = -128, max = 127;  // the folded ReLU/clamp on that grid
  std::vector<Kernel> after;     // the folded steps' own kernels, in order (the last the FAKE_QUANTIZE's)
};

// The FAKE_QUANTIZE of `grid` on the int8 range (the grid of a value that is int8 already).
QuantizeAttrs attrs_of(const Grid& grid);

// float values on a FAKE_QUANTIZE's grid -> its int8 values (exact for values on it).
Array to_int8(const Array& x, const QuantizeAttrs& attrs);

// A step with an int8 result on the own kernels, for inputs XNNPACK's operator does not take (the
// own kernel's error, or an unbatched input): its float result, then the int8 values of the grid it is on.
Array via_float(const Inputs& args, const Kernel& kernel, const Requantized& out, Stored* stored);

// The pooling steps of xnn.cpp on int8 values (xnn_int8.cpp picks them): max pooling keeps the
// grid `in`; global average pooling rounds to `out`'s.
// Whether XNNPACK's max pooling takes these windows.
bool xnn_max_pool_takes(const Pool2dAttrs& attrs);
std::shared_ptr<FastStep> make_max_pool(const Pool2dAttrs& attrs, Kernel kernel, Grid in);
std::shared_ptr<FastStep> make_global_avg_pool(Kernel kernel, Grid in, Requantized out);

struct MethodPlan;
struct Step;
using Constants = std::map<uint32_t, const Array*>;  // the plan's weights by slot

// The weight step.reads[k] reads, or null when that is no weight.
const Array* constant_of(const Constants& constants, const Step& step, size_t k);

// Folds the only reader of step i's result into step i when it is a float32 ReLU or clamp (not
// necessarily the next step: sole_reader in plan.h): its bounds join `bounds` (its kernel is
// bounds.after), step i writes its result, and it is marked removed. Whether it did.
bool fold_clamp(MethodPlan& plan, std::vector<bool>& removed, size_t i, Bounds& bounds);

// The int8 path's plan pass (xnn_int8.cpp), which prepare_fast_steps runs over the steps in order.
class Int8Planner {
 public:
  Int8Planner(MethodPlan& plan, std::vector<bool>& removed, const Constants& constants);
  // Gives step i its int8 step when it has one (folding into it the ReLU/clamp and FAKE_QUANTIZE
  // steps that carry its result to an 8-bit grid); whether it did.
  bool prepare(size_t i);
  // Records what step i, prepared, leaves in the slot it writes: int8 values or not.
  void track(size_t i);

 private:
  // Whether a step after i may read step i's result as int8 values (a FAKE_QUANTIZE writes int8
  // values only then: a float reader would have them dequantized again).
  bool read_as_int8(size_t i) const;

  MethodPlan& plan_;
  std::vector<bool>& removed_;
  const Constants& constants_;
  std::vector<std::optional<Grid>> grids_;  // per slot: the grid of its current value when int8
};

}  // namespace liteexport::demo_backend
