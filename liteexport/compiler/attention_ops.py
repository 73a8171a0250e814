"""Lowering of attention (see ops.py for the conventions): scaled_dot_product_attention, the
fused multi-head attention of nn.MultiheadAttention's inference path and the fused
nn.TransformerEncoderLayer, each decomposed into LINEAR, RESHAPE, TRANSPOSE, MATMUL and
SOFTMAX (the same arithmetic as torch's math path, within float32 tolerance)."""

from __future__ import annotations

import math
from typing import Any

import torch

from bundle_format.program import (
    AttentionAttrs,
    AxisAttrs,
    BinaryAttrs,
    CastAttrs,
    DType,
    FusedAttrs,
    GeluAttrs,
    LayerNormAttrs,
    OpCode,
    PermuteAttrs,
    ReduceAttrs,
)
from liteexport.compiler.dtypes import dtype_of
from liteexport.compiler.ops import Emitter, Lowering, is_number, optional_tensor, tensor
from liteexport.compiler.shape_ops import reshape_to, static_shape
from liteexport.compiler.values import Sym, TensorConst, TensorValue, Unsupported


def _causal_mask(length: int, source: int) -> TensorConst:
    """-inf above the diagonal (torch's is_causal: query i sees keys 0..i)."""
    allowed = torch.ones(length, source, dtype=torch.bool).tril()
    return TensorConst(torch.zeros(length, source).masked_fill(~allowed, float("-inf")))


def _additive_mask(b: Emitter, mask: TensorValue) -> TensorValue:
    """A float mask as it is; a bool mask (True = attend) as 0 / -inf, as torch's math attention
    makes it: folded for a constant, a WHERE for one known at run time (HF's padding masks)."""
    if isinstance(mask, TensorConst) and mask.tensor.dtype == torch.bool:
        return TensorConst(torch.zeros(mask.tensor.shape).masked_fill(~mask.tensor, float("-inf")))
    mask = tensor(mask)
    if dtype_of(mask) == DType.BOOL:
        return b.emit(OpCode.WHERE, [mask, TensorConst(torch.tensor(0.0)), TensorConst(torch.tensor(float("-inf")))],
                      None)
    return mask


def attend(b: Emitter, q: TensorValue, k: TensorValue, v: TensorValue, mask: TensorValue | None,
           scale: float, causal: bool = False) -> TensorValue:
    """softmax(q @ k^T * scale + mask) @ v over the last two dims of [..., L, D] operands."""
    q_shape, k_shape = static_shape(q), static_shape(k)
    rank = len(k_shape)
    if rank < 2 or len(q_shape) < 2:
        raise Unsupported("attention needs at least 2-D query and key")
    perm = (*range(rank - 2), rank - 1, rank - 2)
    k_t = b.emit(OpCode.TRANSPOSE, [k], PermuteAttrs(perm=perm))
    scores = b.emit(OpCode.MATMUL, [b.emit(OpCode.MUL, [q], BinaryAttrs(scalar=scale)), k_t], None)
    if causal:
        if q_shape[-2] < 0 or k_shape[-2] < 0:
            raise Unsupported("is_causal needs static sequence lengths")
        scores = b.emit(OpCode.ADD, [scores, _causal_mask(q_shape[-2], k_shape[-2])], BinaryAttrs())
    if mask is not None:
        scores = b.emit(OpCode.ADD, [scores, _additive_mask(b, mask)], BinaryAttrs())
    weights = b.emit(OpCode.SOFTMAX, [scores], AxisAttrs(axis=-1))
    if mask is not None and not isinstance(mask, TensorConst):
        weights = _safe(b, scores, weights)
    return b.emit(OpCode.MATMUL, [weights, v], None)


def _safe(b: Emitter, scores: TensorValue, weights: TensorValue) -> TensorValue:
    """torch's safe softmax (its math attention): a row whose scores are all -inf (a padding query
    under a run-time mask, left-padded GPT-2) gives zeros, not NaN, so it does not spread."""
    unmasked = b.emit(OpCode.CAST, [b.emit(OpCode.NE, [scores], BinaryAttrs(scalar=float("-inf")))],
                      CastAttrs(dtype=int(DType.FLOAT32)))
    count = b.emit(OpCode.SUM, [unmasked], ReduceAttrs(axes=(-1,), keepdim=True))
    all_masked = b.emit(OpCode.EQ, [count], BinaryAttrs(scalar=0.0))
    return b.emit(OpCode.WHERE, [all_masked, TensorConst(torch.tensor(0.0)), weights], None)


