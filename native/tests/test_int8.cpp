// The int8 path of quantized programs (demo/xnn_int8.cpp, issue 22): small programs in the form the
// compiler gives quantized models (each quantized op, then FAKE_QUANTIZE to its grid), run once by
// the steps' own float kernels, as runtime_py runs them, and once as finish_plan prepares them.
// Each checks that the int8 steps were taken (a count: the test fails if a fusion silently stops
// happening) and that the results stay within one quantum of the output's grid (XNNPACK requantizes
// an int32 sum where the float path rounds a float sum: they part where a value sits at a rounding
// boundary), or equal where nothing is rounded (max pooling, views).
#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "demo/grid_rounding.h"
#include "demo/plan.h"
#include "errors.h"
#include "narrow_weights.h"

using namespace liteexport;
using namespace liteexport::demo_backend;

namespace {

// A program built step by step: slot 0 its input, then weights and results, all float32.
class Builder {
 public:
  explicit Builder(std::optional<Shape> input) {
    plan_.method = "forward";
    InputCheck check;
    check.shape = std::move(input);
    plan_.input_checks.push_back(check);
  }
  uint32_t weight(Array a) {
    plan_.constants.emplace_back(slots_, std::move(a));
    return slots_++;
  }
  uint32_t step(Op op, Attrs attrs, std::vector<uint32_t> reads) {
    Step s{};
    s.kernel = bind_kernel(op, attrs, reads.size());
    s.reads = std::move(reads);
    s.write = slots_;
    s.op = op;
    s.attrs = std::move(attrs);
    s.instruction = plan_.steps.size();
    plan_.steps.push_back(std::move(s));
    plan_.labels.push_back(std::string(demo_ops::kOps[static_cast<size_t>(op)].name));
    plan_.debug_handles.push_back(-1);
    return slots_++;
  }
  uint32_t quantize(uint32_t x, double scale, int64_t zero_point, bool qint8 = false) {
    return step(Op::FAKE_QUANTIZE, QuantizeAttrs{scale, zero_point, qint8 ? -128 : 0, qint8 ? 127 : 255}, {x});
  }
  MethodPlan plan(uint32_t output) const {
    MethodPlan p = plan_;
    p.outputs = {output};
    p.num_slots = slots_;
    p.slot_dtypes.assign(slots_, static_cast<uint8_t>(DType::Float32));
    return p;
  }

 private:
  MethodPlan plan_;
  uint32_t slots_ = 1;
};

Array random_array(Shape shape, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = normal(rng);
  return Array::from_vector(std::move(shape), std::move(v));
}

// A symmetric qint8 weight as the loader gives one: int8 values in -127..127, scales per tensor
// (one) or per index of axis 0.
Array quantized(Shape shape, uint32_t seed, std::vector<double> scales) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> values(-127, 127);
  auto storage = std::make_shared<std::vector<int8_t>>(static_cast<size_t>(numel(shape)));
  for (int8_t& v : *storage) v = static_cast<int8_t>(values(rng));
  auto q = std::make_shared<QuantizedWeight>();
  q->shape = shape;
  q->values = storage->data();
  q->keepalive = storage;
  q->axis = scales.size() > 1 ? 0 : -1;
  q->zero_points.assign(scales.size(), 0);
  q->scales = std::move(scales);
  Array a{std::move(shape), nullptr, DType::Float32};
  a.quantized = std::move(q);
  return a;
}

std::vector<double> channel_scales(size_t n, double base) {
  std::vector<double> s(n);
  for (size_t c = 0; c < n; ++c) s[c] = base * (1.0 + 0.1 * static_cast<double>(c % 5));
  return s;
}

// The plan run by its steps' own kernels, on NCHW floats (runtime_py's way).
Array reference(const MethodPlan& plan, const Array& x) {
  std::vector<std::optional<Array>> values(plan.num_slots);
  values[0] = x;
  for (const auto& [slot, weight] : plan.constants) values[slot] = float_values(weight);
  for (const Step& step : plan.steps) {
    Inputs args;
    for (uint32_t r : step.reads) args.push_back(&*values[r]);
    values[step.write] = step.kernel(args);
  }
  return *values[plan.outputs[0]];
}

struct Prepared {
  MethodPlan plan;
  size_t int8_steps = 0;
};

Prepared prepared(const MethodPlan& plan) {
  Prepared p{plan};
  finish_plan(p.plan);
  for (const Step& s : p.plan.steps) p.int8_steps += s.fast && s.fast->int8_output() ? 1 : 0;
  return p;
}

// The largest difference between the prepared plan's output and the reference's, in quanta.
double quanta_apart(const MethodPlan& plan, const Prepared& p, const Array& x, double quantum) {
  const Array expected = reference(plan, x);
  const Array got = run_plan(p.plan, {IValue(x)})[0];
  if (got.shape != expected.shape) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double{got.ptr()[i]} - expected.ptr()[i]));
  return worst / quantum;
}

std::string text(double v) { return std::to_string(v); }

