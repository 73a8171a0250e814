// Kernel semantics the parity models exercise only partly: broadcasting, matmul's 1-D and
// batched forms, pooling windows, layout ops, and kernel error texts.
#include <cmath>

#include <gtest/gtest.h>

#include "kernel_check.h"
#include "demo/kernels.h"
#include "demo/windows.h"
#include "errors.h"

using namespace liteexport;
using namespace liteexport::demo_backend;

namespace {

Array iota(Shape shape, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return Array::from_vector(std::move(shape), std::move(v));
}

std::vector<float> values(const Array& a) { return std::vector<float>(a.ptr(), a.ptr() + a.size()); }

using liteexport::testing::error_of;

Array cast(const Array& x, DType to) { return make_cast(CastAttrs{static_cast<int32_t>(to)})({&x}); }

std::vector<int64_t> longs(const Array& a) {
  return std::vector<int64_t>(a.data_as<int64_t>(), a.data_as<int64_t>() + a.size());
}

}  // namespace

// Typed values (issue 20): casts at their edges (NaN and out-of-range floats, narrowing, bools),
// integer arithmetic that wraps (no undefined behaviour: the sanitizer build runs this), index
// bounds, three-way broadcasting. Every case is what torch (on x86) and runtime_py give.
TEST(Typed, CastsAtTheirEdges) {
  Array f = Array::from_vector({6}, {1.7f, -1.7f, NAN, 1e30f, -0.5f, -0.0f});
  constexpr int64_t kMin = INT64_MIN;
  EXPECT_TRUE(longs(cast(f, DType::Int64)) == (std::vector<int64_t>{1, -1, kMin, kMin, 0, 0}))
      << "float32 -> int64 truncates";
  Array i32 = cast(f, DType::Int32);
  EXPECT_TRUE(i32.dtype == DType::Int32 && i32.data_as<int32_t>()[3] == INT32_MIN && i32.data_as<int32_t>()[1] == -1)
      << "float32 -> int32";
  Array b = cast(f, DType::Bool);
  EXPECT_TRUE(std::vector<uint8_t>(b.data_as<uint8_t>(), b.data_as<uint8_t>() + 6) == (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}))
      << "float32 -> bool is != 0 (NaN is true, -0.0 false)";
  Array wide = Array::from_vector<int64_t>({2}, {(int64_t{1} << 32) + 5, -1});
  Array narrow = cast(wide, DType::Int32);
  EXPECT_TRUE(narrow.data_as<int32_t>()[0] == 5 && narrow.data_as<int32_t>()[1] == -1) << "int64 -> int32 wraps";
  Array back = cast(cast(b, DType::Float32), DType::Int64);
  EXPECT_TRUE(longs(back) == (std::vector<int64_t>{1, 1, 1, 1, 1, 0})) << "bool -> float32 -> int64";
}

// int64 arithmetic wraps as torch's does; negating INT64_MIN gives INT64_MIN
TEST(Typed, Int64ArithmeticWraps) {
  Array x = Array::from_vector<int64_t>({2}, {INT64_MAX, INT64_MIN});
  BinaryAttrs plus_one;
  plus_one.scalar = 1.0;
  EXPECT_TRUE(longs(make_binary(Op::ADD, plus_one, 1)({&x})) == (std::vector<int64_t>{INT64_MIN, INT64_MIN + 1}))
      << "add wraps";
  EXPECT_TRUE(longs(make_binary(Op::MUL, BinaryAttrs{}, 2)({&x, &x})) == (std::vector<int64_t>{1, 0})) << "mul wraps";
  EXPECT_TRUE(longs(make_unary(Op::NEG)({&x})) == (std::vector<int64_t>{INT64_MIN + 1, INT64_MIN})) << "neg wraps";
}

// indices outside [0, N): runtime_py's text, the smallest when one is negative
TEST(Typed, IndicesOutOfRangeNameTheRange) {
  Array table = iota({3, 2});
  Array ids = Array::from_vector<int64_t>({3}, {0, 3, -1});
  EXPECT_TRUE(error_of(make_embedding(), {&table, &ids}) == "index -1 is out of range [0, 3)")
      << "embedding: negative id";
  Array high = Array::from_vector<int32_t>({2}, {2, 3});
  EXPECT_TRUE(error_of(make_embedding(), {&table, &high}) == "index 3 is out of range [0, 3)") << "embedding: int32 id";
  EXPECT_TRUE(error_of(make_index_select(AxisAttrs{1}), {&table, &high}) == "index 3 is out of range [0, 2)")
      << "index_select";
  Array index = Array::from_vector<int64_t>({1, 2}, {2, 3});
  EXPECT_TRUE(error_of(make_gather(AxisAttrs{0}), {&table, &index}) == "index 3 is out of range [0, 3)") << "gather";
  Array ok = Array::from_vector<int64_t>({2}, {2, 0});
  EXPECT_TRUE(values(make_embedding()({&table, &ok})) == (std::vector<float>{4, 5, 0, 1})) << "embedding rows";
}

