// The XNNPACK kernel path (xnn.h): layouts, the steps that run on XNNPACK's operator API, and the
// plan pass that picks them.
#include "xnn.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>

#include "../errors.h"
#include "../narrow_weights.h"
#include "../run_limits.h"
#include "plan.h"
#include "windows.h"
#include "demo_traits_generated.h"
#include "xnn_internal.h"

namespace liteexport::demo_backend {

namespace {

thread_local const ThreadPool* current_pool = nullptr;

class ConvStep final : public FastStep {
 public:
  ConvStep(const Conv2dAttrs& attrs, const Array& weight, const Array* bias, Bounds bounds, Kernel kernel)
      : attrs_(attrs), weight_(weight), bias_(bias != nullptr ? std::optional<Array>(*bias) : std::nullopt),
        bounds_(bounds), out_c_(weight.shape[0]), in_c_(weight.shape[1] * attrs.groups), kh_(weight.shape[2]),
        kw_(weight.shape[3]), kernel_(std::move(kernel)), after_(bounds.after) {}

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Shape s = slots.logical_shape(reads[0]);
    if (s.size() != 4 || s[1] != in_c_) return own(slots, reads, kernel_, after_);  // the own kernel's error, or 3-D
    const int64_t oh = window_output_size(s[2], kh_, attrs_.stride[0], attrs_.padding[0], attrs_.dilation[0], false);
    const int64_t ow = window_output_size(s[3], kw_, attrs_.stride[1], attrs_.padding[1], attrs_.dilation[1], false);
    if (oh <= 0 || ow <= 0 || s[0] == 0) return own(slots, reads, kernel_, after_);
    const Array& x = slots.nhwc(reads[0]);
    float* y;
    Array out = Array::uninitialized({s[0], oh, ow, out_c_}, &y);
    std::lock_guard<std::mutex> guard(lock_);  // an operator holds one setup at a time
    if (!op_) create();
    void* workspace = reshape_image(reshape_, xnn_reshape_convolution2d_nhwc_f32, op_.get(), static_cast<size_t>(s[0]),
                                    static_cast<size_t>(s[2]), static_cast<size_t>(s[3]), "convolution reshape");
    check(xnn_setup_convolution2d_nhwc_f32(op_.get(), workspace, x.ptr(), y), "convolution setup");
    check(xnn_run_operator(op_.get(), threadpool()), "convolution");
    stored->nhwc = true;
    return out;
  }

 private:
  // Packs the weights into XNNPACK's operator: on the first run, not at load. Packing reads and
  // reorders every weight (resnet18: 45 MB, ~50 ms of its load, 0.6 ms without); a bundle loads as
  // fast as it maps and its first run pays the packing, once (the mapped weights are then not
  // read again).
  void create() {
    const int64_t group_c = weight_.shape[1], og = out_c_ / attrs_.groups;
    // XNNPACK's filter is [groups][og][kh][kw][group_c] (OHWI), torch's [O][group_c][kh][kw]: the same
    // memory for 1x1 and depthwise filters; others are reordered into a buffer freed after packing.
    std::vector<float> ohwi;
    const float* filter = weight_.ptr();
    if (group_c > 1 && kh_ * kw_ > 1) {
      ohwi.resize(static_cast<size_t>(weight_.size()));
      for (int64_t o = 0; o < out_c_; ++o)
        for (int64_t c = 0; c < group_c; ++c)
          for (int64_t k = 0; k < kh_ * kw_; ++k)
            ohwi[(o * kh_ * kw_ + k) * group_c + c] = filter[(o * group_c + c) * kh_ * kw_ + k];
      filter = ohwi.data();
    }
    xnn_operator_t op = nullptr;
    const auto [ph, pw] = attrs_.padding;
    const auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
    op_ = created(xnn_create_convolution2d_nhwc_f32(u32(ph), u32(pw), u32(ph), u32(pw), u32(kh_), u32(kw_),
                                                    u32(attrs_.stride[0]), u32(attrs_.stride[1]), u32(attrs_.dilation[0]),
                                                    u32(attrs_.dilation[1]), u32(attrs_.groups), static_cast<size_t>(group_c),
                                                    static_cast<size_t>(og), static_cast<size_t>(in_c_),
                                                    static_cast<size_t>(out_c_), filter, bias_ ? bias_->ptr() : nullptr,
                                                    bounds_.lo, bounds_.hi, 0, nullptr, nullptr, &op),
                  op, "convolution");
    weight_ = Array{};  // packed: the operator holds its own copy
    bias_.reset();
  }

