// The int8 path of quantized programs (issue 22; xnn.h). A quantized program computes each
// quantized op in float and rounds its result to the op's 8-bit grid with FAKE_QUANTIZE
// (liteexport/compiler/quantized_ops.py): its values are exactly int8 values on a grid, and its
// weights are torch's int8 QuantizedTensors. So:
// - a FAKE_QUANTIZE with an 8-bit range writes int8 values (a quint8 grid's q - 128 with zero
//   point z - 128: the same real values, as XNNPACK's qs8 wants them);
// - a convolution or linear layer reading int8 values, with a symmetric int8 weight (per channel
//   or per tensor), whose result only a FAKE_QUANTIZE reads (through ReLU/clamp steps) runs on
//   XNNPACK's qs8_qc8w convolution (a linear layer as a 1x1 one over its rows), writing that grid's int8
//   values: the ReLU/clamp become the output bounds and the FAKE_QUANTIZE is no step any more;
// - likewise an add of two int8 values (qs8 add), a global average pool (qs8 mean) and a cat
//   (a table per input from its grid to the output's);
// - max pooling, flatten, reshape, transpose and slice keep an int8 value's grid (s8 max pooling,
//   the own kernels of any element type);
// - any other step reads the int8 value's floats (slots.h: dequantized once, exactly the floats
//   FAKE_QUANTIZE gives).
// XNNPACK requantizes an int32 sum with a float multiplier where runtime_py rounds a float sum: the
// two may part by a quantum where a value sits near a rounding boundary
// (liteexport/quantized_parity.py). A step's int8 path is chosen at load, from the program alone;
// an XNNPACK call that fails on it is an error.
#include <xnnpack.h>

#include <array>
#include <cmath>
#include <functional>
#include <mutex>

#include "../narrow_weights.h"
#include "grid_rounding.h"
#include "plan.h"
#include "windows.h"
#include "xnn_internal.h"

namespace liteexport::demo_backend {

namespace {

// The int8 grid of a FAKE_QUANTIZE with an 8-bit range (quant_min + 128 is subtracted from its
// integers), when XNNPACK can take it: a normal scale, a zero point in int8.
std::optional<Grid> int8_grid(const QuantizeAttrs& a) {
  // every int8 path's grid comes from here; a new field: check them all (QuantizeStep, to_int8,
  // fold_requantize, attrs_of), then the count
  static_assert(QuantizeAttrs::kFieldCount == 4, "QuantizeAttrs changed: check the int8 paths");
  if (a.quant_max - a.quant_min != 255) return std::nullopt;
  const int64_t zero = a.zero_point - (a.quant_min + 128);
  const float scale = static_cast<float>(a.scale);
  if (zero < -128 || zero > 127 || !std::isnormal(scale) || scale <= 0.0f) return std::nullopt;
  return Grid{scale, static_cast<int32_t>(zero)};
}

// XNNPACK's qs8 operators take a quotient of scales, computed in float, in a range: the
// requantization scale of a convolution below 256, the input-to-output scale of an add in
// [2^-10, 2^8) (4ea82e5's checks: a status for the first, asserts for the add). Its mean takes any.
bool ratio_in(float ratio, float lo, float hi) { return ratio >= lo && ratio < hi; }

// A FAKE_QUANTIZE with an 8-bit range.
class QuantizeStep final : public FastStep {
 public:
  QuantizeStep(const QuantizeAttrs& attrs, Grid grid) : attrs_(attrs), grid_(grid) {}

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    stored->nhwc = slots.is_nhwc(reads[0]);
    stored->int8 = grid_;
    return to_int8(slots.raw(reads[0]), attrs_);
  }
  const Grid* int8_output() const override { return &grid_; }