// where broadcasts all three operands; numpy's text names the three shapes
TEST(Typed, WhereBroadcastsAllThreeOperands) {
  Array c = Array::from_vector<uint8_t>({2, 1}, {1, 0});
  Array a = iota({3}), b = iota({1}, 10), bad = iota({2});
  Array y = make_where()({&c, &a, &b});
  EXPECT_TRUE(y.shape == (Shape{2, 3}) && values(y) == (std::vector<float>{0, 1, 2, 10, 10, 10})) << "where values";
  EXPECT_TRUE(error_of(make_where(), {&c, &a, &bad}) == "operands could not be broadcast together with shapes (2,1) (3,) (2,) ")
      << error_of(make_where(), {&c, &a, &bad});
}

// all three operands 0-d: a 0-d result (the broadcast walk's odometer stepped outside its index
// for a result without dims: a crash the OpInfo samples found, torch.relu of a 0-d int64)
TEST(Typed, WhereOfZeroDOperandsIsZeroD) {
  Array c = Array::from_vector<uint8_t>({}, {0});
  Array a = Array::from_vector<float>({}, {1.5f}), b = Array::from_vector<float>({}, {-2.0f});
  Array y = make_where()({&c, &a, &b});
  EXPECT_TRUE(y.shape == (Shape{}) && values(y) == (std::vector<float>{-2.0f})) << "0-d where";
}

// broadcasting (3, 1) + (2,) with alpha, and the reverse scalar form
TEST(Kernels, BroadcastingAndReverseScalar) {
  Array a = iota({3, 1}), b = iota({2}, 10);
  BinaryAttrs attrs;
  attrs.alpha = 2.0;
  Array y = make_binary(Op::SUB, attrs, 2)({&a, &b});
  EXPECT_TRUE(y.shape == (Shape{3, 2})) << py_shape(y.shape);
  EXPECT_TRUE(values(y) == (std::vector<float>{-20, -22, -19, -21, -18, -20})) << "sub broadcast values";
  BinaryAttrs rs;
  rs.scalar = 1.0;
  rs.reverse = true;
  Array r = make_binary(Op::SUB, rs, 1)({&a});
  EXPECT_TRUE(values(r) == (std::vector<float>{1, 0, -1})) << "rsub values";
  Array c = iota({2, 3});
  EXPECT_TRUE(error_of(make_binary(Op::ADD, BinaryAttrs{}, 2), {&c, &b}) ==
      "operands could not be broadcast together with shapes (2,3) (2,) ")
      << error_of(make_binary(Op::ADD, BinaryAttrs{}, 2), {&c, &b});
}

// matmul: vector @ batched matrices, and a shape error
TEST(Kernels, MatmulVectorBatchedAndShapeError) {
  Array v = iota({3}), m = iota({2, 3, 2});
  Array y = make_matmul()({&v, &m});
  EXPECT_TRUE(y.shape == (Shape{2, 2})) << py_shape(y.shape);
  EXPECT_TRUE(values(y) == (std::vector<float>{10, 13, 28, 31})) << "matmul values";
  Array s = make_matmul()({&v, &v});
  EXPECT_TRUE(s.shape.empty() && values(s) == std::vector<float>{5}) << "1-D dot gives a 0-d result";
  EXPECT_TRUE(error_of(make_matmul(), {&m, &m}) == "shapes (2, 3, 2) and (2, 3, 2) cannot be multiplied")
      << "matmul error";
}

// pooling: torch's ceil-mode output size, avg divisor without padding, max with padding
TEST(Kernels, PoolingWindows) {
  EXPECT_TRUE(window_output_size(5, 2, 2, 0, 1, true) == 3) << "ceil mode keeps the partial window";
  EXPECT_TRUE(window_output_size(5, 2, 2, 1, 1, true) == 3) << "ceil mode drops a window starting in the padding";
  Array x = iota({1, 1, 3, 3});
  Pool2dAttrs p;
  p.kernel = {2, 2};
  p.stride = {2, 2};
  p.ceil_mode = true;
  Array avg = make_avg_pool2d(p)({&x});
  EXPECT_TRUE(values(avg) == (std::vector<float>{2, 3.5f, 6.5f, 8})) << "avg pool ceil mode";
  p.padding = {1, 1};
  p.ceil_mode = false;
  Array mx = make_max_pool2d(p)({&x});
  EXPECT_TRUE(values(mx) == (std::vector<float>{0, 2, 6, 8})) << "max pool with padding";
  ShapeAttrs out;
  out.dims = {2, 2};
  Array ad = make_adaptive_avg_pool2d(out)({&x});
  EXPECT_TRUE(values(ad) == (std::vector<float>{2, 3, 5, 6})) << "adaptive avg pool overlapping bins";
}