  Conv2dAttrs attrs_;
  Array weight_;
  std::optional<Array> bias_;
  Bounds bounds_;
  int64_t out_c_, in_c_, kh_, kw_;
  Kernel kernel_, after_;
  Operator op_;
  Reshaped reshape_;
  std::mutex lock_;
};

class LinearStep final : public FastStep {
 public:
  LinearStep(const Array& weight, const Array* bias, Bounds bounds, Kernel kernel)
      : weight_(weight), bias_(bias != nullptr ? std::optional<Array>(*bias) : std::nullopt), bounds_(bounds),
        out_f_(weight.shape[0]), in_f_(weight.shape[1]), kernel_(std::move(kernel)) {}

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Array& x = slots.nchw(reads[0]);
    if (x.dim() == 0 || x.shape.back() != in_f_ || x.size() == 0) return own(slots, reads, kernel_, nullptr);
    Shape shape = x.shape;
    shape.back() = out_f_;
    float* y;
    Array out = Array::uninitialized(std::move(shape), &y);
    std::lock_guard<std::mutex> guard(lock_);
    if (!op_) {  // packed on the first run, as ConvStep's
      xnn_operator_t op = nullptr;
      // torch's [out_features, in_features] is XNNPACK's filter layout as it is
      op_ = created(xnn_create_fully_connected_nc_f32(static_cast<size_t>(in_f_), static_cast<size_t>(out_f_),
                                                      static_cast<size_t>(in_f_), static_cast<size_t>(out_f_),
                                                      weight_.ptr(), bias_ ? bias_->ptr() : nullptr, bounds_.lo,
                                                      bounds_.hi, 0, nullptr, nullptr, &op),
                    op, "fully connected");
      weight_ = Array{};
      bias_.reset();
    }
    const auto rows = static_cast<size_t>(x.size() / in_f_);
    reshape_.ensure({rows}, [&](size_t*, size_t*) {
      check(xnn_reshape_fully_connected_nc_f32(op_.get(), rows, threadpool()), "fully connected reshape");
    });
    check(xnn_setup_fully_connected_nc_f32(op_.get(), x.ptr(), y), "fully connected setup");
    check(xnn_run_operator(op_.get(), threadpool()), "fully connected");
    stored->nhwc = false;
    return out;
  }

 private:
  Array weight_;
  std::optional<Array> bias_;
  Bounds bounds_;
  int64_t out_f_, in_f_;
  Kernel kernel_;
  Operator op_;
  Reshaped reshape_;
  std::mutex lock_;
};

