// The demo instruction set's kernel table and the kernel families (one .cpp each).
// A factory binds an instruction's attributes (the shared decoder, native_format/decoder/
// demo_program.h, has checked them); the bound kernel computes one fresh output from its
// inputs and reports bad inputs with KernelError (-> ExecutionError naming the instruction).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../array.h"
#include "attrs.h"
#include "gemm.h"  // gemm_acc, gemm_bt: the matrix products the families share

namespace liteexport::demo_backend {

using demo_ops::Op;  // generated from schema/demo_ops.toml
// The default: of a family switch below (make_binary, make_math, ...): each names its members as
// cases, and an opcode bind_kernel routed there by mistake is an internal error, not another op.
using demo_program::not_in_family;

struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Inputs = std::vector<const Array*>;
using Kernel = std::function<Array(const Inputs&)>;

// The kernel of `op` with its attributes bound (of the op's type, checked by the decoder):
// kernels.cpp's table, a switch over every opcode.
Kernel bind_kernel(Op op, const Attrs& attrs, size_t n_inputs);

// --- families ---
Kernel make_binary(Op op, const BinaryAttrs& a, size_t n_inputs);       // elementwise.cpp
Kernel make_unary(Op op);                                               // elementwise.cpp
Kernel make_gelu(const GeluAttrs& a);                                   // elementwise.cpp
Kernel make_softmax(const AxisAttrs& a, bool log);                      // elementwise.cpp
Kernel make_matmul();                                                   // linalg.cpp
Kernel make_linear(const FusedAttrs& a);                                // linalg.cpp
Kernel make_conv2d(const Conv2dAttrs& a);                               // conv.cpp
Kernel make_channel_affine();                                           // normalization.cpp
Kernel make_layer_norm(const LayerNormAttrs& a);                        // normalization.cpp
Kernel make_max_pool2d(const Pool2dAttrs& a);                           // pooling.cpp
Kernel make_avg_pool2d(const Pool2dAttrs& a);                           // pooling.cpp
Kernel make_adaptive_avg_pool2d(const ShapeAttrs& a);                   // pooling.cpp
Kernel make_transpose(const PermuteAttrs& a);                           // layout.cpp
Kernel make_reshape(const ShapeAttrs& a);                               // layout.cpp
Kernel make_flatten(const FlattenAttrs& a);                             // layout.cpp
Kernel make_cat(const AxisAttrs& a);                                    // layout.cpp
Kernel make_clamp(const ClampAttrs& a);                                 // activations.cpp
Kernel make_hardsigmoid();                                              // activations.cpp
Kernel make_hardswish();                                                // activations.cpp
Kernel make_silu();                                                     // activations.cpp
Kernel make_math(Op op);  // the spec's math family (LITEEXPORT_DEMO_MATH_OPS) // activations.cpp
Kernel make_mean(const ReduceAttrs& a);                                 // reductions.cpp
Kernel make_sum(const ReduceAttrs& a);                                  // reductions.cpp
Kernel make_slice(const SliceAttrs& a);                                 // slicing.cpp
Kernel make_expand(const ShapeAttrs& a);                                // slicing.cpp
Kernel make_cumsum(const AxisAttrs& a);                                 // typed.cpp
Kernel make_cast(const CastAttrs& a);                                   // typed.cpp
Kernel make_compare(Op op, const BinaryAttrs& a, size_t n_inputs);      // typed.cpp: EQ NE LT LE GT GE
Kernel make_bitwise(Op op);                                             // typed.cpp: BITWISE_NOT/AND/OR
Kernel make_where();                                                    // typed.cpp
Kernel make_arange_like(const ArangeLikeAttrs& a);                      // typed.cpp
Kernel make_full(const FillAttrs& a);                                   // typed.cpp
Kernel make_embedding();                                                // indexing.cpp
Kernel make_gather(const AxisAttrs& a);                                 // indexing.cpp
Kernel make_index_select(const AxisAttrs& a);                           // indexing.cpp
Kernel make_resize2d(const ResizeAttrs& a);                             // resize.cpp
Kernel make_fake_quantize(const QuantizeAttrs& a);                      // activations.cpp
Kernel make_triu(const DiagonalAttrs& a);                               // selection.cpp
Kernel make_tril(const DiagonalAttrs& a);                               // selection.cpp
Kernel make_argmax(const ArgReduceAttrs& a);                            // selection.cpp
Kernel make_argmin(const ArgReduceAttrs& a);                            // selection.cpp
Kernel make_topk(const TopKAttrs& a);                                   // selection.cpp
Kernel make_attention(const AttentionAttrs& a);                         // attention.cpp
Kernel make_rounding(Op op, const BinaryAttrs& a, size_t n_inputs);     // rounding.cpp: FLOOR_DIV TRUNC_DIV REMAINDER
// state.cpp: the two in-place writes of a state (operand 0, whose buffer they write and return;
// run_plan hands them the state's own Array, state.h)
Kernel make_index_copy(const AxisAttrs& a);
Kernel make_state_write();

// --- helpers shared by the families ---
// y = max(y, 0) in place; NaN stays NaN, as in torch.
void relu_inplace(float* y, int64_t n);
// A normalized axis, or KernelError with numpy's text.
int64_t normalize_axis(int64_t axis, int64_t ndim);
// The axis of a typed op's input from 0 (a 0-d input has one axis), or KernelError with runtime_py's
// text (typed.py checked_axis).
int64_t typed_axis(int64_t axis, const Array& x);

}  // namespace liteexport::demo_backend