// clamp: NaN passes through, a missing bound is open, min > max gives max (as torch)
TEST(Kernels, ClampNanAndOpenBounds) {
  const float inf = INFINITY;
  Array x = Array::from_vector({6}, {NAN, -inf, -2.0f, 0.5f, 7.0f, inf});
  ClampAttrs c;
  c.min = 0.0;
  c.max = 6.0;
  std::vector<float> y = values(make_clamp(c)({&x}));
  EXPECT_TRUE(std::isnan(y[0]) && (std::vector<float>(y.begin() + 1, y.end()) == std::vector<float>{0, 0, 0.5f, 6, 6}))
      << "relu6 bounds and NaN";
  c.max.reset();
  y = values(make_clamp(c)({&x}));
  EXPECT_TRUE(std::isnan(y[0]) && y[4] == 7.0f && y[5] == inf && y[1] == 0.0f) << "clamp without max";
  c.min = 1.0;
  c.max = -1.0;
  y = values(make_clamp(c)({&x}));
  EXPECT_TRUE(std::isnan(y[0]) && (std::vector<float>(y.begin() + 1, y.end()) == std::vector<float>(5, -1.0f)))
      << "clamp with min > max";
}

// conv2d: groups and padding against a hand computation
TEST(Kernels, GroupedConv2d) {
  Array x = iota({1, 2, 2, 2});
  Array w = Array::from_vector({2, 1, 1, 1}, {1.0f, -1.0f});
  Conv2dAttrs c;
  c.groups = 2;
  Array y = make_conv2d(c)({&x, &w});
  EXPECT_TRUE(values(y) == (std::vector<float>{0, 1, 2, 3, -4, -5, -6, -7})) << "grouped 1x1 conv";
}

// layout
TEST(Kernels, LayoutOps) {
  Array x = iota({2, 3});
  PermuteAttrs t;
  t.perm = {1, 0};
  EXPECT_TRUE(values(make_transpose(t)({&x})) == (std::vector<float>{0, 3, 1, 4, 2, 5})) << "transpose";
  ShapeAttrs r;
  r.dims = {-1, 2};
  EXPECT_TRUE(make_reshape(r)({&x}).shape == (Shape{3, 2})) << "reshape infers -1";
  AxisAttrs axis;
  axis.axis = -1;
  Array z = make_cat(axis)({&x, &x});
  EXPECT_TRUE(z.shape == (Shape{2, 6}) && values(z)[3] == 0 && values(z)[6] == 3) << "cat on the last axis";
  r.dims = {4, -1};
  EXPECT_TRUE(error_of(make_reshape(r), {&x}) == "shape (4, -1) is invalid for an input of shape (2, 3)")
      << "reshape error";
}

// softmax rows sum to one; log_softmax matches log(softmax)
TEST(Kernels, SoftmaxAndLogSoftmax) {
  Array x = iota({2, 4});
  Array s = make_softmax(AxisAttrs{1}, false)({&x});
  Array l = make_softmax(AxisAttrs{1}, true)({&x});
  float sum = 0;
  for (int i = 0; i < 4; ++i) sum += s.ptr()[i];
  EXPECT_TRUE(std::abs(sum - 1.0f) < 1e-6f) << "softmax sums to one";
  EXPECT_TRUE(std::abs(std::log(s.ptr()[2]) - l.ptr()[2]) < 1e-6f) << "log_softmax";
}

