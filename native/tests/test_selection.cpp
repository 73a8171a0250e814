// Selection and rounded-division kernels (issue 20) at their edges, each value what torch gives on
// x86 and runtime_py computes: NaN and ties in argmax/argmin/topk, FULL's sizes, Python's signs, a zero divisor (inf and
// NaN for floats, runtime_py's error for integers), and min / -1, which C++ leaves undefined (the
// sanitizer build runs this) and which wraps in torch and numpy.
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "kernel_check.h"
#include "demo/kernels.h"

using namespace liteexport;
using namespace liteexport::demo_backend;

namespace {

template <typename T>
std::vector<T> items(const Array& a) {
  return std::vector<T>(a.data_as<T>(), a.data_as<T>() + a.size());
}

using liteexport::testing::error_of;

Array divide(Op op, const Array& a, const Array& b) { return make_rounding(op, BinaryAttrs{}, 2)({&a, &b}); }

}  // namespace

// integers: the quotient rounds down (or toward zero), the remainder takes the divisor's sign
TEST(Selection, IntegerDivisionRoundsDownAndWraps) {
  Array a = Array::from_vector<int64_t>({5}, {-7, 7, 7, INT64_MIN, INT64_MIN});
  Array b = Array::from_vector<int64_t>({5}, {2, -2, 2, -1, 1});
  EXPECT_TRUE(items<int64_t>(divide(Op::FLOOR_DIV, a, b)) == (std::vector<int64_t>{-4, -4, 3, INT64_MIN, INT64_MIN}))
      << "floor division; min // -1 wraps";
  EXPECT_TRUE(items<int64_t>(divide(Op::TRUNC_DIV, a, b)) == (std::vector<int64_t>{-3, -3, 3, INT64_MIN, INT64_MIN}))
      << "trunc division";
  EXPECT_TRUE(items<int64_t>(divide(Op::REMAINDER, a, b)) == (std::vector<int64_t>{1, -1, 1, 0, 0})) << "remainder";
  Array zero = Array::from_vector<int64_t>({1}, {0});
  EXPECT_TRUE(error_of(make_rounding(Op::REMAINDER, BinaryAttrs{}, 2), {&a, &zero}) == "integer division or modulo by zero")
      << "an integer divisor of zero";
}

// float32: ATen's formulas, a zero divisor gives inf or NaN
TEST(Selection, FloatDivisionFollowsATen) {
  Array a = Array::from_vector({5}, {-7.5f, 5.0f, 1.0f, 0.0f, -4.0f});
  Array b = Array::from_vector({5}, {2.0f, -3.0f, 0.0f, 0.0f, 2.0f});
  const std::vector<float> floor = items<float>(divide(Op::FLOOR_DIV, a, b));
  EXPECT_TRUE(floor[0] == -4 && floor[1] == -2 && std::isinf(floor[2]) && std::isnan(floor[3]) && floor[4] == -2)
      << "float floor division";
  const std::vector<float> rem = items<float>(divide(Op::REMAINDER, a, b));
  EXPECT_TRUE(rem[0] == 0.5f && rem[1] == -1 && std::isnan(rem[2]) && rem[4] == 0) << "float remainder";
  EXPECT_TRUE(items<float>(divide(Op::TRUNC_DIV, a, b))[0] == -3) << "float trunc division";
}

// argmax: the first maximum, a NaN is the maximum; topk: stable, NaN first when largest
TEST(Selection, ArgmaxAndTopkTakeNanAsLargest) {
  Array x = Array::from_vector({2, 4}, {1, 3, 3, 0, 2, NAN, 5, NAN});
  EXPECT_TRUE(items<int64_t>(make_argmax(ArgReduceAttrs{1, false})({&x})) == (std::vector<int64_t>{1, 1})) << "argmax";
  EXPECT_TRUE(make_argmax(ArgReduceAttrs{0, true})({&x}).shape == (Shape{1, 4})) << "argmax keepdim";
  EXPECT_TRUE(items<int64_t>(make_topk(TopKAttrs{3, 1, true})({&x})) == (std::vector<int64_t>{1, 2, 0, 1, 3, 2}))
      << "topk largest";
  EXPECT_TRUE(items<int64_t>(make_topk(TopKAttrs{2, -1, false})({&x})) == (std::vector<int64_t>{3, 0, 0, 2}))
      << "topk smallest";
  EXPECT_TRUE(error_of(make_topk(TopKAttrs{5, 1, true}), {&x}) ==
      "k=5 is larger than the size 4 of axis 1 (input of shape (2, 4))")
      << "k beyond the axis";
}

