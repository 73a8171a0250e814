"""Hugging Face decoder LMs end to end (issue 34 item 4): exported through transformers' recipe,
greedy generation of 32 tokens on our engines is identical to ``model.generate`` on the same
weights, and seeded sampling is identical across engines."""

from __future__ import annotations

from pathlib import Path

import pytest

import runtime_py
from runtime_py.generation import GENERATION_EXTRA_FILE, GenerationSpec, Generator
from runtime_py.sampling import SamplingConfig
from tests.generation.hf_models import FAMILIES, MAX_CACHE, MAX_CHUNK, export_bundle, hf_greedy, tiny_model

SHORT = [5, 17, 42, 8, 99, 3, 61]
LONG = [(7 * i + 3) % 200 + 1 for i in range(20)]  # longer than a chunk: prefilled in two calls


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object, Path]:
    model = tiny_model(request.param)
    path = export_bundle(model, tmp_path_factory.mktemp(request.param) / "lm.ptl")
    return request.param, model, path


def test_the_bundle_records_how_it_generates(family: tuple[str, object, Path]) -> None:
    _, model, path = family
    record = runtime_py.load(path).ptmf.extra_file(GENERATION_EXTRA_FILE)
    assert record is not None
    spec = GenerationSpec.from_json(record)
    eos = model.generation_config.eos_token_id  # type: ignore[attr-defined]
    assert spec == GenerationSpec("forward", MAX_CHUNK, MAX_CACHE, (eos,) if eos is not None else ())


@pytest.mark.parametrize("prompt", [SHORT, LONG], ids=["short", "two-chunks"])
def test_greedy_generation_is_transformers_generate(family: tuple[str, object, Path], prompt: list[int]) -> None:
    _, model, path = family
    expected = hf_greedy(model, prompt, 32)
    streamed: list[int] = []
    result = Generator.for_module(runtime_py.load(path)).generate(prompt, 32, on_token=streamed.append)
    assert result.tokens == expected
    assert streamed == result.tokens
    assert result.stop_reason == ("stop_token" if len(expected) < 32 else "max_new_tokens")


def test_torch_lite_interpreter_generates_the_same(family: tuple[str, object, Path]) -> None:
    """torch's lite interpreter with our backend: the same loop (a fresh load is its reset)."""
    from liteexport.generation_engines import generator_for

    _, model, path = family
    generator = generator_for(path, "torch")
    assert generator.generate(LONG, 32).tokens == hf_greedy(model, LONG, 32)
    config = SamplingConfig(temperature=0.8, top_k=20, top_p=0.9, seed=7)
    ours = Generator.for_module(runtime_py.load(path)).generate(SHORT, 24, config, stop_ids=())
    assert generator.generate(SHORT, 24, config, stop_ids=()).tokens == ours.tokens


def test_seeded_sampling_repeats_and_seeds_differ(family: tuple[str, object, Path]) -> None:
    _, _, path = family
    generator = Generator.for_module(runtime_py.load(path))
    config = SamplingConfig(temperature=1.0, seed=123)
    first = generator.generate(SHORT, 24, config, stop_ids=()).tokens
    assert generator.generate(SHORT, 24, config, stop_ids=()).tokens == first  # the state was reset
    others = {tuple(generator.generate(SHORT, 24, SamplingConfig(temperature=1.0, seed=s), stop_ids=()).tokens)
              for s in range(4)}
    assert len(others) > 1


def test_native_core_generates_the_same(family: tuple[str, object, Path]) -> None:
    """The native core's own loop (liteexport::Generator): greedy = transformers' generate, and a
    seeded sample = runtime_py's, token for token."""
    from liteexport.generation_engines import generate_native

    _, model, path = family
    assert generate_native(path, LONG, 32, SamplingConfig()).tokens == hf_greedy(model, LONG, 32)
    config = SamplingConfig(temperature=0.9, top_k=40, top_p=0.95, seed=11)
    ours = Generator.for_module(runtime_py.load(path)).generate(SHORT, 24, config, stop_ids=())
    assert generate_native(path, SHORT, 24, config, stop_ids=()).tokens == ours.tokens
