// GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml
// The demo attribute tables (schema/demo_ops.toml): one struct per Attributes union member, and
// the field and constraint tables native_format/decoder/demo_program.h reads and checks them with
// (one loop each). Field names, types and defaults are runtime_py's dataclasses'. Each struct's
// kFieldCount is static_asserted next to every XNNPACK guard that reads its fields (xnn*.cpp), so a
// field added to the spec stops the build there until the fast path has been checked against it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "demo_attr_rows.h"

namespace liteexport::demo_attrs {

struct BinaryAttrs {
  static constexpr int kFieldCount = 3;
  double alpha{1.0};  // multiplies the second operand (add/sub)
  std::optional<double> scalar{};  // the scalar operand when the instruction has one input
  bool reverse{false};  // operands swapped: scalar OP x, or b OP a
};
struct GeluAttrs {
  static constexpr int kFieldCount = 1;
  bool tanh_approximation{false};
};
struct AxisAttrs {
  static constexpr int kFieldCount = 1;
  int64_t axis{};  // may be negative
};
struct FusedAttrs {
  static constexpr int kFieldCount = 1;
  Activation activation{Activation::None};  // applied to the result in place
};
struct Conv2dAttrs {
  static constexpr int kFieldCount = 5;
  Pair stride{1, 1};  // [h, w]
  Pair padding{0, 0};  // [h, w]
  Pair dilation{1, 1};  // [h, w]
  int64_t groups{1};
  Activation activation{Activation::None};
};
struct LayerNormAttrs {
  static constexpr int kFieldCount = 2;
  int64_t normalized_ndim{};  // the last normalized_ndim dimensions are normalized
  double eps{};
};
struct Pool2dAttrs {
  static constexpr int kFieldCount = 7;
  Pair kernel{};  // [h, w]
  Pair stride{};  // [h, w]
  Pair padding{0, 0};  // [h, w]
  Pair dilation{1, 1};  // [h, w] (max pool only)
  bool ceil_mode{false};
  bool count_include_pad{true};  // avg pool only
  std::optional<int64_t> divisor_override{};  // avg pool only, 0 = none
};
struct ShapeAttrs {
  static constexpr int kFieldCount = 1;
  std::vector<int64_t> dims{};
};
struct PermuteAttrs {
  static constexpr int kFieldCount = 1;
  std::vector<int64_t> perm{};
};
struct FlattenAttrs {
  static constexpr int kFieldCount = 2;
  int64_t start_dim{};
  int64_t end_dim{};
};
struct ClampAttrs {
  static constexpr int kFieldCount = 2;
  std::optional<double> min{};  // None: no lower bound
  std::optional<double> max{};  // None: no upper bound
};
struct ReduceAttrs {
  static constexpr int kFieldCount = 2;
  std::vector<int64_t> axes{};  // distinct, may be negative; empty: every axis
  bool keepdim{false};
};
struct SliceAttrs {
  static constexpr int kFieldCount = 4;
  int64_t axis{};  // may be negative
  int64_t start{0};  // may be negative (counted from the end); clamped to the axis
  int64_t end{9223372036854775807};  // exclusive; as start
  int64_t step{1};  // > 0
};
struct CastAttrs {
  static constexpr int kFieldCount = 1;
  int64_t dtype{};  // the result's dtype, a DType value (c10::ScalarType numbering)
};
struct ArangeLikeAttrs {
  static constexpr int kFieldCount = 3;
  int64_t axis{};  // the reference's axis whose size is S; may be negative
  int64_t start{0};  // the first value
  int64_t end_offset{0};  // the end (exclusive) is S + end_offset; before start it is an error, as in torch.arange
};
struct ResizeAttrs {
  static constexpr int kFieldCount = 5;
  bool bilinear{};  // false: nearest (torch's 'nearest', floor of the scaled index)
  Pair size{};  // [h, w] of the output
  bool align_corners{false};  // bilinear only: corner pixels' centres align
  std::optional<double> scale_h{};  // the height's scale factor (> 0) torch maps with, if given
  std::optional<double> scale_w{};  // as scale_h, for the width
};
struct DiagonalAttrs {
  static constexpr int kFieldCount = 1;
  int64_t diagonal{0};  // may be negative
};
struct ArgReduceAttrs {
  static constexpr int kFieldCount = 2;
  int64_t axis{};  // may be negative
  bool keepdim{false};
};
struct TopKAttrs {
  static constexpr int kFieldCount = 3;
  int64_t k{};
  int64_t axis{};  // may be negative
  bool largest{true};  // false: the k smallest, ascending
};
struct QuantizeAttrs {
  static constexpr int kFieldCount = 4;
  double scale{};  // the quantization step, > 0
  int64_t zero_point{0};  // the integer that stands for 0.0
  int64_t quant_min{0};  // the smallest integer (0 for quint8, -128 for qint8)
  int64_t quant_max{255};  // the largest integer (255 for quint8, 127 for qint8)
};
struct FillAttrs {
  static constexpr int kFieldCount = 2;
  std::vector<int64_t> dims{};  // per dim: the static size (axes[i] == -1), else the offset added to the reference's size
  std::vector<int64_t> axes{};  // per dim: -1 for a static size, else the reference's axis (>= 0) whose size it is
};
struct AttentionAttrs {
  static constexpr int kFieldCount = 1;
  double scale{};  // multiplies q k^T (1 / sqrt(head dim) in torch's default)
};

// The variant's index is the fbs union tag (0: no attributes).
using Attrs = std::variant<std::monostate, BinaryAttrs, GeluAttrs, AxisAttrs, FusedAttrs, Conv2dAttrs, LayerNormAttrs, Pool2dAttrs, ShapeAttrs, PermuteAttrs, FlattenAttrs, ClampAttrs, ReduceAttrs, SliceAttrs, CastAttrs, ArangeLikeAttrs, ResizeAttrs, DiagonalAttrs, ArgReduceAttrs, TopKAttrs, QuantizeAttrs, FillAttrs, AttentionAttrs>;

template <>
struct Table<BinaryAttrs> {
  static constexpr const char* name = "Binary";
  static inline const std::vector<FieldOf<BinaryAttrs>> fields = {{"alpha", Wire::F64, 4, 0, nullptr, &BinaryAttrs::alpha}, {"scalar", Wire::OptF64, 6, 8, "has_scalar", &BinaryAttrs::scalar}, {"reverse", Wire::Bool, 10, 0, nullptr, &BinaryAttrs::reverse}};
  static inline const std::vector<Rule> rules = {{Check::Equals, 0, -1, 1.0, 0, false, {8070589105072766988ull, 0ull}, "alpha={got} is only allowed for ADD and SUB", kNoCode, NamedRule::None}, {Check::Rule, -1, -1, 0.0, 0, false, {0ull, 0ull}, "a scalar operand is needed with exactly one input, and only then", kNoCode, NamedRule::ScalarIffOneInput}};
};
template <>
struct Table<GeluAttrs> {
  static constexpr const char* name = "Gelu";
  static inline const std::vector<FieldOf<GeluAttrs>> fields = {{"tanh_approximation", Wire::Bool, 4, 0, nullptr, &GeluAttrs::tanh_approximation}};
  static inline const std::vector<Rule> rules = {};
};
template <>
struct Table<AxisAttrs> {
  static constexpr const char* name = "Axis";
  static inline const std::vector<FieldOf<AxisAttrs>> fields = {{"axis", Wire::I32, 4, 0, nullptr, &AxisAttrs::axis}};
  static inline const std::vector<Rule> rules = {};
};
template <>
struct Table<FusedAttrs> {
  static constexpr const char* name = "Fused";
  static inline const std::vector<FieldOf<FusedAttrs>> fields = {{"activation", Wire::Enum, 4, 0, nullptr, &FusedAttrs::activation}};
  static inline const std::vector<Rule> rules = {};
};
template <>
struct Table<Conv2dAttrs> {
  static constexpr const char* name = "Conv2d";
  static inline const std::vector<FieldOf<Conv2dAttrs>> fields = {{"stride", Wire::Pair, 4, 0, nullptr, &Conv2dAttrs::stride}, {"padding", Wire::Pair, 6, 0, nullptr, &Conv2dAttrs::padding}, {"dilation", Wire::Pair, 8, 0, nullptr, &Conv2dAttrs::dilation}, {"groups", Wire::I32, 10, 0, nullptr, &Conv2dAttrs::groups}, {"activation", Wire::Enum, 12, 0, nullptr, &Conv2dAttrs::activation}};
  static inline const std::vector<Rule> rules = {{Check::Min, 0, -1, 1.0, 0, false, {0ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}, {Check::Min, 1, -1, 0.0, 0, false, {0ull, 0ull}, "{field} must be non-negative, got {got}", kNoCode, NamedRule::None}, {Check::Min, 2, -1, 1.0, 0, false, {0ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}, {Check::Min, 3, -1, 1.0, 0, false, {0ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}};
};
template <>
struct Table<LayerNormAttrs> {
  static constexpr const char* name = "LayerNorm";
  static inline const std::vector<FieldOf<LayerNormAttrs>> fields = {{"normalized_ndim", Wire::I32, 4, 0, nullptr, &LayerNormAttrs::normalized_ndim}, {"eps", Wire::F64, 6, 0, nullptr, &LayerNormAttrs::eps}};
  static inline const std::vector<Rule> rules = {{Check::Min, 0, -1, 1.0, 0, false, {0ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}};
};
template <>
struct Table<Pool2dAttrs> {
  static constexpr const char* name = "Pool2d";
  static inline const std::vector<FieldOf<Pool2dAttrs>> fields = {{"kernel", Wire::Pair, 4, 0, nullptr, &Pool2dAttrs::kernel}, {"stride", Wire::Pair, 6, 0, nullptr, &Pool2dAttrs::stride}, {"padding", Wire::Pair, 8, 0, nullptr, &Pool2dAttrs::padding}, {"dilation", Wire::Pair, 10, 0, nullptr, &Pool2dAttrs::dilation}, {"ceil_mode", Wire::Bool, 12, 0, nullptr, &Pool2dAttrs::ceil_mode}, {"count_include_pad", Wire::Bool, 14, 0, nullptr, &Pool2dAttrs::count_include_pad}, {"divisor_override", Wire::OptI32, 16, 0, nullptr, &Pool2dAttrs::divisor_override}};
  static inline const std::vector<Rule> rules = {{Check::Min, 0, -1, 1.0, 0, false, {0ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}, {Check::Min, 1, -1, 1.0, 0, false, {0ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}, {Check::Min, 2, -1, 0.0, 0, false, {0ull, 0ull}, "{field} must be non-negative, got {got}", kNoCode, NamedRule::None}, {Check::Min, 3, -1, 1.0, 0, false, {0ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}, {Check::Rule, -1, -1, 0.0, 0, false, {0ull, 0ull}, "padding {padding} should be at most half of the kernel size {kernel}", kNoCode, NamedRule::PaddingAtMostHalfKernel}, {Check::Equals, 3, -1, 1.0, 0, false, {131072ull, 0ull}, "avg_pool2d has no dilation, got {got}", kNoCode, NamedRule::None}, {Check::Min, 6, -1, 0.0, 0, false, {131072ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}};
};
template <>
struct Table<ShapeAttrs> {
  static constexpr const char* name = "Shape";
  static inline const std::vector<FieldOf<ShapeAttrs>> fields = {{"dims", Wire::I64s, 4, 0, nullptr, &ShapeAttrs::dims}};
  static inline const std::vector<Rule> rules = {{Check::Length, 0, -1, 2.0, 0, false, {262144ull, 0ull}, nullptr, static_cast<int>(Code::OUTPUT_SIZE_LENGTH), NamedRule::None}, {Check::MaxCount, 0, -1, 1.0, -1, true, {1048576ull, 0ull}, "shape {got} may hold one -1 and otherwise sizes >= 0", kNoCode, NamedRule::None}, {Check::Min, 0, -1, -1.0, 0, false, {1048576ull, 0ull}, "shape {got} may hold one -1 and otherwise sizes >= 0", kNoCode, NamedRule::None}, {Check::Min, 0, -1, -1.0, 0, false, {1073741824ull, 0ull}, "shape {got} may hold -1 and otherwise sizes >= 0", kNoCode, NamedRule::None}, {Check::Length, 0, -1, 2.0, 0, false, {262144ull, 0ull}, "output size must be 2 positive sizes (or -1), got {got}", kNoCode, NamedRule::None}, {Check::Min, 0, -1, 1.0, -1, true, {262144ull, 0ull}, "output size must be 2 positive sizes (or -1), got {got}", kNoCode, NamedRule::None}};
};
template <>
struct Table<PermuteAttrs> {
  static constexpr const char* name = "Permute";
  static inline const std::vector<FieldOf<PermuteAttrs>> fields = {{"perm", Wire::I32s, 4, 0, nullptr, &PermuteAttrs::perm}};
  static inline const std::vector<Rule> rules = {{Check::Rule, -1, -1, 0.0, 0, false, {0ull, 0ull}, "{got} is not a permutation of the axes 0..{last}", kNoCode, NamedRule::Permutation}};
};
template <>
struct Table<FlattenAttrs> {
  static constexpr const char* name = "Flatten";
  static inline const std::vector<FieldOf<FlattenAttrs>> fields = {{"start_dim", Wire::I32, 4, 0, nullptr, &FlattenAttrs::start_dim}, {"end_dim", Wire::I32, 6, 0, nullptr, &FlattenAttrs::end_dim}};
  static inline const std::vector<Rule> rules = {};
};
template <>
struct Table<ClampAttrs> {
  static constexpr const char* name = "Clamp";
  static inline const std::vector<FieldOf<ClampAttrs>> fields = {{"min", Wire::OptF64, 4, 8, "has_min", &ClampAttrs::min}, {"max", Wire::OptF64, 6, 10, "has_max", &ClampAttrs::max}};
  static inline const std::vector<Rule> rules = {{Check::AnyPresent, 0, 1, 0.0, 0, false, {0ull, 0ull}, "clamp needs at least one of min and max", kNoCode, NamedRule::None}};
};
template <>
struct Table<ReduceAttrs> {
  static constexpr const char* name = "Reduce";
  static inline const std::vector<FieldOf<ReduceAttrs>> fields = {{"axes", Wire::I32s, 4, 0, nullptr, &ReduceAttrs::axes}, {"keepdim", Wire::Bool, 6, 0, nullptr, &ReduceAttrs::keepdim}};
  static inline const std::vector<Rule> rules = {{Check::Distinct, 0, -1, 0.0, 0, false, {0ull, 0ull}, "{field} {got} repeat an axis", kNoCode, NamedRule::None}};
};
template <>
struct Table<SliceAttrs> {
  static constexpr const char* name = "Slice";
  static inline const std::vector<FieldOf<SliceAttrs>> fields = {{"axis", Wire::I32, 4, 0, nullptr, &SliceAttrs::axis}, {"start", Wire::I64, 6, 0, nullptr, &SliceAttrs::start}, {"end", Wire::I64, 8, 0, nullptr, &SliceAttrs::end}, {"step", Wire::I64, 10, 0, nullptr, &SliceAttrs::step}};
  static inline const std::vector<Rule> rules = {{Check::Min, 3, -1, 1.0, 0, false, {0ull, 0ull}, "{field} must be positive, got {got}", kNoCode, NamedRule::None}};
};
template <>
struct Table<CastAttrs> {
  static constexpr const char* name = "Cast";
  static inline const std::vector<FieldOf<CastAttrs>> fields = {{"dtype", Wire::I32, 4, 0, nullptr, &CastAttrs::dtype}};
  static inline const std::vector<Rule> rules = {{Check::Rule, -1, -1, 0.0, 0, false, {0ull, 0ull}, "{got} is not a compiled dtype (float32=6, int64=4, int32=3, bool=11)", kNoCode, NamedRule::KnownDtype}};
};
template <>
struct Table<ArangeLikeAttrs> {
  static constexpr const char* name = "ArangeLike";
  static inline const std::vector<FieldOf<ArangeLikeAttrs>> fields = {{"axis", Wire::I32, 4, 0, nullptr, &ArangeLikeAttrs::axis}, {"start", Wire::I64, 6, 0, nullptr, &ArangeLikeAttrs::start}, {"end_offset", Wire::I64, 8, 0, nullptr, &ArangeLikeAttrs::end_offset}};
  static inline const std::vector<Rule> rules = {};
};
template <>
struct Table<ResizeAttrs> {
  static constexpr const char* name = "Resize";
  static inline const std::vector<FieldOf<ResizeAttrs>> fields = {{"bilinear", Wire::Bool, 4, 0, nullptr, &ResizeAttrs::bilinear}, {"size", Wire::Pair, 6, 0, nullptr, &ResizeAttrs::size}, {"align_corners", Wire::Bool, 8, 0, nullptr, &ResizeAttrs::align_corners}, {"scale_h", Wire::OptF64, 10, 12, "has_scale_h", &ResizeAttrs::scale_h}, {"scale_w", Wire::OptF64, 14, 16, "has_scale_w", &ResizeAttrs::scale_w}};
  static inline const std::vector<Rule> rules = {{Check::Min, 1, -1, 1.0, 0, false, {0ull, 0ull}, "output size must be positive, got {got}", kNoCode, NamedRule::None}};
};
template <>
struct Table<DiagonalAttrs> {
  static constexpr const char* name = "Diagonal";
  static inline const std::vector<FieldOf<DiagonalAttrs>> fields = {{"diagonal", Wire::I64, 4, 0, nullptr, &DiagonalAttrs::diagonal}};
  static inline const std::vector<Rule> rules = {};
};
template <>
struct Table<ArgReduceAttrs> {
  static constexpr const char* name = "ArgReduce";
  static inline const std::vector<FieldOf<ArgReduceAttrs>> fields = {{"axis", Wire::I32, 4, 0, nullptr, &ArgReduceAttrs::axis}, {"keepdim", Wire::Bool, 6, 0, nullptr, &ArgReduceAttrs::keepdim}};
  static inline const std::vector<Rule> rules = {};
};
template <>
struct Table<TopKAttrs> {
  static constexpr const char* name = "TopK";
  static inline const std::vector<FieldOf<TopKAttrs>> fields = {{"k", Wire::I64, 4, 0, nullptr, &TopKAttrs::k}, {"axis", Wire::I32, 6, 0, nullptr, &TopKAttrs::axis}, {"largest", Wire::Bool, 8, 0, nullptr, &TopKAttrs::largest}};
  static inline const std::vector<Rule> rules = {{Check::Min, 0, -1, 0.0, 0, false, {0ull, 0ull}, "{field} must be non-negative, got {got}", kNoCode, NamedRule::None}};
};
template <>
struct Table<QuantizeAttrs> {
  static constexpr const char* name = "Quantize";
  static inline const std::vector<FieldOf<QuantizeAttrs>> fields = {{"scale", Wire::F64, 4, 0, nullptr, &QuantizeAttrs::scale}, {"zero_point", Wire::I64, 6, 0, nullptr, &QuantizeAttrs::zero_point}, {"quant_min", Wire::I64, 8, 0, nullptr, &QuantizeAttrs::quant_min}, {"quant_max", Wire::I64, 10, 0, nullptr, &QuantizeAttrs::quant_max}};
  static inline const std::vector<Rule> rules = {{Check::Rule, -1, -1, 0.0, 0, false, {0ull, 0ull}, "scale must be finite and > 0 and quant_min <= zero_point <= quant_max, got scale {scale}, zero point {zero_point}, range {quant_min}..{quant_max}", kNoCode, NamedRule::QuantizeRange}};
};
template <>
struct Table<FillAttrs> {
  static constexpr const char* name = "Fill";
  static inline const std::vector<FieldOf<FillAttrs>> fields = {{"dims", Wire::I64s, 4, 0, nullptr, &FillAttrs::dims}, {"axes", Wire::I32s, 6, 0, nullptr, &FillAttrs::axes}};
  static inline const std::vector<Rule> rules = {{Check::Min, 1, -1, -1.0, 0, false, {0ull, 0ull}, "{field} must be -1 (a static size) or a reference axis >= 0, got {got}", kNoCode, NamedRule::None}, {Check::Rule, -1, -1, 0.0, 0, false, {0ull, 0ull}, "dims {dims} and axes {axes} need one entry per dim each, and a static size (axis -1) must be >= 0", kNoCode, NamedRule::FillSizes}};
};
template <>
struct Table<AttentionAttrs> {
  static constexpr const char* name = "Attention";
  static inline const std::vector<FieldOf<AttentionAttrs>> fields = {{"scale", Wire::F64, 4, 0, nullptr, &AttentionAttrs::scale}};
  static inline const std::vector<Rule> rules = {{Check::Min, 0, -1, 0.0, 0, false, {0ull, 0ull}, "{field} must not be negative, got {got}", kNoCode, NamedRule::None}};
};

}  // namespace liteexport::demo_attrs