 private:
  QuantizeAttrs attrs_;
  Grid grid_;
};

// A convolution, or a linear layer (a 1x1 convolution over its rows), on XNNPACK's qc8 operator:
// int8 weights with a float scale per output channel, an int32 bias on the scale of the products.
class Int8ConvStep final : public FastStep {
 public:
  Int8ConvStep(std::optional<Conv2dAttrs> conv, std::shared_ptr<const QuantizedWeight> weight, std::optional<Array> bias,
               Grid in, std::vector<float> kernel_scales, std::vector<int32_t> int_bias, Requantized out, Kernel kernel)
      : conv_(std::move(conv)), weight_(std::move(weight)), bias_(std::move(bias)), in_(in),
        kernel_scales_(std::move(kernel_scales)), int_bias_(std::move(int_bias)), out_(std::move(out)),
        kernel_(std::move(kernel)), out_c_(weight_->shape[0]), group_c_(weight_->shape[1]),
        groups_(conv_ ? conv_->groups : 1), kh_(conv_ ? weight_->shape[2] : 1), kw_(conv_ ? weight_->shape[3] : 1) {}

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Shape s = slots.logical_shape(reads[0]);
    const int64_t in_c = group_c_ * groups_;
    Shape out_shape;
    size_t batch = 0, height = 1, width = 1;
    if (conv_) {
      const int64_t oh = s.size() == 4 ? window_output_size(s[2], kh_, conv_->stride[0], conv_->padding[0], conv_->dilation[0], false) : 0;
      const int64_t ow = s.size() == 4 ? window_output_size(s[3], kw_, conv_->stride[1], conv_->padding[1], conv_->dilation[1], false) : 0;
      if (s.size() != 4 || s[1] != in_c || s[0] == 0 || oh <= 0 || ow <= 0) return float_path(slots, reads, stored);
      out_shape = {s[0], oh, ow, out_c_};
      batch = static_cast<size_t>(s[0]);
      height = static_cast<size_t>(s[2]);
      width = static_cast<size_t>(s[3]);
    } else {
      if (s.empty() || s.back() != in_c || numel(s) == 0) return float_path(slots, reads, stored);
      out_shape = s;
      out_shape.back() = out_c_;
      batch = static_cast<size_t>(numel(s) / in_c);
    }
    const Array& x = conv_ ? slots.int8_nhwc(reads[0]) : slots.int8_nchw(reads[0]);
    int8_t* y;
    Array out = int8_array(std::move(out_shape), &y);
    std::lock_guard<std::mutex> guard(lock_);  // an operator holds one setup at a time
    if (!op_) create();
    void* workspace = reshape_image(reshape_, xnn_reshape_convolution2d_nhwc_qs8_qc8w, op_.get(), batch, height, width,
                                    "int8 convolution reshape");
    check(xnn_setup_convolution2d_nhwc_qs8_qc8w(op_.get(), workspace, int8_data(x), y), "int8 convolution setup");
    check(xnn_run_operator(op_.get(), threadpool()), "int8 convolution");
    stored->nhwc = conv_.has_value();
    stored->int8 = out_.grid;
    return out;
  }
  const Grid* int8_output() const override { return &out_.grid; }

 private:
  Array float_path(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) {
    Inputs args{&slots.nchw(reads[0]), &weight_->floats()};
    if (bias_) args.push_back(&*bias_);
    return via_float(args, kernel_, out_, stored);
  }

  // Packs the weights on the first run, as the float steps do (xnn.cpp): reads the int8 weights
  // where the bundle maps them (torch's [O][group_c][kh][kw] is XNNPACK's [O][kh][kw][group_c] for
  // 1x1 and depthwise filters; others are reordered into a buffer freed after packing).
  void create() {
    std::vector<int8_t> ohwi;
    const int8_t* filter = weight_->values;
    if (group_c_ > 1 && kh_ * kw_ > 1) {
      ohwi.resize(static_cast<size_t>(numel(weight_->shape)));
      for (int64_t o = 0; o < out_c_; ++o)
        for (int64_t c = 0; c < group_c_; ++c)
          for (int64_t k = 0; k < kh_ * kw_; ++k)
            ohwi[static_cast<size_t>((o * kh_ * kw_ + k) * group_c_ + c)] = filter[(o * group_c_ + c) * kh_ * kw_ + k];
      filter = ohwi.data();
    }
    const auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
    const Pair padding = conv_ ? conv_->padding : Pair{0, 0}, stride = conv_ ? conv_->stride : Pair{1, 1};
    const Pair dilation = conv_ ? conv_->dilation : Pair{1, 1};
    xnn_operator_t op = nullptr;
    op_ = created(xnn_create_convolution2d_nhwc_qs8_qc8w(
                      u32(padding[0]), u32(padding[1]), u32(padding[0]), u32(padding[1]), u32(kh_), u32(kw_),
                      u32(stride[0]), u32(stride[1]), u32(dilation[0]), u32(dilation[1]), u32(groups_),
                      static_cast<size_t>(group_c_), static_cast<size_t>(out_c_ / groups_),
                      static_cast<size_t>(group_c_ * groups_), static_cast<size_t>(out_c_),
                      static_cast<int8_t>(in_.zero_point), in_.scale, kernel_scales_.data(), filter,
                      int_bias_.empty() ? nullptr : int_bias_.data(), static_cast<int8_t>(out_.grid.zero_point),
                      out_.grid.scale, out_.min, out_.max, 0, nullptr, nullptr, &op),
                  op, "int8 convolution");
    kernel_scales_ = {};  // packed: the operator holds its own copy
    int_bias_ = {};
  }

