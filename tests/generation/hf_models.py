"""Tiny random-weight Hugging Face decoder LMs exported through transformers' own on-device
recipe (``TorchExportableModuleForDecoderOnlyLM``, a static KV cache in buffers), as a user does:
the test bed of generation on every engine. No downloads (HF_HUB_OFFLINE=1, configs in code)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.torchvision_shim import import_torchvision  # noqa: E402

import_torchvision()  # transformers imports torchvision, whose C++ ops do not load with the CPU torch

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM  # noqa: E402

import liteexport  # noqa: E402

MAX_CACHE = 64  # positions: a 20-token prompt and 32 new tokens fit
MAX_CHUNK = 16  # the prompt's named dim S: a 20-token prompt is prefilled in two chunks
_SHAPE = {"vocab_size": 256, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256}

# family -> (config class, model class, extra config fields)
FAMILIES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 16}),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", {"head_dim": 16}),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {"pad_token_id": 0}),
    # SmolLM2's architecture is Llama's, with tied embeddings
    "smollm": ("LlamaConfig", "LlamaForCausalLM", {"tie_word_embeddings": True, "rope_theta": 100000.0}),
}


def tiny_model(family: str, seed: int = 0) -> Any:
    """A random-weight model of ``family`` (eval mode, a static cache for the recipe)."""
    config_name, model_name, extra = FAMILIES[family]
    config = getattr(transformers, config_name)(**_SHAPE, **extra)
    torch.manual_seed(seed)
    model = getattr(transformers, model_name)(config).eval()
    model.generation_config.cache_implementation = "static"
    return model


def export_recipe(model: Any, max_cache: int = MAX_CACHE, max_chunk: int = MAX_CHUNK) -> Any:
    """transformers' recipe program: forward(input_ids [1, S], cache_position [S]) -> logits."""
    ids = torch.tensor([[1, 2, 3]], dtype=torch.long)
    rows = torch.export.Dim("S", min=1, max=max_chunk)
    with torch.no_grad():
        return TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_cache).export(
            input_ids=ids, cache_position=torch.arange(3), strict=True,
            dynamic_shapes={"input_ids": {1: rows}, "cache_position": {0: rows}})


def export_bundle(model: Any, path: Path, max_cache: int = MAX_CACHE, max_chunk: int = MAX_CHUNK) -> Path:
    """The recipe program as a liteexport bundle at ``path``, with the model's stop token."""
    eos = model.generation_config.eos_token_id
    stop = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    liteexport.export(export_recipe(model, max_cache, max_chunk), path,
                      input_shapes={"forward": ["1xS:int64", "S:int64"]}, dims={"S": (1, max_chunk)}, stop_ids=stop)
    return path


def hf_greedy(model: Any, prompt: list[int], max_new_tokens: int) -> list[int]:
    """transformers' own generate, greedy: the new ids (up to and including a stop token)."""
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), do_sample=False, max_new_tokens=max_new_tokens,
                             attention_mask=torch.ones(1, len(prompt), dtype=torch.long))
    new = out[0, len(prompt):].tolist()
    eos = model.generation_config.eos_token_id
    stops = set() if eos is None else {eos} if isinstance(eos, int) else set(eos)
    for i, token in enumerate(new):
        if token in stops:
            return new[:i + 1]
    return new
