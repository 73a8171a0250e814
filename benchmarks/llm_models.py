"""The decoder LMs benchmarks/llm.py measures, built the same way in every venv (the project's and
the peers'): random-weight Llama-architecture models with SmolLM2's shapes, float32, seed 0, no
download, exported through transformers' own on-device recipe (a static KV cache as buffers the
program writes in place). Also the pure figures the harness reports: the bytes a decode step must
read, and the bound that memory bandwidth puts on decode.

Tests may import this module without torch or transformers: they are imported where a model is built.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

# the benchmark's workload (issue 34 item 5): a 64-token prompt in one prefill call, then 128 greedy tokens
PROMPT_LEN = 64
NEW_TOKENS = 128
# the static cache holds the prompt and every new token; 256 leaves room and is a power of two
MAX_CACHE_LEN = 256
# the upper bound of the exported programs' sequence dim: a prompt is prefilled in chunks of at most this
MAX_CHUNK = 64
SEED = 0


@dataclass(frozen=True)
class LlmSpec:
    """The LlamaConfig fields that differ between the benchmark's models (the rest are LLAMA_COMMON)."""

    name: str
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int = 49152

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


# SmolLM2-135M's and SmolLM2-360M's config.json (HuggingFaceTB), as LlamaForCausalLM; "tiny" is --smoke's
SPECS: dict[str, LlmSpec] = {spec.name: spec for spec in (
    LlmSpec("smollm2-135m", hidden=576, intermediate=1536, layers=30, heads=9, kv_heads=3),
    LlmSpec("smollm2-360m", hidden=960, intermediate=2560, layers=32, heads=15, kv_heads=5),
    LlmSpec("tiny", hidden=64, intermediate=128, layers=2, heads=4, kv_heads=2, vocab=512),
)}
# shared by both SmolLM2 configs
LLAMA_COMMON: dict[str, Any] = {
    "rope_theta": 100000.0, "tie_word_embeddings": True, "rms_norm_eps": 1e-5, "max_position_embeddings": 8192,
    "hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "bos_token_id": 0, "eos_token_id": 0,
    "use_cache": True,
}
FLOAT32_BYTES = 4


def _transformers() -> Any:
    """transformers, offline (the configs are written out here: nothing is downloaded), after the shim
    that lets torchvision's CUDA wheel import next to torch's CPU build (transformers imports it)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from benchmarks.torchvision_shim import import_torchvision

    import_torchvision()
    import transformers

    return transformers


def llama_config(spec: LlmSpec) -> Any:
    LlamaConfig = _transformers().LlamaConfig

    return LlamaConfig(vocab_size=spec.vocab, hidden_size=spec.hidden, intermediate_size=spec.intermediate,
                       num_hidden_layers=spec.layers, num_attention_heads=spec.heads,
                       num_key_value_heads=spec.kv_heads, head_dim=spec.head_dim, **LLAMA_COMMON)


def build_model(spec: LlmSpec) -> Any:
    """LlamaForCausalLM with spec's shape and seed 0's random weights, float32, in eval mode: the same
    weights in every process and venv (torch's CPU generator is the same across them)."""
    import torch

    torch.manual_seed(SEED)
    model = _transformers().LlamaForCausalLM(llama_config(spec)).to(torch.float32).eval()
    model.generation_config.cache_implementation = "static"
    return model


def export_program(model: Any, max_cache_len: int = MAX_CACHE_LEN, max_chunk: int = MAX_CHUNK) -> Any:
    """transformers' recipe: TorchExportableModuleForDecoderOnlyLM with a static cache of max_cache_len,
    input_ids [1, S] and cache_position [S] with S dynamic in [1, max_chunk]. strict=True: non-strict
    export lifts the cache tensors as constants aliasing the buffers, and run_decompositions then fails."""
    import torch

    _transformers()
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    seq = torch.export.Dim("seq", min=1, max=max_chunk)
    example = 2  # not 1: torch.export specialises a dim whose example is 0 or 1
    with torch.no_grad():
        return TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_cache_len).export(
            input_ids=torch.zeros((1, example), dtype=torch.long),
            cache_position=torch.arange(example, dtype=torch.long),
            dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}}, strict=True)


def prompt_ids(spec: LlmSpec, length: int = PROMPT_LEN) -> np.ndarray:
    """The benchmark's prompt: ``length`` token ids drawn with seed 0 (random weights have no text)."""
    return np.random.default_rng(SEED).integers(1, spec.vocab, size=length, dtype=np.int64)


def weight_elements_per_token(spec: LlmSpec) -> int:
    """The weights one decode step reads, in elements: every layer's linear weights (q, k, v, o, gate, up,
    down) and RMSNorm weights, the final norm, the LM head (tied to the embedding: read whole) and one
    embedding row."""
    kv = spec.kv_heads * spec.head_dim
    q = spec.heads * spec.head_dim
    per_layer = spec.hidden * (q + 2 * kv) + q * spec.hidden + 3 * spec.hidden * spec.intermediate + 2 * spec.hidden
    return spec.layers * per_layer + spec.hidden + spec.vocab * spec.hidden + spec.hidden


def average_attended_positions(prompt_len: int = PROMPT_LEN, new_tokens: int = NEW_TOKENS) -> float:
    """Decode step i (0-based) writes position prompt_len + i and attends to prompt_len + i + 1
    positions; averaged over the new tokens."""
    return prompt_len + (new_tokens + 1) / 2


def bytes_per_token(spec: LlmSpec, weight_bytes: int = FLOAT32_BYTES, kv_bytes: int = FLOAT32_BYTES,
                    attended: float | None = None) -> float:
    """Bytes one decode step must read: the weights (weight_elements_per_token, weight_bytes each) plus
    the keys and values of every layer over the attended positions (the filled part of the cache at the
    average decode position unless given), kv_bytes each."""
    positions = average_attended_positions() if attended is None else attended
    kv = spec.layers * 2 * spec.kv_heads * spec.head_dim * positions * kv_bytes
    return weight_elements_per_token(spec) * weight_bytes + kv


def bound_tokens_per_second(bandwidth_bytes_per_s: float, token_bytes: float) -> float:
    """The decode speed memory bandwidth allows: every byte of a step read once at the measured rate."""
    return bandwidth_bytes_per_s / token_bytes


def bandwidth_fraction(decode_tok_s: float, bandwidth_bytes_per_s: float, token_bytes: float) -> float:
    return decode_tok_s / bound_tokens_per_second(bandwidth_bytes_per_s, token_bytes)