  std::optional<Conv2dAttrs> conv_;
  std::shared_ptr<const QuantizedWeight> weight_;
  std::optional<Array> bias_;
  Grid in_;
  std::vector<float> kernel_scales_;
  std::vector<int32_t> int_bias_;
  Requantized out_;
  Kernel kernel_;
  int64_t out_c_, group_c_, groups_, kh_, kw_;
  Operator op_;
  Reshaped reshape_;
  std::mutex lock_;
};

// An add of two int8 values (broadcasting): NHWC when both are 4-D, as the float add.
class Int8AddStep final : public FastStep {
 public:
  Int8AddStep(Grid a, Grid b, Requantized out, Kernel kernel) : out_(std::move(out)), kernel_(std::move(kernel)) {
    xnn_operator_t op = nullptr;
    const xnn_quantization_params qa{a.zero_point, a.scale}, qb{b.zero_point, b.scale},
        qy{out_.grid.zero_point, out_.grid.scale};
    op_ = created(xnn_create_binary_elementwise_nd(xnn_binary_add, xnn_datatype_qint8, &qa, &qb, &qy, 0, &op), op,
                  "int8 add");
  }

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Shape a = slots.logical_shape(reads[0]), b = slots.logical_shape(reads[1]);
    if (!broadcastable(a, b) || std::max(a.size(), b.size()) > XNN_MAX_TENSOR_DIMS || numel(a) == 0 || numel(b) == 0)
      return via_float({&slots.nchw(reads[0]), &slots.nchw(reads[1])}, kernel_, out_, stored);  // numpy's error text
    const bool use_nhwc = a.size() == 4 && b.size() == 4;
    const Array& x = use_nhwc ? slots.int8_nhwc(reads[0]) : slots.int8_nchw(reads[0]);
    const Array& z = use_nhwc ? slots.int8_nhwc(reads[1]) : slots.int8_nchw(reads[1]);
    const size_t nd = std::max(x.shape.size(), z.shape.size());
    Shape shape(nd);
    for (size_t i = 0; i < nd; ++i) {
      const int64_t dx = i < nd - x.shape.size() ? 1 : x.shape[i - (nd - x.shape.size())];
      const int64_t dz = i < nd - z.shape.size() ? 1 : z.shape[i - (nd - z.shape.size())];
      shape[i] = dx == 1 ? dz : dx;
    }
    const std::vector<size_t> sx(x.shape.begin(), x.shape.end()), sz(z.shape.begin(), z.shape.end());
    int8_t* y;
    Array out = int8_array(std::move(shape), &y);
    std::lock_guard<std::mutex> guard(lock_);
    run_binary(op_.get(), reshape_, sx, sz, int8_data(x), int8_data(z), y, "int8 add");
    clamp_in_place(y, out.size(), out_.min, out_.max);  // the folded ReLU/clamp, on the output grid
    stored->nhwc = use_nhwc;
    stored->int8 = out_.grid;
    return out;
  }
  const Grid* int8_output() const override { return &out_.grid; }

 private:
  Requantized out_;
  Kernel kernel_;
  Operator op_;
  Reshaped reshape_;
  std::mutex lock_;
};

