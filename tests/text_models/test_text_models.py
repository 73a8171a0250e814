"""Tiny random-config Hugging Face text models (issue 20), traced with example ids of length 8,
lowered WHOLE with static typed shapes (1x8:int64) and compared with eager torch in runtime_py
and through torch's lite interpreter with liteexport's backend. Configs are built in code: no
hub access (HF_HUB_OFFLINE)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport.torch_backend as tb
from benchmarks.torchvision_shim import import_torchvision
from bundle_format.program import DType, OpCode
from liteexport.self_check import check_vectors
from liteexport.test_vectors import record_test_vectors
from liteexport.typed_inputs import index_bounds, method_inputs
from tests.text_models.typed import assert_same, compile_traced, run_engines

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import_torchvision()  # transformers imports torchvision, whose CUDA wheel's C++ ops do not load here
import transformers  # noqa: E402

pytestmark = pytest.mark.torch_oracle

VOCAB, LENGTH = 100, 8


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


class IdsAndMask(torch.nn.Module):
    """The model's last hidden state from (input_ids, attention_mask)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, attention_mask=mask, return_dict=False)[0]  # type: ignore[no-any-return]


def _distilbert() -> torch.nn.Module:
    config = transformers.DistilBertConfig(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                           max_position_embeddings=64)
    return transformers.DistilBertModel(config)


def _bert() -> torch.nn.Module:
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=64)
    return transformers.BertModel(config)


def _gpt2() -> torch.nn.Module:
    config = transformers.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=64, use_cache=False,
                                     bos_token_id=0, eos_token_id=0)
    return transformers.GPT2Model(config)


def _decoder(family: str) -> Callable[[], torch.nn.Module]:
    """Llama or Qwen2: 2 layers, RoPE, a causal mask, grouped-query attention (4 heads, 2 kv heads)."""
    def make() -> torch.nn.Module:
        config_class, model_class = {"llama": (transformers.LlamaConfig, transformers.LlamaModel),
                                     "qwen2": (transformers.Qwen2Config, transformers.Qwen2Model)}[family]
        config = config_class(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                              use_cache=False)
        return model_class(config)
    return make


def _t5_encoder() -> torch.nn.Module:
    """Relative position buckets (computed from int64 positions at export) instead of embeddings."""
    config = transformers.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                   relative_attention_num_buckets=8)
    return transformers.T5EncoderModel(config)


MODELS: dict[str, Callable[[], torch.nn.Module]] = {
    "distilbert": _distilbert, "bert": _bert, "gpt2": _gpt2, "llama": _decoder("llama"), "qwen2": _decoder("qwen2"),
    "t5_encoder": _t5_encoder}
LEFT_PADDED = {"gpt2", "llama", "qwen2"}  # decoders pad on the left: padding queries see no key at all


def _inputs(seed: int, padding: int, left: bool = False) -> list[torch.Tensor]:
    ids = torch.randint(0, VOCAB, (1, LENGTH), generator=torch.Generator().manual_seed(seed))
    mask = torch.ones(1, LENGTH, dtype=torch.int64)
    if padding:
        mask[0, slice(0, padding) if left else slice(LENGTH - padding, LENGTH)] = 0
    return [ids, mask]


def _model(name: str) -> IdsAndMask:
    torch.manual_seed(0)
    return IdsAndMask(MODELS[name]().eval()).eval()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_lowers_whole_and_matches_eager_in_every_engine(name: str, tmp_path: Path) -> None:
    model = _model(name)
    _, compiled = compile_traced(model, _inputs(0, 0))
    (program,) = compiled.programs
    assert [info.dtype for info in program.inputs] == [DType.INT64, DType.INT64]
    assert {OpCode.EMBEDDING, OpCode.CAST, OpCode.WHERE} <= {ins.op for ins in program.instructions}
    for seed, padding in ((1, 0), (2, 3), (3, 6)):
        inputs = _inputs(seed, padding, left=name in LEFT_PADDED)
        with torch.no_grad():
            expected = model(*inputs).numpy()
        ours, lite = run_engines(compiled, tmp_path / f"{name}.ptl", inputs)
        assert_same(ours, expected)
        assert_same(lite.numpy(), expected)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_self_check_draws_ids_within_the_vocabulary_and_masks(name: str) -> None:
    model = _model(name)
    traced, compiled = compile_traced(model, _inputs(0, 0))
    # the ids reach the word embedding only (positions and token types are constants): drawn below
    # its 100 rows; the mask reaches none: ones then zeros
    assert index_bounds(compiled.programs[0], compiled.weights) == {0: VOCAB}
    ids, mask = method_inputs(compiled.programs[0], compiled.weights, [(1, LENGTH), (1, LENGTH)], seed=0)
    assert ids.dtype == np.int64 and 0 <= ids.min() and ids.max() < VOCAB
    assert set(np.unique(mask)) <= {0, 1} and mask[0, 0] == 1
    vectors = record_test_vectors(traced, {"forward": [(ids, mask)]})
    (note,) = check_vectors(traced, compiled, vectors)
    assert note.startswith("self-check passed for forward")
