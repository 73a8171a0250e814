"""Small models that keep state across calls (buffers written in place), exported with
torch.export: the test bed of program state on every engine."""

from __future__ import annotations

from typing import Any

import torch


class RowCache(torch.nn.Module):
    """A cache of rows written at run-time positions (``index_copy_``, a KV cache's write) and a
    call counter written whole (``copy_``); the output reads the updated cache, so it depends on
    every earlier call."""

    def __init__(self, length: int = 8, width: int = 4) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(width, width)
        self.register_buffer("cache", torch.zeros(1, length, width))
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        self.cache.index_copy_(1, positions, self.proj(x))
        self.calls.copy_(self.calls + 1)
        return self.cache.sum(1) * self.calls.float()


class TwoCaches(torch.nn.Module):
    """Two caches of different lengths written at the same positions: a position inside the
    first and outside the second fails part-way through the call (the first write must be undone)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("long_cache", torch.zeros(1, 8, 2))
        self.register_buffer("short_cache", torch.full((1, 4, 2), 0.5))

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        self.long_cache.index_copy_(1, positions, x)
        self.short_cache.index_copy_(1, positions, x * 2)
        return self.long_cache.sum(1) + self.short_cache.sum(1)


def export_stateful(model: torch.nn.Module, width: int, max_rows: int = 4) -> Any:
    """``model`` exported with a dynamic number of rows S (1..max_rows) per call."""
    rows = torch.export.Dim("S", min=1, max=max_rows)
    x, positions = torch.randn(1, 2, width), torch.arange(2)
    with torch.no_grad():
        return torch.export.export(model.eval(), (x, positions),
                                   dynamic_shapes=({1: rows}, {0: rows}), strict=True)


class EncodeDecode(torch.nn.Module):
    """Two methods sharing one state: ``encode`` fills a memory that ``decode`` reads (an encoder
    filling a cross-attention cache its decoder reads), and ``decode`` counts its calls."""

    def __init__(self, width: int = 4, length: int = 6) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(width, width)
        self.register_buffer("memory", torch.zeros(1, length, width))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    @torch.jit.export
    def encode(self, x: torch.Tensor) -> torch.Tensor:
        self.memory.copy_(self.proj(x))
        return self.memory.mean(1)

    def forward(self, query: torch.Tensor) -> torch.Tensor:
        self.steps.copy_(self.steps + 1)
        scores = torch.softmax(query @ self.memory.transpose(1, 2), dim=-1)
        return scores @ self.memory * self.steps.float()


class CacheAttention(torch.nn.Module):
    """Attention over a KV cache kept in buffers, grouped-query (kv heads repeated as
    transformers' repeat_kv does) and masked by the cache positions: compiles to ATTENTION."""

    def __init__(self, heads: int = 4, kv_heads: int = 2, depth: int = 8, length: int = 8) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.depth, self.length = heads, kv_heads, depth, length
        self.register_buffer("keys", torch.zeros(1, kv_heads, length, depth))
        self.register_buffer("values", torch.zeros(1, kv_heads, length, depth))

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        self.keys.index_copy_(2, positions, k)
        self.values.index_copy_(2, positions, v)
        groups = self.heads // self.kv_heads
        shape = (1, self.kv_heads, groups, self.length, self.depth)
        keys = self.keys.unsqueeze(2).expand(shape).reshape(1, self.heads, self.length, self.depth)
        values = self.values.unsqueeze(2).expand(shape).reshape(1, self.heads, self.length, self.depth)
        mask = torch.arange(self.length).unsqueeze(0) <= positions.unsqueeze(1)
        return torch.nn.functional.scaled_dot_product_attention(q, keys, values, attn_mask=mask[None, None],
                                                                scale=0.3)


def export_cache_attention(model: CacheAttention, max_rows: int = 4) -> Any:
    rows = torch.export.Dim("S", min=1, max=max_rows)
    q = torch.randn(1, model.heads, 2, model.depth)
    k = torch.randn(1, model.kv_heads, 2, model.depth)
    with torch.no_grad():
        return torch.export.export(model.eval(), (q, k, k.clone(), torch.arange(2)), strict=True,
                                   dynamic_shapes=({2: rows}, {2: rows}, {2: rows}, {0: rows}))