// A cat of int8 values rounded to a FAKE_QUANTIZE's grid (quantized::cat). Each input's 256 int8
// values map to the output grid through a table (their floats as the slots dequantize them,
// rounded as FAKE_QUANTIZE rounds them: runtime_py's result exactly), copied into place: NHWC when
// every input is NHWC and the cat is over channels (googlenet's inception blocks), else NCHW.
class Int8CatStep final : public FastStep {
 public:
  Int8CatStep(int64_t axis, const std::vector<Grid>& ins, Requantized out, Kernel kernel)
      : axis_(axis), out_(std::move(out)), kernel_(std::move(kernel)) {
    int8_t* every;  // -128..127
    Array values = int8_array({256}, &every);
    for (int v = -128; v < 128; ++v) every[v + 128] = static_cast<int8_t>(v);
    for (const Grid& g : ins) {
      const Array rounded = to_int8(dequantize(values, g), out_.attrs);  // as slots and FAKE_QUANTIZE do it
      std::array<int8_t, 256> table{};
      for (size_t k = 0; k < table.size(); ++k) table[k] = std::clamp(int8_data(rounded)[k], out_.min, out_.max);
      tables_.push_back(table);
    }
  }

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Shape first = slots.logical_shape(reads[0]);
    const auto rank = static_cast<int64_t>(first.size());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    bool fits = rank > 0 && axis >= 0 && axis < rank, nhwc = rank == 4 && axis == 1;
    for (uint32_t r : reads) {
      const Shape s = slots.logical_shape(r);
      fits = fits && s.size() == first.size();
      for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || s[d] == first[d];
      nhwc = nhwc && slots.is_nhwc(r);
    }
    if (!fits) {  // the own kernel's error
      Inputs args;
      for (uint32_t r : reads) args.push_back(&slots.nchw(r));
      return via_float(args, kernel_, out_, stored);
    }
    // as [outer, inner_k] blocks: the cat axis is the last one in NHWC
    std::vector<const Array*> xs;
    for (uint32_t r : reads) xs.push_back(nhwc ? &slots.int8_nhwc(r) : &slots.int8_nchw(r));
    const auto physical_axis = static_cast<size_t>(nhwc ? 3 : axis);
    Shape shape = xs[0]->shape;
    shape[physical_axis] = 0;
    for (const Array* x : xs) shape[physical_axis] += x->shape[physical_axis];
    int8_t* y;
    Array out = int8_array(shape, &y);
    int64_t outer = 1;
    for (size_t d = 0; d < physical_axis; ++d) outer *= shape[d];
    const int64_t row = outer == 0 ? 0 : out.size() / outer;
    int64_t offset = 0;
    for (size_t k = 0; k < xs.size(); ++k) {
      const int8_t* x = int8_data(*xs[k]);
      const int64_t inner = outer == 0 ? 0 : xs[k]->size() / outer;
      const std::array<int8_t, 256>& table = tables_[k];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) y[o * row + offset + j] = table[static_cast<uint8_t>(x[o * inner + j] + 128)];
      offset += inner;
    }
    stored->nhwc = nhwc;
    stored->int8 = out_.grid;
    return out;
  }
  const Grid* int8_output() const override { return &out_.grid; }

 private:
  int64_t axis_;
  Requantized out_;
  Kernel kernel_;
  std::vector<std::array<int8_t, 256>> tables_;  // per input: its int8 values on the output grid
};

// FLATTEN, RESHAPE, TRANSPOSE or SLICE of int8 values: their own kernel (of any element type: a
// view or a copy) on the NCHW values, which keep their grid.
class Int8ViewStep final : public FastStep {
 public:
  Int8ViewStep(Grid grid, Kernel kernel) : grid_(grid), kernel_(std::move(kernel)) {}

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    Array out = kernel_({&slots.int8_nchw(reads[0])});
    stored->nhwc = false;
    stored->int8 = grid_;
    return out;
  }
  const Grid* int8_output() const override { return &grid_; }

 private:
  Grid grid_;
  Kernel kernel_;
};

}  // namespace

QuantizeAttrs attrs_of(const Grid& grid) {
  static_assert(QuantizeAttrs::kFieldCount == 4, "QuantizeAttrs changed: give every field here");
  return QuantizeAttrs{grid.scale, grid.zero_point, -128, 127};
}

namespace {

// The loop of to_int8, vectorized: __restrict (the int8 stores could alias the float loads
// otherwise, which keeps GCC from widening the loop), and float -> int32 -> int8 (float -> int8
// has no vector conversion).
void quantize_values(const float* __restrict x, int8_t* __restrict y, int64_t n, GridRounding rounding, float shift) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int8_t>(static_cast<int32_t>(rounding.index(x[i]) - shift));
}

}  // namespace