// Max pooling. XNNPACK's padding never wins a max (it reads a pixel of the window inside the input
// instead), as torch's -inf does not. XNNPACK's windows end inside input + padding, as torch's do
// without ceil mode; with it, torch's last partial window comes from extra bottom/right padding (an
// operator per such padding, as it depends on the input's size). Of float values, or of int8
// values (xnn_int8.cpp), whose grid the result keeps.
class MaxPoolStep final : public FastStep {
 public:
  MaxPoolStep(const Pool2dAttrs& attrs, Kernel kernel, std::optional<Grid> int8 = std::nullopt)
      : attrs_(attrs), kernel_(std::move(kernel)) {
    if (int8) out_ = Requantized{attrs_of(*int8), *int8, -128, 127, {}};
  }

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Shape s = slots.logical_shape(reads[0]);
    const int64_t oh = s.size() == 4 ? output_size(s[2], 0) : 0, ow = s.size() == 4 ? output_size(s[3], 1) : 0;
    if (s.size() != 4 || s[0] * s[1] == 0 || oh <= 0 || ow <= 0)
      return out_ ? via_float({&slots.nchw(reads[0])}, kernel_, *out_, stored) : own(slots, reads, kernel_, nullptr);
    const Array& x = out_ ? slots.int8_nhwc(reads[0]) : slots.nhwc(reads[0]);
    // the padding past the input's end that makes XNNPACK's window count torch's (ceil mode)
    const auto extra = [&](int64_t size, int64_t out, size_t k) {
      return std::max<int64_t>(0, (out - 1) * attrs_.stride[k] + attrs_.dilation[k] * (attrs_.kernel[k] - 1) + 1 -
                                      (size + 2 * attrs_.padding[k]));
    };
    const Pair end_padding{extra(s[2], oh, 0), extra(s[3], ow, 1)};
    std::lock_guard<std::mutex> guard(lock_);
    if (!op_ || end_padding != end_padding_) {  // made on first use
      xnn_operator_t op = nullptr;
      const auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
      const auto [ph, pw] = attrs_.padding;
      const auto [eh, ew] = end_padding;
      const auto make = [&](auto create, auto lo, auto hi, const char* what) {
        return created(create(u32(ph), u32(pw + ew), u32(ph + eh), u32(pw), u32(attrs_.kernel[0]), u32(attrs_.kernel[1]),
                              u32(attrs_.stride[0]), u32(attrs_.stride[1]), u32(attrs_.dilation[0]), u32(attrs_.dilation[1]),
                              lo, hi, 0, &op),
                       op, what);
      };
      op_ = out_ ? make(xnn_create_max_pooling2d_nhwc_s8, int8_t{-128}, int8_t{127}, "int8 max pooling")
                 : make(xnn_create_max_pooling2d_nhwc_f32, -INFINITY, INFINITY, "max pooling");
      end_padding_ = end_padding;
      reshape_ = Reshaped{};
    }
    const Shape shape{s[0], oh, ow, s[1]};
    const auto n = static_cast<size_t>(s[0]), h = static_cast<size_t>(s[2]), w = static_cast<size_t>(s[3]);
    const auto c = static_cast<size_t>(s[1]);
    const auto reshape = [&](auto fn) {
      reshape_.ensure({n, h, w, c}, [&](size_t*, size_t*) {
        size_t out_h = 0, out_w = 0;
        check(fn(op_.get(), n, h, w, c, c, c, &out_h, &out_w, threadpool()), "max pooling reshape");
        if (out_h != static_cast<size_t>(oh) || out_w != static_cast<size_t>(ow))
          throw KernelError("XNNPACK's max pooling computed another output size");
      });
    };
    Array out;
    if (out_) {
      int8_t* y;
      out = int8_array(shape, &y);
      reshape(xnn_reshape_max_pooling2d_nhwc_s8);
      check(xnn_setup_max_pooling2d_nhwc_s8(op_.get(), int8_data(x), y), "max pooling setup");
      stored->int8 = out_->grid;
    } else {
      float* y;
      out = Array::uninitialized(shape, &y);
      reshape(xnn_reshape_max_pooling2d_nhwc_f32);
      check(xnn_setup_max_pooling2d_nhwc_f32(op_.get(), x.ptr(), y), "max pooling setup");
    }
    check(xnn_run_operator(op_.get(), threadpool()), "max pooling");
    stored->nhwc = true;
    return out;
  }
  const Grid* int8_output() const override { return out_ ? &out_->grid : nullptr; }

 private:
  Pool2dAttrs attrs_;
  Kernel kernel_;
  int64_t output_size(int64_t size, size_t k) const {
    return window_output_size(size, attrs_.kernel[k], attrs_.stride[k], attrs_.padding[k], attrs_.dilation[k],
                              attrs_.ceil_mode);
  }

  std::optional<Requantized> out_;  // int8 values: their grid
  Operator op_;
  Pair end_padding_{0, 0};  // op_'s extra bottom and right padding
  Reshaped reshape_;
  std::mutex lock_;
};

