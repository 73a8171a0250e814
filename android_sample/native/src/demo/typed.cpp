// The ops issue 20 added for text models: cumsum and casts over the core's float32 arrays (sin and
// cos are in activations.cpp's make_math), and the typed ops (embedding, gather, index_select,
// comparisons, bitwise logic, where).
// The core's Array holds float32 only so far: build_plan refuses any program with an int64,
// int32 or bool slot (DTYPE_NOT_SUPPORTED) before a kernel is bound, so a typed op, whose
// operands or result are typed by the op spec, never reaches bind_kernel from a valid program.
#include "../errors.h"
#include "kernels.h"

namespace liteexport::demo_backend {

Kernel make_cumsum(const AxisAttrs& a) {
  const int64_t axis_attr = a.axis;
  return [axis_attr](const Inputs& in) {
    const Array& x = *in[0];
    float* y;
    Array out = Array::zeros(x.shape, &y);
    if (x.dim() == 0) {
      normalize_axis(axis_attr, 1);
      y[0] = x.ptr()[0];
      return out;
    }
    const int64_t axis = normalize_axis(axis_attr, x.dim());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.shape[static_cast<size_t>(d)];
    const int64_t length = x.shape[static_cast<size_t>(axis)];
    const float* p = x.ptr();
    // sequentially along the axis, in float32: torch's CPU cumsum and numpy's order
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        float acc = 0.0f;
        for (int64_t k = 0; k < length; ++k) {
          const int64_t at = (o * length + k) * inner + i;
          acc += p[at];
          y[at] = acc;
        }
      }
    return out;
  };
}

Kernel make_cast(const CastAttrs& a) {
  if (a.dtype != static_cast<int64_t>(demo_ops::DType::Float32))
    throw KernelError(std::string("CAST to ") + demo_ops::dtype_name(static_cast<int>(a.dtype)) +
                      " needs typed arrays, which this core does not have yet");
  return [](const Inputs& in) { return *in[0]; };  // float32 to float32: the value itself (arrays are read-only)
}

Kernel make_typed_op(Op op) {
  throw KernelError(std::string(demo_ops::kOps[static_cast<size_t>(op)].name) +
                    " reads or writes int64/int32/bool values, which this core does not hold yet");
}

}  // namespace liteexport::demo_backend
