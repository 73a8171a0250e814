"""Attention: scaled_dot_product_attention and the fused kernels torch's nn.MultiheadAttention
and nn.TransformerEncoderLayer call in eval mode (_native_multi_head_attention,
_transformer_encoder_layer_fwd). Computed in float64; fully masked rows give zeros."""

from __future__ import annotations

import math

import numpy as np

from runtime_py.errors import ExecutionError
from runtime_py.operators.elementwise import gelu
from runtime_py.operators.normalization import layer_norm
from runtime_py.operators.registry import op


def _bias(mask: np.ndarray | None, masked_is_true: bool) -> np.ndarray | None:
    """An additive float mask: bool masks become 0 / -inf."""
    if mask is None:
        return None
    if mask.dtype == np.bool_:
        hidden = mask if masked_is_true else ~mask
        return np.where(hidden, -np.inf, 0.0)
    return mask.astype(np.float64)


def _attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray | None,
            scale: float) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q k^T * scale + bias) v, and the attention weights; all float64."""
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if bias is not None:
        scores = scores + bias
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top)
    total = np.sum(e, axis=-1, keepdims=True)
    weights = np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
    return np.matmul(weights, v), weights


@op("aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
    "float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor")
def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, attn_mask: np.ndarray | None,
                                 dropout_p: float, is_causal: bool, scale: float | None,
                                 enable_gqa: bool) -> np.ndarray:
    if dropout_p > 0:
        raise ExecutionError("attention dropout is random and not supported by runtime_py (dropout_p > 0)")
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise ExecutionError(f"scaled_dot_product_attention expects query, key and value of at least 2 dims, got "
                             f"shapes {list(q.shape)}, {list(k.shape)} and {list(v.shape)}")
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    bias = _bias(attn_mask, masked_is_true=False)
    if is_causal:
        causal = np.where(np.tril(np.ones((q.shape[-2], k.shape[-2]), bool)), 0.0, -np.inf)
        bias = causal if bias is None else bias + causal
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    out, _ = _attend(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), bias, s)
    return out.astype(q.dtype)


def _mask_bias(mask: np.ndarray | None, mask_type: int | None, batch: int) -> np.ndarray | None:
    """Native MHA masks (True = ignore): 0 src mask (L, S), 1 key padding (B, S), 2 merged (B, H, L, S)."""
    bias = _bias(mask, masked_is_true=True)
    if bias is None:
        return None
    if mask_type == 1 or (mask_type is None and bias.ndim == 2 and bias.shape[0] == batch and batch > 1):
        return bias.reshape(bias.shape[0], 1, 1, bias.shape[-1])
    if bias.ndim == 3:
        return bias[:, None]
    return bias


def multi_head_attention(query: np.ndarray, key: np.ndarray, value: np.ndarray, embed_dim: int, num_heads: int,
                         qkv_weight: np.ndarray, qkv_bias: np.ndarray, proj_weight: np.ndarray,
                         proj_bias: np.ndarray, mask: np.ndarray | None, mask_type: int | None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Batch-first (B, L, E) attention with packed in-projection; returns (output, per-head weights)."""
    if query.ndim != 3 or query.shape[-1] != embed_dim or embed_dim % num_heads:
        raise ExecutionError(f"expected batch-first (B, L, {embed_dim}) inputs divisible into {num_heads} heads, "
                             f"got query of shape {list(query.shape)}")
    w = qkv_weight.astype(np.float64)
    b = qkv_bias.astype(np.float64)
    e = embed_dim
    head = e // num_heads

    def project(x: np.ndarray, i: int) -> np.ndarray:
        y = x.astype(np.float64) @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]
        return y.reshape(x.shape[0], x.shape[1], num_heads, head).transpose(0, 2, 1, 3)  # (B, H, L, D)

    q, k, v = project(query, 0), project(key, 1), project(value, 2)
    out, weights = _attend(q, k, v, _mask_bias(mask, mask_type, query.shape[0]), 1.0 / math.sqrt(head))
    out = out.transpose(0, 2, 1, 3).reshape(query.shape[0], query.shape[1], e)
    out = out @ proj_weight.astype(np.float64).T + proj_bias
    return out, weights


@op("aten::_native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, "
    "Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, "
    "bool need_weights=True, bool average_attn_weights=True, int? mask_type=None) -> (Tensor, Tensor)")
def native_multi_head_attention(query: np.ndarray, key: np.ndarray, value: np.ndarray, embed_dim: int,
                                num_heads: int, qkv_weight: np.ndarray, qkv_bias: np.ndarray,
                                proj_weight: np.ndarray, proj_bias: np.ndarray, mask: np.ndarray | None,
                                need_weights: bool, average_attn_weights: bool,
                                mask_type: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    out, weights = multi_head_attention(query, key, value, embed_dim, num_heads, qkv_weight, qkv_bias,
                                        proj_weight, proj_bias, mask, mask_type)
    if not need_weights:
        return out.astype(query.dtype), None  # torch returns an undefined tensor, None to Python
    if average_attn_weights:
        weights = weights.mean(axis=1)
    return out.astype(query.dtype), weights.astype(query.dtype)


@op("aten::_transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, "
    "Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, bool norm_first, float eps, "
    "Tensor norm_weight_1, Tensor norm_bias_1, Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, "
    "Tensor ffn_bias_1, Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None) -> Tensor")
def transformer_encoder_layer(src: np.ndarray, embed_dim: int, num_heads: int, qkv_weight: np.ndarray,
                              qkv_bias: np.ndarray, proj_weight: np.ndarray, proj_bias: np.ndarray, use_gelu: bool,
                              norm_first: bool, eps: float, norm_weight_1: np.ndarray, norm_bias_1: np.ndarray,
                              norm_weight_2: np.ndarray, norm_bias_2: np.ndarray, ffn_weight_1: np.ndarray,
                              ffn_bias_1: np.ndarray, ffn_weight_2: np.ndarray, ffn_bias_2: np.ndarray,
                              mask: np.ndarray | None, mask_type: int | None) -> np.ndarray:
    x = src.astype(np.float64)

    def norm(y: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        return layer_norm(y, [embed_dim], w.astype(np.float64), b.astype(np.float64), eps)

    def attention(y: np.ndarray) -> np.ndarray:
        return multi_head_attention(y, y, y, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                    mask, mask_type)[0]

    def feed_forward(y: np.ndarray) -> np.ndarray:
        hidden = y @ ffn_weight_1.astype(np.float64).T + ffn_bias_1
        hidden = gelu(hidden) if use_gelu else np.maximum(hidden, 0.0)
        return hidden @ ffn_weight_2.astype(np.float64).T + ffn_bias_2

    if norm_first:
        x = x + attention(norm(x, norm_weight_1, norm_bias_1))
        x = x + feed_forward(norm(x, norm_weight_2, norm_bias_2))
    else:
        x = norm(x + attention(x), norm_weight_1, norm_bias_1)
        x = norm(x + feed_forward(x), norm_weight_2, norm_bias_2)
    return x.astype(src.dtype)
