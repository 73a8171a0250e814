// The kernel table: the one place that maps a demo opcode to its kernel family. Arity and
// attribute types come from the op spec (schema/demo_ops.toml) through the shared decoder.
#include "kernels.h"

#include "demo_traits_generated.h"

// the case labels of a generated family list (demo_traits_generated.h)
#define LITEEXPORT_CASE(OP) case Op::OP:
#define LITEEXPORT_MATH_CASE(OP, kernel) case Op::OP:

namespace liteexport::demo_backend {

namespace {

template <typename A>
const A& as(const Attrs& attrs) {
  return std::get<A>(attrs);  // the decoder checked the attribute type
}

}  // namespace

// A switch without default over the generated enum: a new opcode without a kernel here does
// not compile (-Werror=switch), whatever flags the build uses.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
Kernel bind_kernel(Op op, const Attrs& a, size_t n_inputs) {
  switch (op) {
    // the families of the op spec (schema/demo_ops.toml `family`), each op a case
    LITEEXPORT_DEMO_BINARY_OPS(LITEEXPORT_CASE) return make_binary(op, as<BinaryAttrs>(a), n_inputs);
    LITEEXPORT_DEMO_UNARY_OPS(LITEEXPORT_CASE) return make_unary(op);
    LITEEXPORT_DEMO_MATH_OPS(LITEEXPORT_MATH_CASE) return make_math(op);
    LITEEXPORT_DEMO_COMPARE_OPS(LITEEXPORT_CASE) return make_compare(op, as<BinaryAttrs>(a), n_inputs);
    LITEEXPORT_DEMO_BITWISE_OPS(LITEEXPORT_CASE) return make_bitwise(op);
    LITEEXPORT_DEMO_ROUNDING_OPS(LITEEXPORT_CASE) return make_rounding(op, as<BinaryAttrs>(a), n_inputs);
    case Op::GELU: return make_gelu(as<GeluAttrs>(a));
    case Op::SOFTMAX: return make_softmax(as<AxisAttrs>(a), false);
    case Op::LOG_SOFTMAX: return make_softmax(as<AxisAttrs>(a), true);
    case Op::MATMUL: return make_matmul();
    case Op::LINEAR: return make_linear(as<FusedAttrs>(a));  // x @ W.T + b [relu]
    case Op::CONV2D: return make_conv2d(as<Conv2dAttrs>(a));
    case Op::CHANNEL_AFFINE: return make_channel_affine();  // x*scale+shift on dim 1
    case Op::LAYER_NORM: return make_layer_norm(as<LayerNormAttrs>(a));
    case Op::MAX_POOL2D: return make_max_pool2d(as<Pool2dAttrs>(a));
    case Op::AVG_POOL2D: return make_avg_pool2d(as<Pool2dAttrs>(a));
    case Op::ADAPTIVE_AVG_POOL2D: return make_adaptive_avg_pool2d(as<ShapeAttrs>(a));
    case Op::TRANSPOSE: return make_transpose(as<PermuteAttrs>(a));
    case Op::RESHAPE: return make_reshape(as<ShapeAttrs>(a));
    case Op::FLATTEN: return make_flatten(as<FlattenAttrs>(a));
    case Op::CAT: return make_cat(as<AxisAttrs>(a));
    case Op::CLAMP: return make_clamp(as<ClampAttrs>(a));  // min(max(x, lo), hi)
    case Op::HARDSIGMOID: return make_hardsigmoid();
    case Op::HARDSWISH: return make_hardswish();
    case Op::SILU: return make_silu();
    case Op::MEAN: return make_mean(as<ReduceAttrs>(a));
    case Op::SUM: return make_sum(as<ReduceAttrs>(a));
    case Op::SLICE: return make_slice(as<SliceAttrs>(a));
    case Op::EXPAND: return make_expand(as<ShapeAttrs>(a));
    case Op::CUMSUM: return make_cumsum(as<AxisAttrs>(a));
    case Op::CAST: return make_cast(as<CastAttrs>(a));
    case Op::EMBEDDING: return make_embedding();
    case Op::GATHER: return make_gather(as<AxisAttrs>(a));
    case Op::INDEX_SELECT: return make_index_select(as<AxisAttrs>(a));
    case Op::RESIZE2D: return make_resize2d(as<ResizeAttrs>(a));
    case Op::FAKE_QUANTIZE: return make_fake_quantize(as<QuantizeAttrs>(a));
    case Op::WHERE: return make_where();
    case Op::ARANGE_LIKE: return make_arange_like(as<ArangeLikeAttrs>(a));
    case Op::FULL: return make_full(as<FillAttrs>(a));
    case Op::TRIU: return make_triu(as<DiagonalAttrs>(a));
    case Op::TRIL: return make_tril(as<DiagonalAttrs>(a));
    case Op::ARGMAX: return make_argmax(as<ArgReduceAttrs>(a));
    case Op::ARGMIN: return make_argmin(as<ArgReduceAttrs>(a));
    case Op::TOPK: return make_topk(as<TopKAttrs>(a));
    case Op::ATTENTION: return make_attention(as<AttentionAttrs>(a));
    case Op::INDEX_COPY: return make_index_copy(as<AxisAttrs>(a));
    case Op::STATE_WRITE: return make_state_write();
  }
  throw KernelError("opcode " + std::to_string(static_cast<int>(op)) + " has no kernel");  // unreachable
}
#pragma GCC diagnostic pop

}  // namespace liteexport::demo_backend
