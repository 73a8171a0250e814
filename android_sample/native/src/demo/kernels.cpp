// KERNELS: the one place that maps a demo OpCode to its arity, attribute type and factory.
#include "kernels.h"

#include <cstdint>

namespace liteexport::demo_backend {

const char* attrs_name(size_t index) {
  static const char* const names[] = {"none",         "BinaryAttrs",    "GeluAttrs",   "AxisAttrs",
                                      "FusedAttrs",   "Conv2dAttrs",    "LayerNormAttrs", "Pool2dAttrs",
                                      "ShapeAttrs",   "PermuteAttrs",   "FlattenAttrs",   "ClampAttrs",
                                      "ReduceAttrs",  "SliceAttrs"};
  return index < sizeof names / sizeof names[0] ? names[index] : "?";
}

namespace {

template <typename A>
const A& as(const Attrs& attrs) {
  return std::get<A>(attrs);  // the plan checked the attribute kind before calling a factory
}

Factory binary(Op op) {
  return [op](const Attrs& a, size_t n) { return make_binary(op, as<BinaryAttrs>(a), n); };
}
Factory fixed(Kernel (*make)()) {
  return [make](const Attrs&, size_t) { return make(); };
}
Factory unary(Op op) {
  return [op](const Attrs&, size_t) { return make_unary(op); };
}
template <typename A>
Factory with(Kernel (*make)(const A&)) {
  return [make](const Attrs& a, size_t) { return make(as<A>(a)); };
}

constexpr size_t kAny = SIZE_MAX;
constexpr size_t kBinary = 1, kGelu = 2, kAxis = 3, kFused = 4, kConv2d = 5, kLayerNorm = 6, kPool2d = 7,
                 kShape = 8, kPermute = 9, kFlatten = 10, kClamp = 11, kReduce = 12, kSlice = 13;

const std::vector<KernelSpec>& table() {
  static const std::vector<KernelSpec> specs = {
      {"ADD", 1, 2, kBinary, true, binary(Op::ADD)},  // a + alpha*b
      {"SUB", 1, 2, kBinary, true, binary(Op::SUB)},  // a - alpha*b; reverse: b - alpha*a (rsub)
      {"MUL", 1, 2, kBinary, true, binary(Op::MUL)},
      {"DIV", 1, 2, kBinary, true, binary(Op::DIV)},
      {"NEG", 1, 1, 0, false, unary(Op::NEG)},
      {"RELU", 1, 1, 0, false, unary(Op::RELU)},
      {"SIGMOID", 1, 1, 0, false, unary(Op::SIGMOID)},
      {"TANH", 1, 1, 0, false, unary(Op::TANH)},
      {"GELU", 1, 1, kGelu, true, with<GeluAttrs>(make_gelu)},
      {"SOFTMAX", 1, 1, kAxis, false, [](const Attrs& a, size_t) { return make_softmax(as<AxisAttrs>(a), false); }},
      {"LOG_SOFTMAX", 1, 1, kAxis, false,
       [](const Attrs& a, size_t) { return make_softmax(as<AxisAttrs>(a), true); }},
      {"MATMUL", 2, 2, 0, false, fixed(make_matmul)},
      {"LINEAR", 2, 3, kFused, true, with<FusedAttrs>(make_linear)},  // x @ W.T + b [relu]
      {"CONV2D", 2, 3, kConv2d, true, with<Conv2dAttrs>(make_conv2d)},
      {"CHANNEL_AFFINE", 3, 3, 0, false, fixed(make_channel_affine)},  // x*scale+shift on dim 1
      {"LAYER_NORM", 1, 3, kLayerNorm, false, with<LayerNormAttrs>(make_layer_norm)},
      {"MAX_POOL2D", 1, 1, kPool2d, false, with<Pool2dAttrs>(make_max_pool2d)},
      {"AVG_POOL2D", 1, 1, kPool2d, false, with<Pool2dAttrs>(make_avg_pool2d)},
      {"ADAPTIVE_AVG_POOL2D", 1, 1, kShape, false, with<ShapeAttrs>(make_adaptive_avg_pool2d)},
      {"TRANSPOSE", 1, 1, kPermute, false, with<PermuteAttrs>(make_transpose)},
      {"RESHAPE", 1, 1, kShape, false, with<ShapeAttrs>(make_reshape)},
      {"FLATTEN", 1, 1, kFlatten, false, with<FlattenAttrs>(make_flatten)},
      {"CAT", 1, kAny, kAxis, false, with<AxisAttrs>(make_cat)},
      {"CLAMP", 1, 1, kClamp, false, with<ClampAttrs>(make_clamp)},  // min(max(x, lo), hi)
      {"HARDSIGMOID", 1, 1, 0, false, fixed(make_hardsigmoid)},
      {"HARDSWISH", 1, 1, 0, false, fixed(make_hardswish)},
      {"SILU", 1, 1, 0, false, fixed(make_silu)},
      {"MEAN", 1, 1, kReduce, false, with<ReduceAttrs>(make_mean)},
      {"SUM", 1, 1, kReduce, false, with<ReduceAttrs>(make_sum)},
      {"SLICE", 1, 1, kSlice, false, with<SliceAttrs>(make_slice)},
      {"EXPAND", 1, 1, kShape, false, with<ShapeAttrs>(make_expand)},
  };
  return specs;
}

}  // namespace

const KernelSpec* kernel_spec(uint16_t op) {
  const auto& specs = table();
  return op < specs.size() ? &specs[op] : nullptr;
}

}  // namespace liteexport::demo_backend