// The image tests' input: an NCHW batch of normal values, the same in each test.
class Int8 : public ::testing::Test {
 protected:
  const Shape image{2, 16, 9, 9};
  const Array x = random_array(image, 1);
};

}  // namespace

// conv + ReLU (the conv's own and a RELU step, then a relu6 clamp) per channel; the input's
// FAKE_QUANTIZE writes int8, the conv writes its FAKE_QUANTIZE's grid: two int8 steps
TEST_F(Int8, ConvReluClampIsOneInt8Step) {
  Builder b(image);
  const uint32_t w = b.weight(quantized({24, 16, 3, 3}, 2, channel_scales(24, 0.004)));
  const uint32_t bias = b.weight(random_array({24}, 3, 0.5f));
  const uint32_t q = b.quantize(0, 4.0 / 128, 128);
  const uint32_t c = b.step(Op::CONV2D, Conv2dAttrs{{2, 2}, {1, 1}, {1, 1}, 1, Activation::Relu}, {q, w, bias});
  const uint32_t r = b.step(Op::RELU, std::monostate{}, {c});
  const uint32_t six = b.step(Op::CLAMP, ClampAttrs{0.0, 6.0}, {r});
  const MethodPlan plan = b.plan(b.quantize(six, 0.05, 0));
  const Prepared p = prepared(plan);
  EXPECT_TRUE(p.int8_steps == 2 && p.plan.steps.size() == 2)
      << "conv, ReLU, clamp and FAKE_QUANTIZE are one int8 step: " + std::to_string(p.plan.steps.size()) + " steps";
  EXPECT_TRUE(p.plan.constants.empty()) << "the int8 convolution holds its weights: none is widened";
  const double apart = quanta_apart(plan, p, x, 0.05);
  EXPECT_TRUE(apart <= 1.001) << "conv within a quantum: " + text(apart);
}

// grouped (8 channels a group), depthwise (dilated) and strided 1x1 convolutions, per-tensor
// and per-channel weights, quint8 and qint8 grids; one at a time, so that each is within a
// quantum (a chain of them parts by more: a quantum moved in one moves the next one's sums)
TEST_F(Int8, GroupedDepthwiseAnd1x1ConvsWithinAQuantum) {
  struct Case {
    const char* name;
    Array weight;
    Conv2dAttrs attrs;
    QuantizeAttrs in, out;
  };
  const std::vector<Case> cases = {
      {"grouped", quantized({16, 8, 3, 3}, 4, {0.01}), Conv2dAttrs{{1, 1}, {1, 1}, {1, 1}, 2, Activation::None},
       QuantizeAttrs{3.0 / 128, 0, -128, 127}, QuantizeAttrs{0.1, 120, 0, 255}},
      {"depthwise", quantized({16, 1, 3, 3}, 5, {0.02}), Conv2dAttrs{{1, 1}, {2, 2}, {2, 2}, 16, Activation::Relu},
       QuantizeAttrs{0.03, 128, 0, 255}, QuantizeAttrs{0.01, -128, -128, 127}},
      {"1x1", quantized({8, 16, 1, 1}, 6, channel_scales(8, 0.01)), Conv2dAttrs{{2, 2}, {0, 0}, {1, 1}, 1, Activation::None},
       QuantizeAttrs{0.03, 5, -128, 127}, QuantizeAttrs{0.05, 3, -128, 127}}};
  for (const Case& c : cases) {
    Builder b(image);
    const uint32_t w = b.weight(c.weight);
    const uint32_t q = b.step(Op::FAKE_QUANTIZE, c.in, {0});
    const MethodPlan plan = b.plan(b.step(Op::FAKE_QUANTIZE, c.out, {b.step(Op::CONV2D, c.attrs, {q, w})}));
    const Prepared p = prepared(plan);
    EXPECT_TRUE(p.int8_steps == 2 && p.plan.steps.size() == 2) << std::string(c.name) + ": an int8 convolution";
    const double apart = quanta_apart(plan, p, x, c.out.scale);
    EXPECT_TRUE(apart <= 1.001) << std::string(c.name) + " within a quantum: " + text(apart);
  }
}

