// ATTENTION: grouped-query scaled dot-product attention over a KV cache, computing only the key
// positions some query attends to (runtime_py/backends/demo/attention.py is the reference: the
// same checks and texts). q [B, H, S, D], k [B, Hkv, L, D], v [B, Hkv, L, Dv]; query head h reads
// kv head h / (H / Hkv), so repeated kv heads are never materialized; the mask (bool, True =
// attend, or float, added) broadcasts to [B, H, S, L]; a query whose keys are all masked gives zeros.
#include <cmath>
#include <limits>
#include <vector>

#include "broadcast.h"
#include "float_math.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

std::string shape_text(const Shape& s) { return demo_errors::tuple_text(s); }

}  // namespace

Kernel make_attention(const AttentionAttrs& a) {
  const float scale = static_cast<float>(a.scale);
  return [scale](const Inputs& in) {
    const Array &q = *in[0], &k = *in[1], &v = *in[2];
    if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
      throw KernelError("ATTENTION takes 4-D q, k, v [B, H, S, D], got shapes " + shape_text(q.shape) + ", " +
                        shape_text(k.shape) + ", " + shape_text(v.shape));
    const int64_t batch = q.shape[0], heads = q.shape[1], queries = q.shape[2], depth = q.shape[3];
    const int64_t kv_heads = k.shape[1], length = k.shape[2], vdepth = v.shape[3];
    if (k.shape[0] != batch || v.shape[0] != batch || v.shape[1] != kv_heads || v.shape[2] != length ||
        k.shape[3] != depth || kv_heads == 0 || heads % kv_heads != 0)
      throw KernelError("ATTENTION: q " + shape_text(q.shape) + ", k " + shape_text(k.shape) + " and v " +
                        shape_text(v.shape) +
                        " do not fit [B, H, S, D], [B, Hkv, L, D], [B, Hkv, L, Dv] with H a multiple of Hkv");
    const Shape full{batch, heads, queries, length};
    const Array* mask = in.size() > 3 ? in[3] : nullptr;
    // the mask's element offset for (b, h, s, l), broadcast (a dim of 1 repeats)
    std::vector<int64_t> mstride(4, 0);
    if (mask != nullptr) {
      if (mask->dim() > 4) throw KernelError("ATTENTION: the mask has more than 4 dims: " + shape_text(mask->shape));
      Shape padded(4, 1);
      std::copy(mask->shape.begin(), mask->shape.end(), padded.begin() + (4 - mask->dim()));
      int64_t stride = 1;
      for (int d = 3; d >= 0; --d) {
        if (padded[static_cast<size_t>(d)] != 1 && padded[static_cast<size_t>(d)] != full[static_cast<size_t>(d)])
          throw KernelError("ATTENTION: the mask of shape " + shape_text(mask->shape) + " does not broadcast to " +
                            shape_text(full));
        mstride[static_cast<size_t>(d)] = padded[static_cast<size_t>(d)] == 1 ? 0 : stride;
        stride *= padded[static_cast<size_t>(d)];
      }
    }
    const bool bool_mask = mask != nullptr && mask->dtype == DType::Bool;
    const float neg_inf = -std::numeric_limits<float>::infinity();
    // the additive value the mask gives (b, h, s, l): 0 or -inf for a bool mask
    auto masked = [&](int64_t b, int64_t h, int64_t s, int64_t l) -> float {
      const int64_t at = b * mstride[0] + h * mstride[1] + s * mstride[2] + l * mstride[3];
      if (bool_mask) return mask->data_as<uint8_t>()[at] ? 0.0f : neg_inf;
      return mask->ptr()[at];
    };
    // the key positions some query attends to: one past the last column any (b, h, s) keeps
    int64_t used = length;
    if (mask != nullptr) {
      used = 0;
      for (int64_t l = length - 1; l >= 0 && used == 0; --l)
        for (int64_t b = 0; b < batch && used == 0; ++b)
          for (int64_t h = 0; h < heads && used == 0; ++h)
            for (int64_t s = 0; s < queries && used == 0; ++s)
              if (masked(b, h, s, l) > neg_inf) used = l + 1;
    }
    float* out;
    Array result = Array::zeros<float>({batch, heads, queries, vdepth}, &out);
    const int64_t groups = heads / kv_heads;
    std::vector<float> scores(static_cast<size_t>(used));
    const float *qp = q.ptr(), *kp = k.ptr(), *vp = v.ptr();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t kvh = h / groups;
        const float* keys = kp + ((b * kv_heads + kvh) * length) * depth;
        const float* values = vp + ((b * kv_heads + kvh) * length) * vdepth;
        for (int64_t s = 0; s < queries; ++s) {
          check_deadline();
          const float* query = qp + ((b * heads + h) * queries + s) * depth;
          float top = neg_inf;
          for (int64_t l = 0; l < used; ++l) {
            float dot = 0.0f;
            for (int64_t d = 0; d < depth; ++d) dot += (query[d] * scale) * keys[l * depth + d];
            if (mask != nullptr) dot = bool_mask && masked(b, h, s, l) == neg_inf ? neg_inf : dot + masked(b, h, s, l);
            scores[static_cast<size_t>(l)] = dot;
            top = std::max(top, dot);
          }
          float* row = out + ((b * heads + h) * queries + s) * vdepth;
          if (!(top > neg_inf)) continue;  // every key masked (or none): zeros
          double total = 0;
          for (int64_t l = 0; l < used; ++l) {
            scores[static_cast<size_t>(l)] = exp_float(scores[static_cast<size_t>(l)] - top);
            total += scores[static_cast<size_t>(l)];
          }
          for (int64_t l = 0; l < used; ++l) {
            const float w = static_cast<float>(scores[static_cast<size_t>(l)] / total);
            if (w == 0.0f) continue;
            for (int64_t d = 0; d < vdepth; ++d) row[d] += w * values[l * vdepth + d];
          }
        }
      }
    return result;
  };
}

}  // namespace liteexport::demo_backend