// Adaptive average pooling to 1x1 (global average pooling): [N, C, 1, 1] has the same memory in
// both layouts, so the result is NCHW. Of float values, or of int8 values on `in` rounded to a
// FAKE_QUANTIZE's grid (xnn_int8.cpp).
class GlobalAvgPoolStep final : public FastStep {
 public:
  explicit GlobalAvgPoolStep(Kernel kernel, std::optional<Grid> in = std::nullopt,
                             std::optional<Requantized> out = std::nullopt)
      : kernel_(std::move(kernel)), in_(in), out_(std::move(out)) {}

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Shape s = slots.logical_shape(reads[0]);
    if (s.size() != 4 || s[0] * s[1] * s[2] * s[3] == 0)
      return out_ ? via_float({&slots.nchw(reads[0])}, kernel_, *out_, stored) : own(slots, reads, kernel_, nullptr);
    const Array& x = out_ ? slots.int8_nhwc(reads[0]) : slots.nhwc(reads[0]);
    std::lock_guard<std::mutex> guard(lock_);
    if (!op_) {  // XNNPACK's mean over H and W of the NHWC values
      xnn_operator_t op = nullptr;
      if (out_) {
        const xnn_quantization_params in{in_->zero_point, in_->scale}, q{out_->grid.zero_point, out_->grid.scale};
        op_ = created(xnn_create_reduce_nd(xnn_reduce_mean, xnn_datatype_qint8, &in, &q, 0, &op), op,
                      "int8 global average pooling");
      } else {
        op_ = created(xnn_create_reduce_nd(xnn_reduce_mean, xnn_datatype_fp32, nullptr, nullptr, 0, &op), op,
                      "global average pooling");
      }
    }
    const Shape shape{s[0], s[1], 1, 1};
    const std::vector<size_t> nhwc{static_cast<size_t>(s[0]), static_cast<size_t>(s[2]), static_cast<size_t>(s[3]),
                                   static_cast<size_t>(s[1])};
    // The float mean takes no workspace: with one, 4ea82e5's converts its sums through a null kernel.
    void* workspace = reshape_.ensure(nhwc, [&](size_t* size, size_t* alignment) {
      const int64_t axes[] = {1, 2};
      check(xnn_reshape_reduce_nd(op_.get(), 2, axes, nhwc.size(), nhwc.data(), out_ ? size : nullptr,
                                  out_ ? alignment : nullptr, threadpool()),
            "global average pooling reshape");
    });
    Array out;
    if (out_) {
      int8_t* y;
      out = int8_array(shape, &y);
      check(xnn_setup_reduce_nd(op_.get(), workspace, int8_data(x), y), "global average pooling setup");
      check(xnn_run_operator(op_.get(), threadpool()), "global average pooling");
      clamp_in_place(y, out.size(), out_->min, out_->max);  // the folded ReLU/clamp, on the output grid
      stored->int8 = out_->grid;
    } else {
      float* y;
      out = Array::uninitialized(shape, &y);
      check(xnn_setup_reduce_nd(op_.get(), nullptr, x.ptr(), y), "global average pooling setup");
      check(xnn_run_operator(op_.get(), threadpool()), "global average pooling");
    }
    stored->nhwc = false;
    return out;
  }
  const Grid* int8_output() const override { return out_ ? &out_->grid : nullptr; }

 private:
  Kernel kernel_;
  std::optional<Grid> in_;
  std::optional<Requantized> out_;  // int8 values: the grid of the result
  Operator op_;
  Reshaped reshape_;
  std::mutex lock_;
};

