// Decoded instruction attributes of demo programs (schema/demo_program.fbs). The variant's
// index equals the fbs union tag (Binary = 1 ... Slice = 13), 0 = no attributes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

namespace liteexport::demo_backend {

using Pair = std::array<int64_t, 2>;

struct BinaryAttrs {
  double alpha = 1.0;
  std::optional<double> scalar;
  bool reverse = false;
};
struct GeluAttrs {
  bool tanh_approximation = false;
};
struct AxisAttrs {
  int64_t axis = 0;
};
struct FusedAttrs {
  bool relu = false;
};
struct Conv2dAttrs {
  Pair stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  bool relu = false;
};
struct LayerNormAttrs {
  int64_t normalized_ndim = 0;
  double eps = 0;
};
struct Pool2dAttrs {
  Pair kernel{}, stride{}, padding{0, 0}, dilation{1, 1};
  bool ceil_mode = false, count_include_pad = true;
  int64_t divisor_override = 0;  // 0 = none
};
struct ShapeAttrs {
  std::vector<int64_t> dims;
};
struct PermuteAttrs {
  std::vector<int64_t> perm;
};
struct FlattenAttrs {
  int64_t start_dim = 0, end_dim = 0;
};

struct ClampAttrs {
  std::optional<double> min, max;  // nullopt: no bound
};
struct ReduceAttrs {
  std::vector<int64_t> axes;  // empty: every axis
  bool keepdim = false;
};
struct SliceAttrs {
  int64_t axis = 0, start = 0, end = INT64_MAX, step = 1;
};

using Attrs = std::variant<std::monostate, BinaryAttrs, GeluAttrs, AxisAttrs, FusedAttrs, Conv2dAttrs,
                           LayerNormAttrs, Pool2dAttrs, ShapeAttrs, PermuteAttrs, FlattenAttrs, ClampAttrs,
                           ReduceAttrs, SliceAttrs>;

// runtime_py's class name of an attribute kind ("BinaryAttrs"), "none" for index 0.
const char* attrs_name(size_t index);

}  // namespace liteexport::demo_backend