// residual add with ReLU of two int8 values on other grids; max pooling keeps the grid (the
// int8 max is the float max exactly); global average pooling to a grid; flatten; linear
TEST_F(Int8, AddPoolsAndLinearOnInt8) {
  Builder b(image);
  const uint32_t fc = b.weight(quantized({10, 16}, 7, channel_scales(10, 0.01)));
  const uint32_t fc_bias = b.weight(random_array({10}, 8, 0.2f));
  const uint32_t a = b.quantize(0, 4.0 / 128, 128);
  const uint32_t c = b.quantize(0, 3.0 / 128, 130);
  const uint32_t sum = b.step(Op::RELU, std::monostate{}, {b.step(Op::ADD, BinaryAttrs{}, {a, c})});
  const uint32_t added = b.quantize(sum, 6.0 / 256, 0);
  const uint32_t pooled = b.step(Op::MAX_POOL2D, Pool2dAttrs{{3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true, std::nullopt}, {added});
  const MethodPlan pool_plan = b.plan(pooled);
  const Prepared pool = prepared(pool_plan);
  EXPECT_TRUE(pool.int8_steps == 4) << "quantize, quantize, add, max pool: " + std::to_string(pool.int8_steps);
  const double pool_apart = quanta_apart(pool_plan, pool, x, 6.0 / 256);
  EXPECT_TRUE(pool_apart <= 1.001) << "add and max pool within a quantum: " + text(pool_apart);
  const uint32_t mean = b.quantize(b.step(Op::ADAPTIVE_AVG_POOL2D, ShapeAttrs{{1, 1}}, {pooled}), 1.0 / 256, 0);
  const uint32_t flat = b.step(Op::FLATTEN, FlattenAttrs{1, -1}, {mean});
  const MethodPlan plan = b.plan(b.quantize(b.step(Op::LINEAR, FusedAttrs{}, {flat, fc, fc_bias}), 0.01, 0, true));
  const Prepared p = prepared(plan);
  EXPECT_TRUE(p.int8_steps == 7 && p.plan.steps.size() == 7)
      << "pooling, flatten and linear on int8: " + std::to_string(p.int8_steps);
  const double apart = quanta_apart(plan, p, x, 0.01);
  EXPECT_TRUE(apart <= 1.001) << "average pool and linear within a quantum: " + text(apart);
}

// an RGB convolution (3 input channels, which XNNPACK pads to its kernels' channel tile) runs
// on int8 too (see int8_weight), the FAKE_QUANTIZE before it writing int8, the one after folded
TEST_F(Int8, RgbConvolutionOnInt8) {
  Builder b(Shape{1, 3, 12, 12});
  const uint32_t w = b.weight(quantized({8, 3, 3, 3}, 9, {0.01}));
  const uint32_t c = b.step(Op::CONV2D, Conv2dAttrs{{1, 1}, {1, 1}, {1, 1}, 1, Activation::None}, {b.quantize(0, 0.03, 128), w});
  const MethodPlan plan = b.plan(b.quantize(c, 0.1, 128));
  const Prepared p = prepared(plan);
  EXPECT_TRUE(p.int8_steps == 2 && p.plan.steps.size() == 2)
      << "an RGB convolution on int8: " + std::to_string(p.int8_steps);
  const double apart = quanta_apart(plan, p, random_array({1, 3, 12, 12}, 12), 0.1);
  EXPECT_TRUE(apart <= 1.001) << "an RGB convolution within a quantum: " + text(apart);
}

// an input the int8 linear layer does not take: the own kernel's error, as on the float path
TEST_F(Int8, WrongInputGivesTheOwnKernelsError) {
  Builder b(std::nullopt);
  const uint32_t fc = b.weight(quantized({4, 6}, 10, {0.02}));
  const MethodPlan plan = b.plan(b.quantize(b.step(Op::LINEAR, FusedAttrs{}, {b.quantize(0, 0.05, 0, true), fc}), 0.1, 0, true));
  const Prepared p = prepared(plan);
  EXPECT_TRUE(p.int8_steps == 2) << "int8 linear: " + std::to_string(p.int8_steps);
  const Array wrong = random_array({2, 5}, 11);
  std::string expected, got;
  try {
    reference(plan, wrong);
  } catch (const KernelError& e) {
    expected = e.what();
  }
  try {
    run_plan(p.plan, {IValue(wrong)});
  } catch (const Error& e) {
    got = e.what();
  }
  EXPECT_TRUE(!expected.empty() && got.find(expected) != std::string::npos) << "the own kernel's error: " + got;
}

// GridRounding (float, branch-free) gives runtime_py's rint(x * inverse) + zero, clamped in
// double, NaN to the top: ties, bounds, infinities, huge values
TEST_F(Int8, GridRoundingMatchesRuntimePy) {
  const QuantizeAttrs attrs{0.1, 3, -128, 127};
  const GridRounding grid(attrs);
  const float inverse = 1.0f / static_cast<float>(attrs.scale);
  std::vector<float> values = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 0.0f, -0.0f, 12.45f, -13.05f, 12.4f, 1e-30f};
  for (int k = -300; k <= 300; ++k) values.push_back((static_cast<float>(k) + 0.5f) * 0.1f);  // ties
  std::mt19937 rng(12);
  std::normal_distribution<float> normal(0.0f, 10.0f);
  for (int k = 0; k < 2000; ++k) values.push_back(normal(rng));
  int wrong = 0;
  for (float v : values) {
    const double q = static_cast<double>(std::nearbyint(v * inverse)) + 3.0;
    const double expected = std::isnan(q) ? 127.0 : std::min(std::max(q, -128.0), 127.0);
    wrong += grid.index(v) != static_cast<float>(expected) ? 1 : 0;
  }
  EXPECT_TRUE(wrong == 0) << std::to_string(wrong) + " values rounded otherwise";
}