// Two-input elementwise ops. Both 4-D with one NHWC: computed in NHWC (a per-channel [N, C, 1, 1]
// operand, as in squeeze-excitation, is [N, 1, 1, C] there at no cost); otherwise NCHW. ADD and MUL
// run as XNNPACK's (threaded, a folded ReLU fused); the others on the own kernel.
class BinaryStep final : public FastStep {
 public:
  // use_xnn: ADD (alpha 1) or MUL
  BinaryStep(Op op, bool use_xnn, Bounds bounds, Kernel kernel)
      : kernel_(std::move(kernel)), after_(bounds.after), lo_(bounds.lo), hi_(bounds.hi) {
    if (use_xnn) {
      xnn_operator_t created_op = nullptr;
      add_ = op == Op::ADD;
      op_ = created(xnn_create_binary_elementwise_nd(add_ ? xnn_binary_add : xnn_binary_multiply, xnn_datatype_fp32,
                                                     nullptr, nullptr, nullptr, 0, &created_op),
                    created_op, add_ ? "add" : "multiply");
    }
  }

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Shape a = slots.logical_shape(reads[0]), b = slots.logical_shape(reads[1]);
    if (!broadcastable(a, b)) return own(slots, reads, kernel_, after_);  // numpy's error text
    const bool use_nhwc = a.size() == 4 && b.size() == 4 && (slots.is_nhwc(reads[0]) || slots.is_nhwc(reads[1]));
    const Array& x = use_nhwc ? slots.nhwc(reads[0]) : slots.nchw(reads[0]);
    const Array& z = use_nhwc ? slots.nhwc(reads[1]) : slots.nchw(reads[1]);
    stored->nhwc = use_nhwc;
    const size_t nd = std::max(x.shape.size(), z.shape.size());
    if (!op_ || nd > XNN_MAX_TENSOR_DIMS || x.size() == 0 || z.size() == 0) {
      Array out = kernel_({&x, &z});
      return after_ ? after_({&out}) : out;
    }
    Shape shape(nd);
    std::vector<size_t> sx(x.shape.begin(), x.shape.end()), sz(z.shape.begin(), z.shape.end());
    for (size_t i = 0; i < nd; ++i) {
      const int64_t dx = i < nd - x.shape.size() ? 1 : x.shape[i - (nd - x.shape.size())];
      const int64_t dz = i < nd - z.shape.size() ? 1 : z.shape[i - (nd - z.shape.size())];
      shape[i] = dx == 1 ? dz : dx;
    }
    float* y;
    Array out = Array::uninitialized(std::move(shape), &y);
    std::lock_guard<std::mutex> guard(lock_);
    run_binary(op_.get(), reshape_, sx, sz, x.ptr(), z.ptr(), y, add_ ? "add" : "multiply");
    clamp_in_place(y, out.size(), lo_, hi_);  // the folded ReLU/clamp
    return out;
  }

 private:
  Kernel kernel_, after_;
  float lo_, hi_;
  Operator op_;
  Reshaped reshape_;
  bool add_ = false;
  std::mutex lock_;
};

// One-input elementwise ops: the own kernel on the value in whichever layout it is; hardswish
// through XNNPACK's (threaded).
class UnaryStep final : public FastStep {
 public:
  UnaryStep(Op op, Kernel kernel) : kernel_(std::move(kernel)) {
    if (op == Op::HARDSWISH) {
      xnn_operator_t created_op = nullptr;
      op_ = created(xnn_create_unary_elementwise_nc(xnn_unary_hardswish, xnn_datatype_fp32, xnn_datatype_fp32, nullptr,
                                                    nullptr, nullptr, 0, &created_op),
                    created_op, "hardswish");
    }
  }