// argmin: the first minimum, a NaN is the minimum (torch's argmin propagates it as argmax does)
TEST(Selection, ArgminTakesNanAsSmallest) {
  Array x = Array::from_vector({2, 4}, {1, 0, 0, 3, 2, NAN, -5, NAN});
  EXPECT_TRUE(items<int64_t>(make_argmin(ArgReduceAttrs{1, false})({&x})) == (std::vector<int64_t>{1, 1})) << "argmin";
  EXPECT_TRUE(items<int64_t>(make_argmin(ArgReduceAttrs{0, true})({&x})) == (std::vector<int64_t>{0, 1, 1, 1}))
      << "argmin over dim 0, keepdim";
  Array ids = Array::from_vector<int32_t>({5}, {4, -2, 7, -2, 0});
  EXPECT_TRUE(items<int64_t>(make_argmin(ArgReduceAttrs{0, false})({&ids})) == (std::vector<int64_t>{1}))
      << "argmin of int32, ties: the first";
  Array empty = Array::from_vector({2, 0}, {});
  EXPECT_TRUE(error_of(make_argmin(ArgReduceAttrs{1, false}), {&empty}) ==
      "argmin of the empty axis 1 of an input of shape (2, 0)")
      << "an empty axis";
}

// FULL: the value over sizes read from the reference's shape (plus offsets), static ones as given
TEST(Selection, FullReadsSizesFromTheReference) {
  Array reference = Array::from_vector<int64_t>({1, 3}, {0, 0, 0});
  Array inf = Array::from_vector({}, {-INFINITY});
  Array mask = make_full(FillAttrs{{0, 0}, {1, 1}})({&inf, &reference});
  EXPECT_TRUE(mask.shape == (Shape{3, 3}) && items<float>(mask) == std::vector<float>(9, -INFINITY))
      << "full((S, S), -inf)";
  Array yes = Array::from_vector<uint8_t>({}, {1});
  Array ones = make_full(FillAttrs{{2, 1, -1}, {-1, 1, 1}})({&yes, &reference});
  EXPECT_TRUE(ones.dtype == DType::Bool && ones.shape == (Shape{2, 4, 2}) && items<uint8_t>(ones) == std::vector<uint8_t>(16, 1))
      << "full((2, S + 1, S - 1), True)";
  EXPECT_TRUE(error_of(make_full(FillAttrs{{-4}, {1}}), {&yes, &reference}) ==
      "dim 0 has the negative size -1 (size 3 of axis 1 -4)")
      << "a negative size";
  EXPECT_TRUE(error_of(make_full(FillAttrs{{0}, {2}}), {&yes, &reference}) ==
      "axis 2 is out of range for a reference of shape (1, 3)")
      << "an axis the reference lacks";
  EXPECT_TRUE(error_of(make_full(FillAttrs{{0}, {1}}), {&reference, &reference}) ==
      "the fill value must have one element, got shape (1, 3)")
      << "a value of several elements";
}

// triu/tril over the last two dims, bools kept as bytes
TEST(Selection, TriuTrilOverTheLastTwoDims) {
  Array m = Array::from_vector<uint8_t>({2, 3}, {1, 1, 1, 1, 1, 1});
  EXPECT_TRUE(items<uint8_t>(make_triu(DiagonalAttrs{1})({&m})) == (std::vector<uint8_t>{0, 1, 1, 0, 0, 1}))
      << "triu(1)";
  EXPECT_TRUE(items<uint8_t>(make_tril(DiagonalAttrs{-1})({&m})) == (std::vector<uint8_t>{0, 0, 0, 1, 0, 0}))
      << "tril(-1)";
  Array v = Array::from_vector({3}, {1, 2, 3});
  EXPECT_TRUE(error_of(make_tril(DiagonalAttrs{0}), {&v}) == "tril needs an input of at least 2 dims, got shape (3,)")
      << "rank 1";
}
