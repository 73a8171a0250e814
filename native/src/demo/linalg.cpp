// Matrix products: torch.matmul (1-D promotion, batch broadcasting) and the linear layer.
#include <memory>
#include <vector>

#include "../errors.h"
#include "derived_weight.h"
#include "kernels.h"

namespace liteexport::demo_backend {

Kernel make_matmul() {
  return [](const Inputs& in) {
    const Array &a = *in[0], &b = *in[1];
    if (a.dim() == 0 || b.dim() == 0)
      throw KernelError("matmul needs arguments of at least 1-D, got shapes " + py_shape(a.shape) + " and " +
                        py_shape(b.shape));
    auto mismatch = [&] {
      return KernelError("shapes " + py_shape(a.shape) + " and " + py_shape(b.shape) + " cannot be multiplied");
    };
    // 1-D operands are promoted to matrices and the added axis removed afterwards (numpy/torch)
    Shape sa = a.shape, sb = b.shape;
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
    if (sb[sb.size() - 2] != k) throw mismatch();
    Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    const size_t nd = std::max(ba.size(), bb.size());
    ba.insert(ba.begin(), nd - ba.size(), 1);
    bb.insert(bb.begin(), nd - bb.size(), 1);
    Shape batch(nd);
    for (size_t i = 0; i < nd; ++i) {
      if (ba[i] != bb[i] && ba[i] != 1 && bb[i] != 1) throw mismatch();
      batch[i] = ba[i] == 1 ? bb[i] : ba[i];
    }
    Shape out_shape = batch;
    if (a.dim() > 1) out_shape.push_back(m);
    if (b.dim() > 1) out_shape.push_back(n);
    float* y;
    Array out = Array::zeros(out_shape, &y);
    const int64_t batches = numel(batch);
    auto sta = contiguous_strides(ba), stb = contiguous_strides(bb), sto = contiguous_strides(batch);
    for (int64_t t = 0; t < batches; ++t) {
      int64_t ia = 0, ib = 0, rest = t;
      for (size_t d = 0; d < nd; ++d) {
        const int64_t idx = rest / sto[d];
        rest %= sto[d];
        if (ba[d] != 1) ia += idx * sta[d];
        if (bb[d] != 1) ib += idx * stb[d];
      }
      gemm_acc(m, n, k, a.ptr() + ia * m * k, k, b.ptr() + ib * k * n, n, y + t * m * n, n);
    }
    return out;
  };
}

namespace {

// From this many rows on, a linear layer is compute-bound and runs as outer products on the
// transposed weight (gemm_acc, ~1.5x the dot products' speed); below, it is bound by reading the
// weight once, which gemm_bt does in place.
constexpr int64_t kPackedRows = 16;

// The transposed weight (in_f x out_f), made on first use and kept by the kernel (DerivedWeight).
// Costs one more copy of each linear weight used with >= kPackedRows rows, as prepacking runtimes
// (XNNPACK) do.
void transposed_weight(const Array& w, std::vector<float>& wt) {
  const int64_t out_f = w.shape[0], in_f = w.shape[1];
  wt.assign(static_cast<size_t>(out_f * in_f), 0.0f);
  for (int64_t o = 0; o < out_f; ++o)
    for (int64_t i = 0; i < in_f; ++i) wt[i * out_f + o] = w.ptr()[o * in_f + i];
}

}  // namespace

Kernel make_linear(const FusedAttrs& attrs) {
  const bool relu = attrs.activation == Activation::Relu;
  auto transposed = std::make_shared<DerivedWeight>();
  return [=](const Inputs& in) {
    const Array& x = *in[0];
    const Array& w = *in[1];
    if (x.dim() == 0 || w.dim() != 2 || x.shape.back() != w.shape[1])
      throw KernelError("input of shape " + py_shape(x.shape) + " and weight of shape " + py_shape(w.shape) +
                        " do not match (expected weight [out_features, in_features] with in_features == "
                        "input.shape[-1])");
    const int64_t out_f = w.shape[0], in_f = w.shape[1], rows = numel(Shape(x.shape.begin(), x.shape.end() - 1));
    const Array* bias = in.size() > 2 ? in[2] : nullptr;
    if (bias != nullptr && bias->size() != out_f && bias->size() != 1)
      throw KernelError("operands could not be broadcast together: bias of shape " + py_shape(bias->shape) +
                        " for " + std::to_string(out_f) + " output features");
    Shape out_shape = x.shape;
    out_shape.back() = out_f;
    float* y;
    Array out = Array::zeros(out_shape, &y);
    const float* pb = bias ? bias->ptr() : nullptr;
    const int64_t bias_step = bias && bias->size() == out_f ? 1 : 0;
    if (rows >= kPackedRows)  // y starts at zero: gemm_acc's sums are the plain sequential ones
      gemm_acc(rows, out_f, in_f, x.ptr(), in_f, transposed->of(w, transposed_weight), out_f, y, out_f);
    else
      gemm_bt(rows, out_f, in_f, x.ptr(), in_f, w.ptr(), in_f, y, out_f);
    if (pb != nullptr)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < out_f; ++o) y[r * out_f + o] += pb[o * bias_step];
    if (relu) relu_inplace(y, out.size());
    return out;
  };
}

}  // namespace liteexport::demo_backend