def _sdpa(b: Emitter, args: list[Any]) -> Any:
    """aten::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)."""
    q, k, v = tensor(args[0]), tensor(args[1]), tensor(args[2])
    mask = None if args[3] is None else args[3]
    dropout_p, causal = args[4], bool(args[5])
    scale = args[6] if len(args) > 6 else None
    if len(args) > 7 and args[7]:
        raise Unsupported("enable_gqa is not compiled")
    if dropout_p != 0.0:
        raise Unsupported("attention dropout (dropout_p > 0) is not compiled")
    if mask is not None and causal:
        raise Unsupported("attn_mask together with is_causal")
    head_dim = static_shape(q)[-1]
    if scale is None:
        if head_dim < 0:
            raise Unsupported("the head dim must be static")
        scale = 1.0 / math.sqrt(head_dim)
    elif not is_number(scale):
        raise Unsupported("scale must be a number")
    cached = None if causal else _cache_attention(b, q, k, v, mask, float(scale))
    return cached if cached is not None else attend(b, q, k, v, mask, float(scale), causal)


def _cache_attention(b: Emitter, q: TensorValue, k: TensorValue, v: TensorValue, mask: Any,
                     scale: float) -> TensorValue | None:
    """Attention over a KV cache kept as program state (a static cache, as transformers' on-device
    recipe exports it): one ATTENTION reading the caches themselves, their kv heads not repeated
    (grouped-query attention), and at run time only the positions the mask lets some query see, so
    a decode step does not pay for the empty end of the cache. None for other attention."""
    keys, values = _ungrouped(k), _ungrouped(v)
    if keys is None or values is None or keys[1] != values[1]:
        return None
    (cache_k, groups), (cache_v, _) = keys, values
    if not all(isinstance(x, Sym) and x.state is not None for x in (cache_k, cache_v)):
        return None
    q_shape = static_shape(q)
    if len(q_shape) != 4 or q_shape[1] < 0 or q_shape[1] != static_shape(cache_k)[1] * groups:
        return None
    operands = [q, cache_k, cache_v] + ([] if mask is None else [tensor(mask)])
    if mask is not None and dtype_of(operands[3]) not in (DType.BOOL, DType.FLOAT32):
        return None
    return b.emit(OpCode.ATTENTION, operands, AttentionAttrs(scale=scale))


def _ungrouped(x: TensorValue) -> tuple[TensorValue, int] | None:
    """``x`` as (source, groups): a [B, H, L, D] value that is a [B, H/g, L, D] one with each head
    repeated g times (transformers' repeat_kv: unsqueeze, expand, reshape), or itself with 1."""
    if not isinstance(x, Sym) or x.shape is None or len(x.shape) != 4:
        return None
    chain = [x]  # x, expanded, unsqueezed, source: each the RESHAPE / EXPAND / RESHAPE of the next
    for op in (OpCode.RESHAPE, OpCode.EXPAND, OpCode.RESHAPE):
        step = chain[-1].producer
        if step is None or step.op != op or not isinstance(step.inputs[0], Sym) or step.inputs[0].shape is None:
            return x, 1
        chain.append(step.inputs[0])
    expanded, unsqueezed, source = (value.shape for value in chain[1:])
    assert expanded is not None and unsqueezed is not None and source is not None
    if len(source) != 4 or source[1] < 1 or unsqueezed != (*source[:2], 1, *source[2:]):
        return x, 1
    groups = x.shape[1] // source[1]
    if groups < 1 or expanded != (*source[:2], groups, *source[2:]) or \
            x.shape != (source[0], source[1] * groups, *source[2:]):
        return x, 1
    return chain[-1], groups


