"""The model zoo: every classification model of torchvision.models that scripts, and the
torch.nn models (transformer encoder/decoder, LSTM, GRU), each built with seeded random
weights and compiled as a user would export it; ``evaluate`` says whether it lowers (and
else its blockers), its max error against eager torch, and its export time.

Used by tests/compiler/test_model_zoo.py and by zoo_report.py (the table).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.errors import ModelError, UnsupportedNodesError
from liteexport.parity import (
    as_outputs,
    explained_by_float32,
    is_constant,
    max_errors,
    structure_problem,
    within_tolerance,
)
from liteexport.self_check import exact_outputs
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.plan import build_plan

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for the shared shim
from benchmarks.torchvision_shim import import_torchvision  # noqa: E402

# Input side per torchvision model, where the default (64) is too small or not allowed.
_IMAGE_SIDE = {"maxvit_t": 224, "inception_v3": 96}
_FIXED_224 = ("vit_",)  # ViTs take exactly their image_size


PACK_LIMIT = "bundle over PTMF's 2 GB limit"


@dataclass(frozen=True)
class ZooCase:
    name: str
    build: Callable[[], nn.Module]
    input_shapes: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class ZooResult:
    name: str
    lowered: bool
    blockers: dict[str, int]  # node kind -> sites (empty when lowered)
    max_abs_error: float  # against eager torch (nan when not lowered)
    matches: bool
    export_seconds: float  # script + compile (+ pack when lowered)


class EncoderModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x)


class DecoderModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(16, 2, 32, batch_first=True), 2)

    def forward(self, x: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        return self.decoder(x, memory)


class LSTMModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(8, 16, 2, batch_first=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        out, (h, c) = self.rnn(x)
        return out, h, c


class GRUModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(8, 16, batch_first=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out, h = self.rnn(x)
        return out, h


NN_CASES = (
    ZooCase("nn.TransformerEncoder", EncoderModel, ((2, 5, 16),)),
    ZooCase("nn.TransformerDecoder", DecoderModel, ((2, 5, 16), (2, 6, 16))),
    ZooCase("nn.LSTM", LSTMModel, ((2, 5, 8),)),
    ZooCase("nn.GRU", GRUModel, ((2, 5, 8),)),
)


def torchvision_names() -> list[str]:
    models = import_torchvision().models
    return sorted(models.list_models(module=models))


def torchvision_case(name: str) -> ZooCase:
    side = 224 if name.startswith(_FIXED_224) else _IMAGE_SIDE.get(name, 64)
    return ZooCase(name, lambda: import_torchvision().models.get_model(name), ((1, 3, side, side),))


def _randomize(model: nn.Module, shapes: tuple[tuple[int, ...], ...], seed: int) -> nn.Module:
    """Seeded weights as the model initializes them, and batch-norm statistics measured on
    a random batch (one training-mode pass): far from their defaults, so folding them
    changes numbers, yet matched to the activations, so a deep network's outputs keep a
    sane magnitude (with made-up statistics resnet152's logits reach 1e7)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            if not parameter.any():
                # zero-initialized (ViT's head, biases): an all-zero output would match anything
                parameter.normal_(0.0, 0.02)
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if norms:
        model.eval()  # only the norms learn: eval-time control flow (no auxiliary heads)
        for norm in norms:
            norm.momentum = None  # a cumulative average: after one pass, that batch's statistics
            norm.train()
        with torch.no_grad():
            model(*[torch.randn((4, *s[1:])) for s in shapes])
            for norm in norms:
                # a channel (nearly) constant on 4 images would get a scale of ~300 that no
                # real model has, amplifying float32 rounding past any tolerance
                norm.running_var.clamp_(min=0.1)
    return model.eval()


def _eager_in_scripted_structure(model: nn.Module, scripted: torch.jit.ScriptModule,
                                 inputs: list[torch.Tensor]) -> tuple[object, ...]:
    """Eager torch's tensors, in the structure of the scripted module's result, which the
    bundle returns: googlenet and inception_v3 return their logits eagerly, but
    ``(logits, None, None)`` when scripted (torch.jit.is_scripting())."""
    eager = iter(as_outputs(model(*inputs)))
    return tuple(v if is_constant(v) else next(eager) for v in as_outputs(scripted(*inputs)))


def evaluate(case: ZooCase, seed: int = 0) -> ZooResult:
    """Script, compile (with static input shapes), pack and run ``case`` in runtime_py
    against eager torch on seeded random inputs."""
    torch.manual_seed(seed)
    model = _randomize(case.build(), case.input_shapes, seed)
    start = time.perf_counter()
    scripted = torch.jit.script(model)
    try:
        compiled = compile_module(scripted, input_shapes={"forward": [list(s) for s in case.input_shapes]})
    except UnsupportedNodesError as error:
        return ZooResult(case.name, False, error.counts, float("nan"), False, time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as folder:
        try:
            write_bundle(compiled, Path(folder) / "model.ptl")
        except ModelError:  # compiled, but past what one PTMF flatbuffer can address
            return ZooResult(case.name, False, {PACK_LIMIT: 1}, float("nan"), False, time.perf_counter() - start)
    seconds = time.perf_counter() - start
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in case.input_shapes]
    with torch.no_grad():
        expected = _eager_in_scripted_structure(model, scripted, [torch.from_numpy(x) for x in inputs])
    tensors = [np.asarray(o) for o in executor.run(build_plan(compiled.programs[0], compiled.weights), inputs)]
    signature = compiled.methods[0]  # the bundle's result: the wrapper adds the tuple's constants (None)
    got = signature.elements(tensors) if signature.returns_tuple else tuple(tensors)
    same_structure = not structure_problem(got, expected)
    pairs = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected, strict=False)) if not is_constant(e)]
    matches = same_structure and all(within_tolerance(g, e) for _, g, e in pairs)
    if not matches and same_structure:  # float32 rounding, or a wrong program?
        exact = exact_outputs(scripted, "forward", inputs)
        matches = all(within_tolerance(g, e) or explained_by_float32(g, e, exact[i]) for i, g, e in pairs)
    error = max((max_errors(g, e)[0] if same_structure and g.shape == e.shape else float("inf")
                 for _, g, e in pairs), default=float("inf"))
    return ZooResult(case.name, True, {}, error, matches, seconds)