Array to_int8(const Array& x, const QuantizeAttrs& attrs) {
  int8_t* y;
  Array out = int8_array(x.shape, &y);
  quantize_values(x.ptr(), y, x.size(), GridRounding(attrs), static_cast<float>(attrs.quant_min + 128));
  return out;
}

Array via_float(const Inputs& args, const Kernel& kernel, const Requantized& out, Stored* stored) {
  Array y = kernel(args);
  for (const Kernel& k : out.after) y = k({&y});
  stored->nhwc = false;
  stored->int8 = out.grid;
  return to_int8(y, out.attrs);
}

Int8Planner::Int8Planner(MethodPlan& plan, std::vector<bool>& removed, const Constants& constants)
    : plan_(plan), removed_(removed), constants_(constants), grids_(plan.num_slots) {}

void Int8Planner::track(size_t i) {
  const Step& step = plan_.steps[i];
  const Grid* grid = step.fast ? step.fast->int8_output() : nullptr;
  grids_[step.write] = grid != nullptr ? std::optional<Grid>(*grid) : std::nullopt;
}

namespace {

// Folds into step i the steps that only carry its result to a FAKE_QUANTIZE with an 8-bit grid:
// ReLU/clamp steps (each the only reader of the value before it), then the FAKE_QUANTIZE; step i
// then writes the FAKE_QUANTIZE's slot. None, and the plan as it was, when its result goes
// elsewhere or `accept` refuses the grid (XNNPACK's range of scales).
std::optional<Requantized> fold_requantize(MethodPlan& plan, std::vector<bool>& removed, size_t i, Bounds bounds,
                                           const std::function<bool(const Grid&)>& accept) {
  Step& step = plan.steps[i];
  const uint32_t write = step.write;
  const std::vector<bool> was_removed = removed;
  Requantized out;
  for (;;) {
    const std::optional<size_t> j = sole_reader(plan, removed, i);
    if (!j) break;
    const Step& next = plan.steps[*j];
    if (next.op == Op::FAKE_QUANTIZE) {
      const QuantizeAttrs& attrs = std::get<QuantizeAttrs>(next.attrs);
      const std::optional<Grid> grid = int8_grid(attrs);
      if (!grid || static_cast<DType>(plan.slot_dtypes[next.write]) != DType::Float32) break;
      // the bounds on the grid: rounding is monotonic, so rounding clamp(v, lo, hi) is clamping
      // v's integer to the integers of lo and hi
      const GridRounding rounding(attrs);
      const auto shift = static_cast<float>(attrs.quant_min + 128);
      const float lo = std::isfinite(bounds.lo) ? rounding.index(bounds.lo) - shift : -128.0f;
      const float hi = std::isfinite(bounds.hi) ? rounding.index(bounds.hi) - shift : 127.0f;
      if (!(lo < hi) || !accept(*grid)) break;  // XNNPACK's operators need min < max
      out.attrs = attrs;
      out.grid = *grid;
      out.min = static_cast<int8_t>(lo);
      out.max = static_cast<int8_t>(hi);
      out.after.push_back(next.kernel);
      step.write = next.write;
      removed[*j] = true;
      return out;
    }
    if (!fold_clamp(plan, removed, i, bounds)) break;
    out.after.push_back(bounds.after);
  }
  step.write = write;
  removed = was_removed;
  return std::nullopt;
}

// The weight of a CONV2D/LINEAR step that XNNPACK's int8 convolution takes: a symmetric int8 one
// (per tensor, or per output channel) of a shape the own kernel accepts, with a float bias of its
// size or none. Every such convolution runs on int8, an RGB image's first one too: XNNPACK
// 4ea82e5's VNNI kernels run resnet18's in less time than the float one (the whole model: 10.5 ms
// against 11.7 with it in float; ae108ef's kernels, without VNNI, took 1.2x the float time there).
const QuantizedWeight* int8_weight(const Step& step, const Constants& constants) {
  const Array* w = constant_of(constants, step, 1);
  const Array* b = constant_of(constants, step, 2);
  const bool conv = step.op == Op::CONV2D;
  if (w == nullptr || !w->quantized || (step.reads.size() > 2 && (b == nullptr || b->quantized))) return nullptr;
  const QuantizedWeight& q = *w->quantized;
  const int64_t groups = conv ? std::get<Conv2dAttrs>(step.attrs).groups : 1;
  if (q.shape.size() != (conv ? 4u : 2u) || numel(q.shape) == 0 || q.shape[0] % groups != 0 || !q.symmetric() ||
      q.axis > 0 || (b != nullptr && b->size() != q.shape[0]))
    return nullptr;
  return &q;
}

// The int8 convolution of a CONV2D/LINEAR step reading int8 values on `in`, when its weight is an
// int8_weight and its result goes to an 8-bit grid.
std::shared_ptr<FastStep> int8_conv(MethodPlan& plan, std::vector<bool>& removed, const Constants& constants, size_t i,
                                    Grid in) {
  Step& step = plan.steps[i];
  const QuantizedWeight* weight = int8_weight(step, constants);
  if (weight == nullptr) return nullptr;
  const QuantizedWeight& q = *weight;
  const Array* b = constant_of(constants, step, 2);
  const bool conv = step.op == Op::CONV2D;
  const auto out_c = static_cast<size_t>(q.shape[0]);
  std::vector<float> scales(out_c);
  for (size_t c = 0; c < out_c; ++c) scales[c] = static_cast<float>(q.scales[q.axis < 0 ? 0 : c]);
  Bounds bounds;
  const Activation activation = conv ? std::get<Conv2dAttrs>(step.attrs).activation : std::get<FusedAttrs>(step.attrs).activation;
  if (activation == Activation::Relu) bounds.lo = 0.0f;
  // XNNPACK's checks, made once the output grid is known (the plan stays as it was when they
  // fail): a normal positive scale per channel, a requantization scale below 256; and a bias that
  // fits int32 on the products' scale
  std::vector<int32_t> int_bias(b != nullptr ? out_c : 0);
  const auto fits = [&](const Grid& out) {
    for (size_t c = 0; c < out_c; ++c) {
      if (!std::isnormal(scales[c]) || scales[c] <= 0.0f || !ratio_in(in.scale * scales[c] / out.scale, 0x1.0p-32f, 256.0f))
        return false;
      const double product = static_cast<double>(in.scale) * scales[c];
      if (b == nullptr) continue;
      const double v = std::nearbyint(static_cast<double>(b->ptr()[c]) / product);
      if (!(std::fabs(v) < 2147483647.0)) return false;
      int_bias[c] = static_cast<int32_t>(v);
    }
    return true;
  };
  std::optional<Requantized> out = fold_requantize(plan, removed, i, bounds, fits);
  if (!out) return nullptr;
  std::optional<Array> bias = b != nullptr ? std::optional<Array>(*b) : std::nullopt;
  std::optional<Conv2dAttrs> attrs = conv ? std::optional<Conv2dAttrs>(std::get<Conv2dAttrs>(step.attrs)) : std::nullopt;
  auto fast = std::make_shared<Int8ConvStep>(std::move(attrs), constant_of(constants, step, 1)->quantized, std::move(bias), in, std::move(scales),
                                             std::move(int_bias), std::move(*out), step.kernel);
  step.reads.resize(1);  // the weights are the operator's: no step reads their float values
  return fast;
}

}  // namespace

