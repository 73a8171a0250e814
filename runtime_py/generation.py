"""Text generation with a bundle that keeps its KV cache as program state: the loop every engine
runs the same way (the native core's ``liteexport::Generator`` and Java's ``LlmModule`` mirror it).

A bundle is generatable when its method (``forward``) takes ``(input_ids int64 [1, S],
cache_position int64 [S])`` and returns logits float32 [1, S, V], as transformers' on-device
recipe (``TorchExportableModuleForDecoderOnlyLM``) exports a decoder LM. ``liteexport export``
records that in the bundle (``liteexport/generation.json``, :class:`GenerationSpec`): the method,
the longest chunk one call takes (the upper bound of S), the cache length and the stop tokens.

The loop (:meth:`Generator.generate`):

- the state is reset (a new conversation);
- **prefill**: the prompt in chunks of at most ``max_chunk`` tokens at positions start..start+len-1;
  the last chunk's last row of logits is kept;
- **decode**: for n = 0, 1, ...: token n = ``sample(logits, config, step=n)`` (runtime_py.sampling:
  one counter-based sampler, so a seed gives the same tokens on every engine), reported to the
  callback; it stops with ``stop_token`` when the token is a stop token, ``max_new_tokens`` after
  that many, ``stopped`` when the callback returns False, ``cache_full`` when the next token would
  need a position past the cache; otherwise the token is run at the next position.

An empty prompt, a prompt longer than the cache, or ``max_new_tokens`` < 1 is an InputError
before anything runs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime_py.errors import FormatError, InputError
from runtime_py.sampling import SamplingConfig, sample

__all__ = ["GENERATION_EXTRA_FILE", "TOKENIZER_EXTRA_FILE", "GenerationResult", "GenerationSpec", "Generator",
           "StepFunction"]

GENERATION_EXTRA_FILE = "liteexport/generation.json"
TOKENIZER_EXTRA_FILE = "liteexport/tokenizer.json"  # export --tokenizer: a Hugging Face tokenizer.json
STOP_REASONS = ("stop_token", "max_new_tokens", "cache_full", "stopped")

# (input_ids [1, S] int64, cache_position [S] int64) -> logits [1, S, V] float32
StepFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class GenerationSpec:
    """How a bundle generates: its method, the longest prompt chunk one call takes, the cache
    length (positions 0..max_length-1) and the tokens that end a generation."""

    method: str
    max_chunk: int
    max_length: int
    stop_ids: tuple[int, ...] = ()

    def to_json(self) -> bytes:
        return json.dumps({"method": self.method, "max_chunk": self.max_chunk, "max_length": self.max_length,
                           "stop_ids": list(self.stop_ids)}, sort_keys=True).encode()

    @classmethod
    def from_json(cls, content: bytes) -> GenerationSpec:
        """FormatError for a record that is not one."""
        where = f"extra file {GENERATION_EXTRA_FILE}"
        try:
            record = json.loads(content)
            spec = cls(str(record["method"]), int(record["max_chunk"]), int(record["max_length"]),
                       tuple(int(t) for t in record.get("stop_ids", ())))
        except (ValueError, KeyError, TypeError) as exc:
            raise FormatError(f"not a generation record: {exc}", where=where) from None
        if spec.max_chunk < 1 or spec.max_length < 1:
            raise FormatError(f"max_chunk {spec.max_chunk} and max_length {spec.max_length} must be positive",
                              where=where)
        return spec


@dataclass
class GenerationResult:
    """The generated ids (the prompt's not included), why it stopped, and the speed."""

    tokens: list[int] = field(default_factory=list)
    stop_reason: str = ""
    prompt_tokens: int = 0
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0  # the calls that produced tokens 1.. (token 0 comes from the prefill)

    @property
    def prefill_tokens_per_second(self) -> float:
        return self.prompt_tokens / self.prefill_seconds if self.prefill_seconds > 0 else 0.0

    @property
    def decode_tokens_per_second(self) -> float:
        calls = max(len(self.tokens) - 1, 0)
        return calls / self.decode_seconds if self.decode_seconds > 0 else 0.0


class Generator:
    """The generation loop over one engine: ``step`` runs the method once, ``reset`` restores the
    initial state. :meth:`for_module` makes one for a runtime_py module."""

    def __init__(self, spec: GenerationSpec, step: StepFunction, reset: Callable[[], None]) -> None:
        self.spec, self._step, self._reset = spec, step, reset

    @classmethod
    def for_module(cls, module: Any, spec: GenerationSpec | None = None) -> Generator:
        """A runtime_py module (runtime_py.load): its recorded spec unless one is given."""
        if spec is None:
            spec = spec_of(module.ptmf.extra_file(GENERATION_EXTRA_FILE), module.name)
        method = spec.method

        def step(ids: np.ndarray, positions: np.ndarray) -> np.ndarray:
            return np.asarray(module.run_method(method, ids, positions))

        return cls(spec, step, module.reset_state)

    def generate(self, prompt_ids: Sequence[int], max_new_tokens: int, config: SamplingConfig | None = None,
                 on_token: Callable[[int], bool | None] | None = None,
                 stop_ids: Sequence[int] | None = None) -> GenerationResult:
        """Generate up to ``max_new_tokens`` ids after ``prompt_ids`` (see the module's doc).
        ``on_token(id)`` sees each id as it comes; returning False stops. ``stop_ids`` replaces
        the bundle's stop tokens."""
        spec, config = self.spec, config or SamplingConfig()
        prompt = [int(t) for t in prompt_ids]
        if not prompt:
            raise InputError("the prompt is empty: generation needs at least one token")
        if len(prompt) > spec.max_length:
            raise InputError(f"the prompt has {len(prompt)} tokens, more than the {spec.max_length} positions of "
                             "the cache the bundle was exported with")
        if max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        stops = frozenset(spec.stop_ids if stop_ids is None else (int(t) for t in stop_ids))
        result = GenerationResult(prompt_tokens=len(prompt))
        self._reset()
        started = time.perf_counter()
        logits = np.empty(0, np.float32)
        for start in range(0, len(prompt), spec.max_chunk):
            chunk = prompt[start:start + spec.max_chunk]
            out = self._step(np.array([chunk], np.int64), np.arange(start, start + len(chunk), dtype=np.int64))
            logits = out[0, -1]
        result.prefill_seconds = time.perf_counter() - started
        position = len(prompt)
        started = time.perf_counter()
        for n in range(max_new_tokens):
            token = sample(logits, config, n)
            result.tokens.append(token)
            keep_going = on_token(token) if on_token is not None else None
            reason = ("stop_token" if token in stops else "max_new_tokens" if n + 1 == max_new_tokens
                      else "stopped" if keep_going is False else "cache_full" if position >= spec.max_length else "")
            if reason:
                result.stop_reason = reason
                break
            logits = self._step(np.array([[token]], np.int64), np.array([position], np.int64))[0, -1]
            position += 1
        result.decode_seconds = time.perf_counter() - started
        return result


def spec_of(record: bytes | None, where: str) -> GenerationSpec:
    """The bundle's generation record; InputError when it has none (it cannot generate)."""
    if record is None:
        raise InputError(f"{where} cannot generate: it has no {GENERATION_EXTRA_FILE}. Export a decoder LM whose "
                         "forward takes (input_ids, cache_position) and keeps its KV cache in buffers, as "
                         "transformers' TorchExportableModuleForDecoderOnlyLM does")
    return GenerationSpec.from_json(record)