// issue 18: edge attribute values the decoder accepts give torch's result or one clean error
TEST(Kernels, EdgeAttributeValuesGiveTorchsResultOrOneError) {
  // (under UBSan each of these overflowed, passed memcpy a null pointer, or allocated 64 GiB)
  auto any_error = [](const Kernel& k, const Inputs& in) {
    try {
      k(in);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Array five = iota({5});
  SliceAttrs huge_step;
  huge_step.end = 5;
  huge_step.step = INT64_MAX;
  Array one = make_slice(huge_step)({&five});  // torch.arange(5)[0:5:2**63-1] == tensor([0])
  EXPECT_TRUE(one.shape == (Shape{1}) && values(one) == std::vector<float>{0}) << "slice with a step near INT64_MAX";
  const int64_t big = int64_t{1} << 32;
  Array none = iota({0});
  ShapeAttrs to_huge;
  to_huge.dims = {big, big, 0};
  Array empty = make_reshape(to_huge)({&none});  // torch.zeros(0).reshape(2**32, 2**32, 0)
  EXPECT_TRUE(empty.shape == (Shape{big, big, 0})) << "reshape (0,) to (2^32, 2^32, 0)";
  SliceAttrs all;
  EXPECT_TRUE(make_slice(all)({&empty}).shape == empty.shape) << "slice of an empty array with huge dims";
  EXPECT_TRUE(make_transpose(PermuteAttrs{{2, 1, 0}})({&empty}).shape == (Shape{0, big, big})) << "transpose";
  EXPECT_TRUE(make_flatten(FlattenAttrs{1, 2})({&empty}).shape == (Shape{big, 0})) << "flatten (1, 2)";
  EXPECT_TRUE(any_error(make_flatten(FlattenAttrs{0, 1}), {&empty}).find("overflows int64") != std::string::npos)
      << "flatten to 2^64 is an error";
  Array total = make_sum(ReduceAttrs{{}, false})({&empty});
  EXPECT_TRUE(total.shape.empty() && values(total) == std::vector<float>{0}) << "sum of an empty array";
  Array m = make_mean(ReduceAttrs{{0, 1}, false})({&empty});
  EXPECT_TRUE(m.shape == (Shape{0})) << "mean over the huge axes";
  EXPECT_TRUE(std::isnan(make_mean(ReduceAttrs{{}, false})({&empty}).ptr()[0])) << "mean of nothing is NaN";
  EXPECT_TRUE(any_error(make_mean(ReduceAttrs{{2}, true}), {&empty}).find("exceeds the limit") != std::string::npos)
      << "mean to (2^32, 2^32, 1) is a size error";
  ShapeAttrs tall;
  tall.dims = {0, 1, 8 * big, 1};
  Array no_planes = make_reshape(tall)({&none});
  Pool2dAttrs pool;
  pool.kernel = {1, 1};
  pool.stride = {1, 1};
  EXPECT_TRUE(make_max_pool2d(pool)({&no_planes}).shape == (Shape{0, 1, 8 * big, 1})) << "max_pool2d of no planes";
  tall.dims = {0, 1, INT64_MAX, 1};
  Array tallest = make_reshape(tall)({&none});
  pool.padding = {1, 0};
  EXPECT_TRUE(any_error(make_max_pool2d(pool), {&tallest}).find("overflows int64") != std::string::npos)
      << "a padded height past INT64_MAX is an error";
  tall.dims = {0, 1, 2 * big, 2 * big};
  Array wide = make_reshape(tall)({&none});
  Array w = iota({2, 1, 1, 1});
  EXPECT_TRUE(make_conv2d(Conv2dAttrs{})({&wide, &w}).shape == (Shape{0, 2, 2 * big, 2 * big}))
      << "conv2d of no images";
  EXPECT_TRUE(make_cat(AxisAttrs{2})({&empty, &empty}).shape == empty.shape) << "cat of empty arrays with huge dims";
  to_huge.dims = {1, 1, big, big, 0};
  Array planes = make_reshape(to_huge)({&none});
  Array one_c = iota({1});
  EXPECT_TRUE(make_channel_affine()({&planes, &one_c, &one_c}).shape == planes.shape) << "channel affine of nothing";
}

// resize2d: values from torch's upsample_nearest2d / upsample_bilinear2d on arange(6) as 2x3
TEST(Kernels, Resize2dNearestAndBilinear) {
  Array x = iota({1, 1, 2, 3});
  ResizeAttrs nearest;
  nearest.size = {3, 5};
  EXPECT_TRUE(values(make_resize2d(nearest)({&x})) == (std::vector<float>{0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5}))
      << "nearest 2x3 -> 3x5: floor(dst * in / out)";
  nearest.size = {2, 2};
  nearest.scale_w = 0.7;  // the model's scale factor maps: floor(dst / 0.7), not dst * 3 / 2
  EXPECT_TRUE(values(make_resize2d(nearest)({&x})) == (std::vector<float>{0, 1, 3, 4})) << "nearest with a given scale";
  ResizeAttrs bilinear;
  bilinear.bilinear = true;
  bilinear.size = {4, 2};
  EXPECT_TRUE(values(make_resize2d(bilinear)({&x})) == (std::vector<float>{0.25f, 1.75f, 1, 2.5f, 2.5f, 4, 3.25f, 4.75f}))
      << "bilinear 2x3 -> 4x2, half-pixel centres";
  bilinear.size = {3, 2};
  bilinear.align_corners = true;
  EXPECT_TRUE(values(make_resize2d(bilinear)({&x})) == (std::vector<float>{0, 2, 1.5f, 3.5f, 3, 5}))
      << "bilinear 2x3 -> 3x2, align_corners";
  Array chw = iota({1, 2, 3});
  EXPECT_TRUE(error_of(make_resize2d(bilinear), {&chw}) == "resize2d expects a 4-D (NCHW) input, got shape (1, 2, 3)")
      << error_of(make_resize2d(bilinear), {&chw});
}
