// Matrix products: torch.matmul (1-D promotion, batch broadcasting) and the linear layer.
#include <cstring>

#include "../errors.h"
#include "kernels.h"

namespace liteexport::demo_backend {

void gemm_acc(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc) {
  // i-k-j order: the innermost loop runs over contiguous rows of B and C (vectorizes at -O2)
  for (int64_t i = 0; i < m; ++i) {
    float* crow = c + i * ldc;
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[i * lda + p];
      const float* brow = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
    }
  }
}

namespace {

// Four float lanes: GCC/Clang lower this to SSE on x86-64 and NEON on ARM (both baseline), so the dot
// products below vectorize without -ffast-math (which would let the compiler reorder any sum).
typedef float Lanes __attribute__((vector_size(16)));
constexpr int64_t kLanes = 4;

Lanes load_lanes(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);  // unaligned load: rows of a mapped bundle are only 4-byte aligned
  return v;
}

float lane_sum(Lanes v) {
  float s = 0.0f;
  for (int64_t i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

// y[r, o] = dot(x[r, :], w[o, :]) for r < rows, o < n (x @ w.T). Four weight rows at a time stay
// in L1 while every row of x passes them, and each (r, o) keeps four partial sums, so the loop is
// bound by loads rather than by one chain of dependent adds.
void dot_rows(const float* x, int64_t rows, const float* w, int64_t k, int64_t n, float* y) {
  const int64_t k_vec = k - k % kLanes;
  int64_t o = 0;
  for (; o + 4 <= n; o += 4) {
    const float *w0 = w + o * k, *w1 = w0 + k, *w2 = w1 + k, *w3 = w2 + k;
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * k;
      Lanes a0 = {}, a1 = {}, a2 = {}, a3 = {};
      for (int64_t i = 0; i < k_vec; i += kLanes) {
        const Lanes xv = load_lanes(xr + i);
        a0 += xv * load_lanes(w0 + i);
        a1 += xv * load_lanes(w1 + i);
        a2 += xv * load_lanes(w2 + i);
        a3 += xv * load_lanes(w3 + i);
      }
      float s0 = lane_sum(a0), s1 = lane_sum(a1), s2 = lane_sum(a2), s3 = lane_sum(a3);
      for (int64_t i = k_vec; i < k; ++i) {
        s0 += xr[i] * w0[i];
        s1 += xr[i] * w1[i];
        s2 += xr[i] * w2[i];
        s3 += xr[i] * w3[i];
      }
      float* yr = y + r * n + o;
      yr[0] = s0, yr[1] = s1, yr[2] = s2, yr[3] = s3;
    }
  }
  for (; o < n; ++o)
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x + r * k, *wr = w + o * k;
      Lanes a = {};
      for (int64_t i = 0; i < k_vec; i += kLanes) a += load_lanes(xr + i) * load_lanes(wr + i);
      float s = lane_sum(a);
      for (int64_t i = k_vec; i < k; ++i) s += xr[i] * wr[i];
      y[r * n + o] = s;
    }
}

}  // namespace

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

Kernel make_linear(const FusedAttrs& attrs) {
  const bool relu = attrs.relu;
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
    dot_rows(x.ptr(), rows, w.ptr(), in_f, out_f, y);
    if (pb != nullptr)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < out_f; ++o) y[r * out_f + o] += pb[o * bias_step];
    if (relu) relu_inplace(y, out.size());
    return out;
  };
}

}  // namespace liteexport::demo_backend
