"""The native core's generation loop (liteexport::Generator, through liteexport_native_run
--prompt-ids) against runtime_py's (runtime_py.generation, the reference) on the tiny Hugging Face
Llama exported with transformers' recipe: the same ids and stop reason, greedy (also equal to
transformers' own generate) and seeded sampling, a prompt in two chunks, the end of the cache;
the same input errors before anything runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import liteexport
import runtime_py
from runtime_py.errors import InputError
from runtime_py.generation import Generator
from runtime_py.sampling import SamplingConfig
from tests.generation.hf_models import MAX_CACHE, export_bundle, hf_greedy, tiny_model
from tests.generation.native_calls import host_tool
from tests.generation.stateful_models import RowCache, export_stateful
from tests.text_models.typed import native_tool_available

pytestmark = pytest.mark.skipif(not native_tool_available(), reason="needs cmake and g++ to build the native core")

SHORT = [5, 17, 42, 8, 99, 3, 61]
LONG = [(7 * i + 3) % 200 + 1 for i in range(20)]  # longer than a chunk (16): prefilled in two calls
CONFIGS = [SamplingConfig(temperature=0.8, top_k=20, top_p=0.9, seed=7), SamplingConfig(temperature=1.0, seed=123),
           SamplingConfig(temperature=1.3, top_p=0.5, seed=2**63 + 5), SamplingConfig(temperature=0.5, top_k=3, seed=0)]


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    model = tiny_model("llama")
    return model, export_bundle(model, tmp_path_factory.mktemp("llama") / "lm.ptl")


def native_generate(path: Path, prompt: list[int], max_new_tokens: int, config: SamplingConfig | None = None,
                    stop_ids: list[int] | None = None, extra: list[str] | None = None) -> dict[str, Any]:
    """The host tool's result line, or {"exit": code, "error": message} when it fails. ``extra``:
    more options (a later option wins)."""
    config = config or SamplingConfig()
    argv = [str(host_tool()), str(path), "--prompt-ids", ",".join(map(str, prompt)), "--max-new-tokens",
            str(max_new_tokens), "--temperature", repr(config.temperature), "--top-k", str(config.top_k),
            "--top-p", repr(config.top_p), "--seed", str(config.seed)]
    if stop_ids is not None:
        argv += ["--stop-ids", ",".join(map(str, stop_ids))]
    argv += extra or []
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        return {"exit": result.returncode, "error": result.stderr.strip().removeprefix("Error: ")}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("prompt", [SHORT, LONG], ids=["short", "two-chunks"])
def test_greedy_ids_are_runtime_pys_and_transformers(llama: tuple[Any, Path], prompt: list[int]) -> None:
    model, path = llama
    expected = Generator.for_module(runtime_py.load(path)).generate(prompt, 32)
    got = native_generate(path, prompt, 32)
    assert got["tokens"] == expected.tokens == hf_greedy(model, prompt, 32)
    assert got["stop_reason"] == expected.stop_reason
    assert got["prompt_tokens"] == len(prompt) and got["prefill_tokens_per_second"] > 0


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"t{c.temperature}-k{c.top_k}-p{c.top_p}-s{c.seed}")
def test_seeded_sampling_ids_are_runtime_pys(llama: tuple[Any, Path], config: SamplingConfig) -> None:
    _, path = llama
    expected = Generator.for_module(runtime_py.load(path)).generate(LONG, 24, config, stop_ids=())
    got = native_generate(path, LONG, 24, config, stop_ids=[])
    assert got["tokens"] == expected.tokens and len(got["tokens"]) == 24
    assert got["stop_reason"] == expected.stop_reason == "max_new_tokens"


def test_stop_token_and_end_of_the_cache(llama: tuple[Any, Path]) -> None:
    _, path = llama
    greedy = Generator.for_module(runtime_py.load(path)).generate(SHORT, 10, stop_ids=()).tokens
    # the third greedy token as the stop token: it ends there, with it
    got = native_generate(path, SHORT, 10, stop_ids=[greedy[2]])
    assert got["tokens"] == greedy[:greedy.index(greedy[2]) + 1] and got["stop_reason"] == "stop_token"
    # a prompt filling all but 4 positions: 5 tokens (the last needs no position), then cache_full
    prompt = [(3 * i) % 120 + 1 for i in range(MAX_CACHE - 4)]
    expected = Generator.for_module(runtime_py.load(path)).generate(prompt, 32, stop_ids=())
    got = native_generate(path, prompt, 32, stop_ids=[])
    assert got["tokens"] == expected.tokens and len(got["tokens"]) == 5
    assert got["stop_reason"] == expected.stop_reason == "cache_full"


def test_input_errors_are_runtime_pys_before_anything_runs(llama: tuple[Any, Path], tmp_path: Path) -> None:
    _, path = llama
    cases: list[tuple[list[int], int, SamplingConfig | None]] = [
        ([], 8, None), (list(range(1, MAX_CACHE + 2)), 8, None), (SHORT, 0, None)]
    for prompt, max_new_tokens, config in cases:
        with pytest.raises(InputError) as info:
            Generator.for_module(runtime_py.load(path)).generate(prompt, max_new_tokens, config)
        assert native_generate(path, prompt, max_new_tokens, config) == {"exit": 6, "error": str(info.value)}
    # a sampling value runtime_py's SamplingConfig refuses: the native core's message is its
    for flag, value, field in (("--temperature", "-1", "temperature"), ("--top-p", "1.5", "top_p"),
                               ("--top-k", "-2", "top_k")):
        with pytest.raises(ValueError) as refused_config:
            SamplingConfig(**{field: float(value) if "." in value or field != "top_k" else int(value)})
        got = native_generate(path, SHORT, 8, extra=[flag, value])
        assert got == {"exit": 6, "error": str(refused_config.value)}
    # a bundle that keeps no cache and records no generation: refused, naming the file
    plain = tmp_path / "row.ptl"
    liteexport.export(export_stateful(RowCache(), 4), plain, input_shapes={"forward": ["1xSx4", "S:int64"]},
                      dims={"S": (1, 4)})
    refused = native_generate(plain, SHORT, 8)
    assert refused["exit"] == 6 and "cannot generate: it has no liteexport/generation.json" in refused["error"]