  Array run(Slots& slots, const std::vector<uint32_t>& reads, Stored* stored) override {
    const Array& x = slots.raw(reads[0]);
    stored->nhwc = slots.is_nhwc(reads[0]);
    if (!op_ || x.size() == 0) return kernel_({&x});
    float* y;
    Array out = Array::uninitialized(x.shape, &y);
    std::lock_guard<std::mutex> guard(lock_);
    const auto n = static_cast<size_t>(x.size());
    reshape_.ensure({n}, [&](size_t*, size_t*) {
      check(xnn_reshape_unary_elementwise_nc(op_.get(), n, 1, 1, 1, threadpool()), "hardswish reshape");
    });
    check(xnn_setup_unary_elementwise_nc(op_.get(), x.ptr(), y), "hardswish setup");
    check(xnn_run_operator(op_.get(), threadpool()), "hardswish");
    return out;
  }

 private:
  Kernel kernel_;
  Operator op_;
  Reshaped reshape_;
  std::mutex lock_;
};

// Whether a float step of `op` runs as a UnaryStep, on its input's layout (an NHWC value stays
// NHWC): the op spec's `xnnpack = "unary"`, a generated table over every opcode. SIN and COS are
// elementwise too but not UnarySteps: their own kernel reads an NCHW copy.
bool elementwise_unary(Op op) { return demo_ops::kXnnpackUnaryStep[static_cast<size_t>(op)]; }

}  // namespace

bool xnn_max_pool_takes(const Pool2dAttrs& a) {
  // MaxPoolStep honours kernel, stride, padding, dilation and ceil_mode; count_include_pad and
  // divisor_override are avg pool's. A new field: check MaxPoolStep and this guard, then the count.
  static_assert(Pool2dAttrs::kFieldCount == 7, "Pool2dAttrs changed: check the XNNPACK max pool path");
  // XNNPACK refuses a 1x1 window and a stride longer than the window
  return a.kernel[0] * a.kernel[1] > 1 && a.stride[0] <= a.kernel[0] && a.stride[1] <= a.kernel[1];
}

std::shared_ptr<FastStep> make_max_pool(const Pool2dAttrs& attrs, Kernel kernel, Grid in) {
  return std::make_shared<MaxPoolStep>(attrs, std::move(kernel), in);
}

std::shared_ptr<FastStep> make_global_avg_pool(Kernel kernel, Grid in, Requantized out) {
  return std::make_shared<GlobalAvgPoolStep>(std::move(kernel), in, std::move(out));
}

pthreadpool_t threadpool() {
  return current_pool != nullptr ? static_cast<pthreadpool_t>(current_pool->handle()) : nullptr;
}

size_t Reshaped::threads() {
  const pthreadpool_t pool = threadpool();
  return pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
}

void run_binary(xnn_operator_t op, Reshaped& reshaped, const std::vector<size_t>& a, const std::vector<size_t>& b,
                const void* x, const void* z, void* y, const char* what) {
  std::vector<size_t> key(a);
  key.push_back(0);  // a separator: the shapes' ranks may differ
  key.insert(key.end(), b.begin(), b.end());
  reshaped.ensure(std::move(key), [&](size_t*, size_t*) {
    check(xnn_reshape_binary_elementwise_nd(op, a.size(), a.data(), b.size(), b.data(), threadpool()), what);
  });
  check(xnn_setup_binary_elementwise_nd(op, x, z, y), what);
  check(xnn_run_operator(op, threadpool()), what);
}

void initialize_xnnpack() {
  static std::once_flag once;
  static xnn_status status = xnn_status_success;
  std::call_once(once, [] { status = xnn_initialize(nullptr); });
  if (status != xnn_status_success)
    throw Error(ErrorKind::Format, "XNNPACK cannot run on this CPU (xnn_initialize: status " +
                                       std::to_string(static_cast<int>(status)) + ")");
}