def _heads(b: Emitter, x: TensorValue, heads: int) -> TensorValue:
    """[B, L, E] -> [B, H, L, E/H]."""
    batch, length, embed = static_shape(x)
    split = reshape_to(b, x, (batch, length, heads, embed // heads))
    return b.emit(OpCode.TRANSPOSE, [split], PermuteAttrs(perm=(0, 2, 1, 3)))


def _third(weight: TensorValue, index: int) -> TensorValue:
    """Rows index*E:(index+1)*E of a packed [3E, ...] q/k/v projection (a constant)."""
    if not isinstance(weight, TensorConst):
        raise Unsupported("the packed q/k/v projection must be a constant")
    third = weight.tensor.shape[0] // 3
    return TensorConst(weight.tensor[index * third:(index + 1) * third].contiguous())


def multi_head(b: Emitter, q: TensorValue, k: TensorValue, v: TensorValue, heads: int,
               qkv_weight: TensorValue, qkv_bias: TensorValue | None,
               proj_weight: TensorValue, proj_bias: TensorValue | None) -> TensorValue:
    """Multi-head attention of batch-first [B, L, E] inputs with packed projections."""
    for x in (q, k, v):
        if len(static_shape(x)) != 3:
            raise Unsupported("only batched 3-D (batch first) attention inputs are compiled")
    batch, length, embed = static_shape(q)
    if embed < 0 or embed % heads:
        raise Unsupported(f"the embedding dim {embed} must be static and divisible by {heads} heads")
    projected = [
        _heads(b, b.emit(OpCode.LINEAR, [x, _third(qkv_weight, i), None if qkv_bias is None else _third(qkv_bias, i)],
                         FusedAttrs()), heads)
        for i, x in enumerate((q, k, v))]
    q_heads, k_heads, v_heads = projected
    out = attend(b, q_heads, k_heads, v_heads, None, 1.0 / math.sqrt(embed // heads))
    merged = reshape_to(b, b.emit(OpCode.TRANSPOSE, [out], PermuteAttrs(perm=(0, 2, 1, 3))), (batch, length, embed))
    return b.emit(OpCode.LINEAR, [merged, proj_weight, proj_bias], FusedAttrs())


def _native_mha(b: Emitter, args: list[Any]) -> Any:
    """aten::_native_multi_head_attention: nn.MultiheadAttention's inference fast path."""
    q, k, v = tensor(args[0]), tensor(args[1]), tensor(args[2])
    heads = int(args[4])
    mask, need_weights = args[9], bool(args[10])
    if mask is not None:
        raise Unsupported("attention masks of the fused multi-head attention are not compiled")
    if need_weights:
        raise Unsupported("need_weights=True (the attention weights as an output) is not compiled")
    out = multi_head(b, q, k, v, heads, tensor(args[5]), optional_tensor(args[6]), tensor(args[7]),
                     optional_tensor(args[8]))
    return (out, None)


def _encoder_layer(b: Emitter, args: list[Any]) -> Any:
    """aten::_transformer_encoder_layer_fwd: nn.TransformerEncoderLayer's inference fast path."""
    (src, _embed, heads, qkv_w, qkv_b, proj_w, proj_b, use_gelu, norm_first, eps,
     n1_w, n1_b, n2_w, n2_b, ff1_w, ff1_b, ff2_w, ff2_b) = args[:18]
    if len(args) > 18 and args[18] is not None:
        raise Unsupported("attention masks of the fused encoder layer are not compiled")
    x = tensor(src)

    def norm(value: TensorValue, weight: Any, bias: Any) -> TensorValue:
        return b.emit(OpCode.LAYER_NORM, [value, tensor(weight), tensor(bias)],
                      LayerNormAttrs(normalized_ndim=1, eps=float(eps)))

    def attention(value: TensorValue) -> TensorValue:
        return multi_head(b, value, value, value, int(heads), tensor(qkv_w), tensor(qkv_b), tensor(proj_w),
                          tensor(proj_b))

    def feed_forward(value: TensorValue) -> TensorValue:
        hidden = b.emit(OpCode.LINEAR, [value, tensor(ff1_w), tensor(ff1_b)], FusedAttrs())
        hidden = b.emit(OpCode.GELU, [hidden], GeluAttrs()) if use_gelu else b.emit(OpCode.RELU, [hidden], None)
        return b.emit(OpCode.LINEAR, [hidden, tensor(ff2_w), tensor(ff2_b)], FusedAttrs())

    def add(p: TensorValue, q: TensorValue) -> TensorValue:
        return b.emit(OpCode.ADD, [p, q], BinaryAttrs())

    if norm_first:
        x = add(x, attention(norm(x, n1_w, n1_b)))
        return add(x, feed_forward(norm(x, n2_w, n2_b)))
    x = norm(add(x, attention(x)), n1_w, n1_b)
    return norm(add(x, feed_forward(x)), n2_w, n2_b)


LOWERINGS: dict[str, Lowering] = {
    "aten::scaled_dot_product_attention": _sdpa,
    "aten::_native_multi_head_attention": _native_mha,
    "aten::_transformer_encoder_layer_fwd": _encoder_layer,
}
