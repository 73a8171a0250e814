"""ATTENTION, the static-cache attention (issue 34 item 2): one instruction over the caches
themselves (grouped-query heads not repeated), computing only the key positions some query
attends to, with torch's result."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import runtime_py
from bundle_format.program import AttentionAttrs, OpCode
from liteexport.compiler.semantics import run_op
from runtime_py.backends.demo.attention import make_attention, used_keys
from runtime_py.generation import Generator
from tests.generation.hf_models import export_bundle, tiny_model


def _case(rng: np.random.Generator, heads: int, kv_heads: int, queries: int, length: int,
          mask_kind: str) -> list[np.ndarray]:
    q = rng.standard_normal((1, heads, queries, 8)).astype(np.float32)
    k = rng.standard_normal((1, kv_heads, length, 8)).astype(np.float32)
    v = rng.standard_normal((1, kv_heads, length, 5)).astype(np.float32)
    if mask_kind == "none":
        return [q, k, v]
    start = int(rng.integers(0, length - queries + 1))
    allowed = np.arange(length)[None, :] <= (start + np.arange(queries))[:, None]  # a cache's causal mask
    if mask_kind == "padded":
        allowed[0] = False  # a query that sees nothing: zeros, as torch's safe softmax
    mask = allowed[None, None]
    if mask_kind == "float":
        return [q, k, v, np.where(mask, 0.0, -np.inf).astype(np.float32)]
    return [q, k, v, mask]


@pytest.mark.parametrize("heads, kv_heads", [(4, 4), (4, 2), (6, 1)])
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "padded"])
def test_attention_is_torchs(heads: int, kv_heads: int, mask_kind: str) -> None:
    rng = np.random.default_rng(heads * 10 + kv_heads)
    for queries, length in ((1, 16), (5, 16), (3, 3)):
        operands = _case(rng, heads, kv_heads, queries, length, mask_kind)
        attrs = AttentionAttrs(scale=0.35)
        ours = make_attention(attrs, len(operands))(*operands)
        expected = run_op(OpCode.ATTENTION, attrs, [torch.from_numpy(x) for x in operands]).numpy()
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)
        if mask_kind == "padded":
            assert not ours[:, :, 0].any()


def test_only_the_attended_positions_are_read() -> None:
    """Keys and values past the last position a query attends to are NaN: the result is finite,
    so the kernel never read them (a decode step at position 10 of a 2048-position cache)."""
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 4, 1, 8)).astype(np.float32)
    k = np.full((1, 2, 2048, 8), np.nan, np.float32)
    v = np.full((1, 2, 2048, 8), np.nan, np.float32)
    k[:, :, :11], v[:, :, :11] = rng.standard_normal((2, 1, 2, 11, 8)).astype(np.float32)
    mask = (np.arange(2048) <= 10)[None, None, None]
    assert used_keys(mask, 2048) == 11
    out = make_attention(AttentionAttrs(scale=0.3), 4)(q, k, v, mask)
    assert np.isfinite(out).all()
    expected = run_op(OpCode.ATTENTION, AttentionAttrs(scale=0.3),
                      [torch.from_numpy(x[:, :, :11]) if x.ndim == 4 and x.shape[2] == 2048 else torch.from_numpy(x)
                       for x in (q, k, v)] + [torch.from_numpy(mask[..., :11])]).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_a_decoder_lm_reads_only_the_filled_cache(tmp_path: Path) -> None:
    """transformers' recipe: each layer's attention is one ATTENTION on the caches (no repeated kv
    heads), and poisoning the cache past the filled positions changes nothing."""
    model = tiny_model("llama")
    path = export_bundle(model, tmp_path / "lm.ptl")
    module = runtime_py.load(path)
    ops = [i.op for p in _programs(module) for i in p.instructions]
    assert ops.count(OpCode.ATTENTION) == 2 and OpCode.EXPAND not in ops and OpCode.SOFTMAX not in ops
    prompt = [5, 17, 42, 8, 99]
    logits = module.forward(np.array([prompt]), np.arange(5))
    module.reset_state()
    module.forward(np.array([prompt[:4]]), np.arange(4))
    for state in module._module_states:  # noqa: SLF001 - the test poisons the unfilled positions
        for name, array in state.arrays.items():
            if name.startswith(("key_cache", "value_cache")):
                array[:, :, 5:] = np.nan
    step = module.forward(np.array([prompt[4:]]), np.array([4]))
    np.testing.assert_allclose(step[0, -1], logits[0, -1], rtol=1e-4, atol=1e-5)
    generated = Generator.for_module(runtime_py.load(path)).generate(prompt, 8).tokens
    assert len(generated) >= 1


def _programs(module: runtime_py.Module) -> list:  # type: ignore[type-arg]
    from liteexport.inspect_bundle import delegate_contents

    contents = delegate_contents(module.ptmf)
    assert contents is not None
    return list(contents[0].values())


def test_a_small_cache_attention_is_torchs_over_calls(tmp_path: Path) -> None:
    """A grouped-query attention over buffers it writes: one ATTENTION, and the same outputs as
    torch over a sequence of calls on runtime_py."""
    import liteexport
    from tests.generation.stateful_models import CacheAttention, export_cache_attention

    torch.manual_seed(0)
    model = CacheAttention()
    path = tmp_path / "attention.ptl"
    liteexport.export(export_cache_attention(model), path, dims={"S": (1, 4)},
                      input_shapes={"forward": ["1x4xSx8", "1x2xSx8", "1x2xSx8", "S:int64"]})
    module = runtime_py.load(path)
    assert [i.op for p in _programs(module) for i in p.instructions].count(OpCode.ATTENTION) == 1
    reference = export_cache_attention(model).module()
    rng = np.random.default_rng(5)
    for positions in ([0, 1, 2], [3], [4, 5], [6]):
        n = len(positions)
        args = [rng.standard_normal(s).astype(np.float32) for s in ((1, 4, n, 8), (1, 2, n, 8), (1, 2, n, 8))]
        args.append(np.array(positions, dtype=np.int64))
        with torch.no_grad():
            expected = reference(*map(torch.from_numpy, args)).numpy()
        np.testing.assert_allclose(module.forward(*args), expected, rtol=1e-5, atol=1e-6)