bool Int8Planner::read_as_int8(size_t i) const {
  const uint32_t slot = plan_.steps[i].write;
  for (size_t j = i + 1; j < plan_.steps.size(); ++j) {
    if (removed_[j]) continue;
    const Step& step = plan_.steps[j];
    if (std::find(step.reads.begin(), step.reads.end(), slot) != step.reads.end()) switch (step.op) {
        case Op::CONV2D:
        case Op::LINEAR:
          if (step.reads[0] == slot && int8_weight(step, constants_) != nullptr) return true;
          break;
        case Op::ADD:
        case Op::CAT:
        case Op::MAX_POOL2D:
        case Op::ADAPTIVE_AVG_POOL2D:
        case Op::FLATTEN:
        case Op::RESHAPE:
        case Op::TRANSPOSE:
        case Op::SLICE: return true;
        default: break;  // fast path only: any other reader takes the value as float
      }
    if (step.write == slot) break;  // the value's life ends
  }
  return false;
}

bool Int8Planner::prepare(size_t i) {
  // the attribute fields this guard and its steps honour; a new field: check them, then the count
  static_assert(Conv2dAttrs::kFieldCount == 5, "Conv2dAttrs changed: check int8_weight and Int8ConvStep");
  static_assert(FusedAttrs::kFieldCount == 1, "FusedAttrs changed: check int8_conv");
  static_assert(BinaryAttrs::kFieldCount == 3, "BinaryAttrs changed: check the Int8AddStep guard");
  static_assert(Pool2dAttrs::kFieldCount == 7, "Pool2dAttrs changed: check the int8 max pool path");
  static_assert(ShapeAttrs::kFieldCount == 1, "ShapeAttrs changed: check the int8 global average pool guard");
  static_assert(AxisAttrs::kFieldCount == 1, "AxisAttrs changed: check Int8CatStep");
  Step& step = plan_.steps[i];
  const auto is_float = [this](uint32_t slot) { return static_cast<DType>(plan_.slot_dtypes[slot]) == DType::Float32; };
  if (!is_float(step.write) || !std::all_of(step.reads.begin(), step.reads.end(), is_float)) return false;
  const std::optional<Grid> in = step.reads.empty() ? std::nullopt : grids_[step.reads[0]];
  switch (step.op) {
    case Op::FAKE_QUANTIZE: {
      const std::optional<Grid> grid = int8_grid(std::get<QuantizeAttrs>(step.attrs));
      if (grid && read_as_int8(i)) step.fast = std::make_shared<QuantizeStep>(std::get<QuantizeAttrs>(step.attrs), *grid);
      break;
    }
    case Op::CONV2D:
    case Op::LINEAR:
      if (in) step.fast = int8_conv(plan_, removed_, constants_, i, *in);
      break;
    case Op::ADD: {
      if (step.reads.size() != 2 || std::get<BinaryAttrs>(step.attrs).alpha != 1.0 || !in || !grids_[step.reads[1]]) break;
      const Grid other = *grids_[step.reads[1]];
      std::optional<Requantized> out = fold_requantize(plan_, removed_, i, Bounds{}, [&](const Grid& g) {
        return ratio_in(in->scale / g.scale, 0x1.0p-10f, 0x1.0p+8f) && ratio_in(other.scale / g.scale, 0x1.0p-10f, 0x1.0p+8f);
      });
      if (out) step.fast = std::make_shared<Int8AddStep>(*in, other, std::move(*out), step.kernel);
      break;
    }
    case Op::MAX_POOL2D: {
      const Pool2dAttrs& a = std::get<Pool2dAttrs>(step.attrs);
      if (in && xnn_max_pool_takes(a))
        step.fast = make_max_pool(a, step.kernel, *in);
      break;
    }
    case Op::ADAPTIVE_AVG_POOL2D: {
      const ShapeAttrs& a = std::get<ShapeAttrs>(step.attrs);
      if (!in || a.dims != Shape{1, 1}) break;
      std::optional<Requantized> out = fold_requantize(plan_, removed_, i, Bounds{}, [](const Grid&) { return true; });
      if (out) step.fast = make_global_avg_pool(step.kernel, *in, std::move(*out));
      break;
    }
    case Op::FLATTEN:
    case Op::RESHAPE:
    case Op::TRANSPOSE:  // shufflenet's channel shuffle
    case Op::SLICE:      // and its chunks
      if (in) step.fast = std::make_shared<Int8ViewStep>(*in, step.kernel);
      break;
    case Op::CAT: {
      std::vector<Grid> ins;
      for (uint32_t r : step.reads)
        if (grids_[r]) ins.push_back(*grids_[r]);
      if (ins.empty() || ins.size() != step.reads.size()) break;
      std::optional<Requantized> out = fold_requantize(plan_, removed_, i, Bounds{}, [](const Grid&) { return true; });
      if (out) step.fast = std::make_shared<Int8CatStep>(std::get<AxisAttrs>(step.attrs).axis, ins, std::move(*out), step.kernel);
      break;
    }
    default: break;  // fast path only: no int8 step; prepare_float_step may make a float one
  }
  return step.fast != nullptr;
}

}  // namespace liteexport::demo_backend
