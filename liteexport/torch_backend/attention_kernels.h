// ATTENTION in the torch extension (part of backend.cpp's one translation unit): grouped-query
// scaled dot-product attention that reads only the key positions some query attends to.
// runtime_py/backends/demo/attention.py is the reference: the same checks and texts.
#pragma once

namespace {

// How many leading key positions some query attends to (bool True, or a float above -inf).
int64_t used_keys(const at::Tensor& mask, int64_t length) {
  if (!mask.defined() || (mask.size(-1) == 1 && length != 1)) return length;
  at::Tensor attends = mask.scalar_type() == at::kBool ? mask : mask.gt(-std::numeric_limits<float>::infinity());
  at::Tensor columns = attends.reshape({-1, attends.size(-1)}).any(0);
  at::Tensor hits = columns.nonzero();
  return hits.numel() ? hits.max().item<int64_t>() + 1 : 0;
}

at::Tensor attention(const Step& s, const Tensors& x) {
  const at::Tensor &q = x[0], &k = x[1], &v = x[2];
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    kernel_error("ATTENTION takes 4-D q, k, v [B, H, S, D], got shapes " + shape_str(q.sizes()) + ", " +
                 shape_str(k.sizes()) + ", " + shape_str(v.sizes()));
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2), depth = q.size(3);
  const int64_t kv_heads = k.size(1), length = k.size(2);
  if (k.size(0) != batch || v.size(0) != k.size(0) || v.size(1) != kv_heads || v.size(2) != length ||
      k.size(3) != depth || kv_heads == 0 || heads % kv_heads != 0)
    kernel_error("ATTENTION: q " + shape_str(q.sizes()) + ", k " + shape_str(k.sizes()) + " and v " +
                 shape_str(v.sizes()) + " do not fit [B, H, S, D], [B, Hkv, L, D], [B, Hkv, L, Dv] with H a multiple "
                 "of Hkv");
  at::Tensor mask;
  if (x.size() > 3 && x[3].defined()) {
    if (!at::is_expandable_to(x[3].sizes(), {batch, heads, queries, length}))
      kernel_error("ATTENTION: the mask of shape " + shape_str(x[3].sizes()) + " does not broadcast to " +
                   shape_str(std::vector<int64_t>{batch, heads, queries, length}));
    mask = x[3].expand({batch, heads, queries, length});
  }
  const int64_t used = used_keys(mask, length);
  const int64_t groups = heads / kv_heads;
  const auto scale = attrs_of<dp::AttentionAttrs>(s).scale;
  at::Tensor grouped = q.reshape({batch, kv_heads, groups, queries, depth}).mul(scale);
  at::Tensor keys = k.narrow(2, 0, used).unsqueeze(2);    // [B, Hkv, 1, used, D]
  at::Tensor values = v.narrow(2, 0, used).unsqueeze(2);  // [B, Hkv, 1, used, Dv]
  at::Tensor scores = at::matmul(grouped, keys.transpose(-1, -2));  // [B, Hkv, g, S, used]
  if (mask.defined()) {
    at::Tensor window = mask.narrow(3, 0, used).reshape({batch, kv_heads, groups, queries, used});
    scores = window.scalar_type() == at::kBool
                 ? scores.masked_fill(window.logical_not(), -std::numeric_limits<float>::infinity())
                 : scores.add(window);
  }
  // softmax, and zeros for a query whose keys are all masked (torch's safe softmax)
  at::Tensor top = used ? std::get<0>(scores.max(-1, true)) : at::zeros({batch, kv_heads, groups, queries, 1});
  at::Tensor finite = top.isfinite();
  at::Tensor weights = (scores - at::where(finite, top, at::zeros_like(top))).exp();
  at::Tensor total = weights.sum(-1, true);
  weights = at::where(finite, weights / at::where(total.gt(0), total, at::ones_like(total)), at::zeros_like(weights));
  return at::matmul(weights, values).reshape({batch, heads, queries, v.size(3)}).contiguous();
}

}  // namespace
