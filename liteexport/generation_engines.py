"""The generation loop (runtime_py.generation) on each engine ``liteexport generate`` offers:
runtime_py, torch's lite interpreter with our backend, and the native core (whose own C++
``Generator`` runs the loop: liteexport.native_tool). A bundle's tokenizer, when the export stored
one (``--tokenizer``), encodes and decodes text with Hugging Face ``tokenizers`` on the desktop.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import runtime_py
from runtime_py.errors import InputError, UserError
from runtime_py.generation import GENERATION_EXTRA_FILE, TOKENIZER_EXTRA_FILE, GenerationResult, Generator, spec_of
from runtime_py.sampling import SamplingConfig

__all__ = ["ENGINES", "generate_native", "generator_for", "tokenizer_of"]

ENGINES = ("runtime_py", "torch", "native")


def generator_for(bundle: str | Path, engine: str) -> Generator:
    """The loop over ``engine`` for the bundle at ``bundle`` (InputError when it cannot generate)."""
    module = runtime_py.load(bundle)
    if engine == "runtime_py":
        return Generator.for_module(module)
    if engine != "torch":
        raise InputError(f"unknown engine {engine!r}; engines: {', '.join(ENGINES)}")
    spec = spec_of(module.ptmf.extra_file(GENERATION_EXTRA_FILE), str(bundle))
    try:
        import torch
        import torch.jit.mobile
    except ImportError as exc:
        raise UserError("the torch engine needs torch: pip install 'liteexport[export]'") from exc
    from liteexport.torch_backend import load_torch_backend

    load_torch_backend()
    lite: list[Any] = [None]

    def reset() -> None:  # torch's module has no reset_state: a fresh load is the initial state
        lite[0] = torch.jit.mobile._load_for_lite_interpreter(str(bundle))

    def step(ids: np.ndarray, positions: np.ndarray) -> np.ndarray:
        out = lite[0].run_method(spec.method, torch.from_numpy(ids), torch.from_numpy(positions))
        return np.asarray(out.numpy())

    return Generator(spec, step, reset)


def generate_native(bundle: str | Path, prompt_ids: Sequence[int], max_new_tokens: int, config: SamplingConfig,
                    stop_ids: Sequence[int] | None = None, threads: int = 1, repeat: int = 0) -> GenerationResult:
    """The native core's own generation loop (liteexport::Generator) through its host tool; its
    tokens come at the end, not one by one. ``repeat``: that many more generations, the fastest
    prefill and decode kept (a benchmark's rounds; the first packs the weights for XNNPACK)."""
    from liteexport.native_tool import native_tool, raise_tool_error

    command = [str(native_tool()), str(bundle), "--prompt-ids", ",".join(str(int(t)) for t in prompt_ids),
               "--max-new-tokens", str(max_new_tokens), "--temperature", repr(config.temperature),
               "--top-k", str(config.top_k), "--top-p", repr(config.top_p), "--seed", str(config.seed),
               "--threads", str(threads), "--repeat", str(repeat)]
    if stop_ids is not None:
        command += ["--stop-ids", ",".join(str(int(t)) for t in stop_ids)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise_tool_error(done.returncode, done.stderr)
    record = json.loads(done.stdout.strip().splitlines()[-1])
    return GenerationResult([int(t) for t in record["tokens"]], str(record["stop_reason"]),
                            int(record["prompt_tokens"]), float(record["prefill_seconds"]),
                            float(record["decode_seconds"]))


def tokenizer_of(bundle: str | Path) -> Any:
    """The bundle's tokenizer (a ``tokenizers.Tokenizer``); InputError when it has none."""
    content = runtime_py.load(bundle).ptmf.extra_file(TOKENIZER_EXTRA_FILE)
    if content is None:
        raise InputError(f"{bundle} has no tokenizer: give the prompt as ids (--prompt-ids 1,2,3), or export it "
                         "with --tokenizer tokenizer.json")
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise UserError("text prompts need Hugging Face tokenizers: pip install tokenizers") from exc
    return Tokenizer.from_str(bytes(content).decode())
