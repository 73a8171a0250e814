"""ATTENTION: scaled dot-product attention over a KV cache, grouped-query, reading only the key
positions some query attends to.

q [B, H, S, D], k [B, Hkv, L, D], v [B, Hkv, L, Dv], H a multiple of Hkv: query head h reads kv
head h // (H / Hkv), so a model's repeated kv heads are never materialized. The mask (bool, True =
attend, or float, added to the scores) broadcasts to [B, H, S, L]. Key positions that every query
masks out contribute exactly nothing, so they are not computed: a decode step at position p of an
L-position cache reads its first p + 1 keys, not L. A query whose keys are all masked gives zeros
(torch's safe softmax in its math attention).
"""

from __future__ import annotations

import numpy as np

from bundle_format.program import AttentionAttrs
from runtime_py.backends.demo.arrays import Array, Kernel

__all__ = ["make_attention", "used_keys"]


def used_keys(mask: Array | None, length: int) -> int:
    """How many leading key positions some query attends to: one past the last position a query
    does not mask out (bool True, or a float above -inf)."""
    if mask is None or mask.shape[-1] == 1 and length != 1:
        return length
    attends = mask if mask.dtype == np.bool_ else mask > -np.inf
    columns = attends.reshape(-1, attends.shape[-1]).any(axis=0)
    hits = np.flatnonzero(columns)
    return int(hits[-1]) + 1 if hits.size else 0


def make_attention(attrs: AttentionAttrs, n_inputs: int) -> Kernel:
    scale = np.float32(attrs.scale)

    def attention(q: Array, k: Array, v: Array, mask: Array | None = None) -> Array:
        if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
            raise ValueError(f"ATTENTION takes 4-D q, k, v [B, H, S, D], got shapes {q.shape}, {k.shape}, {v.shape}")
        batch, heads, queries, depth = q.shape
        kv_heads, length = k.shape[1], k.shape[2]
        if k.shape[0] != batch or v.shape[:3] != k.shape[:3] or k.shape[3] != depth or kv_heads == 0 \
                or heads % kv_heads:
            raise ValueError(f"ATTENTION: q {q.shape}, k {k.shape} and v {v.shape} do not fit [B, H, S, D], "
                             "[B, Hkv, L, D], [B, Hkv, L, Dv] with H a multiple of Hkv")
        if mask is not None:
            mask = np.broadcast_to(mask, (batch, heads, queries, length))  # ValueError when it does not fit
        used = used_keys(mask, length)
        groups = heads // kv_heads
        grouped = q.reshape(batch, kv_heads, groups, queries, depth) * scale
        scores = np.matmul(grouped, np.swapaxes(k[:, :, :used], -1, -2)[:, :, None])  # [B, Hkv, g, S, used]
        if mask is not None:
            window = mask[..., :used].reshape(batch, kv_heads, groups, queries, used)
            scores = np.where(window, scores, np.float32(-np.inf)) if window.dtype == np.bool_ else scores + window
        top = scores.max(axis=-1, keepdims=True) if used else np.zeros((*scores.shape[:-1], 1), np.float32)
        finite = np.isfinite(top)
        weights = np.exp(scores - np.where(finite, top, np.float32(0)))
        total = weights.sum(axis=-1, keepdims=True)
        weights = np.where(finite, weights / np.where(total > 0, total, np.float32(1)), np.float32(0))
        out = np.matmul(weights, v[:, :, :used][:, :, None])  # [B, Hkv, g, S, Dv]
        return np.ascontiguousarray(out.reshape(batch, heads, queries, v.shape[-1]), dtype=np.float32)

    return attention