Array own(Slots& slots, const std::vector<uint32_t>& reads, const Kernel& kernel, const Kernel& after) {
  Inputs args;
  for (uint32_t r : reads) args.push_back(&slots.nchw(r));
  Array out = kernel(args);
  return after ? after({&out}) : out;
}

bool broadcastable(const Shape& a, const Shape& b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

bool fold_clamp(MethodPlan& plan, std::vector<bool>& removed, size_t i, Bounds& bounds) {
  // a folded CLAMP is its min and max; a new field: check the fold, then the count
  static_assert(ClampAttrs::kFieldCount == 2, "ClampAttrs changed: check fold_clamp");
  const std::optional<size_t> j = sole_reader(plan, removed, i);
  if (!j) return false;
  Step& next = plan.steps[*j];
  if (next.reads.size() != 1 || static_cast<DType>(plan.slot_dtypes[next.write]) != DType::Float32) return false;
  bool folded = false;
  if (next.op == Op::RELU) folded = bounds.fold(0.0f, INFINITY);
  else if (next.op == Op::CLAMP) folded = bounds.fold(lower(std::get<ClampAttrs>(next.attrs).min), upper(std::get<ClampAttrs>(next.attrs).max));
  if (!folded) return false;
  bounds.after = next.kernel;
  plan.steps[i].write = next.write;
  removed[*j] = true;
  return true;
}

const Array* constant_of(const Constants& constants, const Step& step, size_t k) {
  if (k >= step.reads.size()) return nullptr;
  auto it = constants.find(step.reads[k]);
  return it == constants.end() ? nullptr : it->second;
}

namespace {

// The float XNNPACK step of step i, when it has one.
void prepare_float_step(MethodPlan& plan, std::vector<bool>& removed, const Constants& constants, size_t i) {
  // the attribute fields this guard and its steps honour; a new field: check them, then the count
  static_assert(Conv2dAttrs::kFieldCount == 5, "Conv2dAttrs changed: check ConvStep and this guard");
  static_assert(FusedAttrs::kFieldCount == 1, "FusedAttrs changed: check LinearStep and this guard");
  static_assert(ShapeAttrs::kFieldCount == 1, "ShapeAttrs changed: check GlobalAvgPoolStep's guard");
  static_assert(BinaryAttrs::kFieldCount == 3, "BinaryAttrs changed: check BinaryStep and this guard");
  Step& step = plan.steps[i];
  // float kernels read a qint8 weight's float values (widened once, narrow_weights.h)
  const auto constant = [&](const Step& s, size_t k) -> const Array* {
    const Array* a = constant_of(constants, s, k);
    return a == nullptr ? nullptr : &float_values(*a);
  };
  // a ReLU/clamp that only reads the result folds into it (the result then skips it)
  const auto fold_reader = [&](size_t at, Bounds& bounds) { fold_clamp(plan, removed, at, bounds); };
  switch (step.op) {
    case Op::CONV2D: {
      const Array* w = constant(step, 1);
      const Array* b = constant(step, 2);
      const Conv2dAttrs& a = std::get<Conv2dAttrs>(step.attrs);
      // a weight the own kernel would refuse, or a bias of another size, stays with the own kernel
      if (w == nullptr || (step.reads.size() > 2 && b == nullptr) || w->dim() != 4 || w->size() == 0 ||
          w->shape[0] % a.groups != 0 || (b != nullptr && b->size() != w->shape[0]))
        break;
      Bounds bounds;
      if (a.activation == Activation::Relu) bounds.lo = 0.0f;
      fold_reader(i, bounds);
      // the own kernel applies the conv's own ReLU; the folded step's kernel follows it
      step.fast = std::make_shared<ConvStep>(a, *w, b, bounds, step.kernel);
      break;
    }
    case Op::LINEAR: {
      const Array* w = constant(step, 1);
      const Array* b = constant(step, 2);
      if (w == nullptr || (step.reads.size() > 2 && b == nullptr) || w->dim() != 2 || w->size() == 0 ||
          (b != nullptr && b->size() != w->shape[0]))
        break;
      Bounds bounds;
      if (std::get<FusedAttrs>(step.attrs).activation == Activation::Relu) bounds.lo = 0.0f;
      step.fast = std::make_shared<LinearStep>(*w, b, bounds, step.kernel);
      break;
    }
    case Op::MAX_POOL2D: {
      const Pool2dAttrs& a = std::get<Pool2dAttrs>(step.attrs);
      if (xnn_max_pool_takes(a))
        step.fast = std::make_shared<MaxPoolStep>(a, step.kernel);
      break;
    }
    case Op::ADAPTIVE_AVG_POOL2D: {
      const ShapeAttrs& a = std::get<ShapeAttrs>(step.attrs);
      if (a.dims.size() == 2 && a.dims[0] == 1 && a.dims[1] == 1) step.fast = std::make_shared<GlobalAvgPoolStep>(step.kernel);
      break;
    }
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
    case Op::POW: {
      if (step.reads.size() == 1) {  // with a scalar: elementwise
        step.fast = std::make_shared<UnaryStep>(step.op, step.kernel);
        break;
      }
      const BinaryAttrs& a = std::get<BinaryAttrs>(step.attrs);
      const bool xnn = (step.op == Op::ADD && a.alpha == 1.0) || step.op == Op::MUL;
      Bounds bounds;
      if (xnn) fold_reader(i, bounds);
      step.fast = std::make_shared<BinaryStep>(step.op, xnn, bounds, step.kernel);
      break;
    }
    default:  // fast path only: the other ops keep their own kernel, but elementwise_unary's (it lists every opcode)
      if (elementwise_unary(step.op)) step.fast = std::make_shared<UnaryStep>(step.op, step.kernel);
      break;
  }
}

}  // namespace

void prepare_fast_steps(MethodPlan& plan) {
  initialize_xnnpack();
  Constants constants;
  for (const auto& [slot, weight] : plan.constants) constants[slot] = &weight;
  std::vector<bool> removed(plan.steps.size(), false);
  // XNNPACK's float operators take float32: a step reading or writing another dtype (an int64 ADD
  // of positions, say) keeps its own kernel
  const auto float_only = [&plan](const Step& step) {
    const auto is_float = [&plan](uint32_t slot) { return static_cast<DType>(plan.slot_dtypes[slot]) == DType::Float32; };
    return is_float(step.write) && std::all_of(step.reads.begin(), step.reads.end(), is_float);
  };
  Int8Planner int8(plan, removed, constants);  // follows which values are int8, step by step
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (removed[i]) continue;
    if (!int8.prepare(i) && float_only(plan.steps[i])) prepare_float_step(plan, removed, constants, i);
    int8.track(i);
  }
  size_t kept = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (removed[i]) continue;
    if (kept != i) {  // a self-move would empty the step
      plan.steps[kept] = std::move(plan.steps[i]);
      plan.labels[kept] = std::move(plan.labels[i]);
      plan.debug_handles[kept] = plan.debug_handles[i];
    }
    ++kept;
  }
  plan.steps.resize(kept);
  plan.labels.resize(kept);
  plan.debug_handles.resize(kept);
}

ThreadPool::ThreadPool(int threads) : pool_(pthreadpool_create(static_cast<size_t>(threads))) {
  if (pool_ == nullptr) throw Error(ErrorKind::Input, "could not start " + std::to_string(threads) + " threads");
}

ThreadPool::~ThreadPool() { pthreadpool_destroy(static_cast<pthreadpool_t>(pool_)); }

ThreadPoolScope::ThreadPoolScope(const ThreadPool* pool) : previous_(current_pool) { current_pool = pool; }

ThreadPoolScope::~ThreadPoolScope() { current_pool = previous_; }

}  // namespace liteexport::demo_backend
