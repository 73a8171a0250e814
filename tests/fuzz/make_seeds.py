"""Regenerate the seed bundles of the mutation corpus (needs torch):

    /work/venv/bin/python tests/fuzz/make_seeds.py

Writes ``tests/fuzz/seeds/<name>.<kind>.bin`` and ``seeds/inputs.json`` (the forward input
shapes of the seeds whose signature is known). The seeds are kept in the repository so the
corpus runs without torch and does not change when torch or the compiler does.
Kinds: ``ptmf`` (a PTMF flatbuffer bundle), ``zip`` (a zip lite model), ``program`` (one
compiled demo program), ``debug`` (a debug table).
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bundle_format.debug_table_codec import encode_debug_table  # noqa: E402
from bundle_format.program_codec import encode_program  # noqa: E402
from bundle_format.ptmf_writer import encode_module  # noqa: E402
from liteexport.bundle import pack  # noqa: E402
from liteexport.compiler import compile_module  # noqa: E402
from tests.parity import parity_models as models  # noqa: E402

SEEDS = Path(__file__).parent / "seeds"


@torch.jit.script
class Holder:
    def __init__(self, v: int) -> None:
        self.v = v
        self.t = torch.ones(2)

    def __getstate__(self) -> tuple[int, torch.Tensor]:
        return (self.v, self.t)

    def __setstate__(self, s: tuple[int, torch.Tensor]) -> None:
        self.v = s[0] + 100
        self.t = s[1]


class Stateful(torch.nn.Module):
    """State of every kind, with a CLASS_WITH_SETSTATE object (its __setstate__ runs at load)."""

    def __init__(self) -> None:
        super().__init__()
        self.holder = Holder(3)
        self.idx = torch.tensor([1, 2], dtype=torch.int64)
        self.mask = torch.tensor([True, False])
        self.table: dict[str, int] = {"a": 1}
        self.floats: list[float] = [1.5, 2.5]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.holder.v > 50:
            x = x + self.holder.t.sum()
        return x * float(self.table["a"]) + self.floats[0]


class SmallLinear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.l(x))


def _lite(scripted: torch.jit.ScriptModule, **kwargs: object) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.ptl"
        scripted._save_for_lite_interpreter(str(path), **kwargs)
        return path.read_bytes()


def main() -> None:
    SEEDS.mkdir(exist_ok=True)
    seeds: dict[str, bytes] = {}
    inputs: dict[str, list[list[int]]] = {}
    lowered = {"mlp": (models.MLP, {"forward": [(4, 20)]}),
               "convnet": (models.ConvNet, {"forward": [(2, 3, 32, 32)]}),
               "two_methods": (models.TwoMethods, {"forward": [(3, 6)], "embed": [(3, 6), (3, 6)]})}
    for name, (factory, shapes) in lowered.items():
        torch.manual_seed(0)
        compiled = compile_module(torch.jit.script(factory().eval()), input_shapes=shapes)
        seeds[f"lowered_{name}.ptmf"] = encode_module(pack(compiled))
        inputs[f"lowered_{name}.ptmf"] = [list(s) for s in shapes["forward"]]
        if name == "mlp":
            seeds["lowered_mlp_forward.program"] = encode_program(compiled.programs[0])
            if compiled.debug_table is not None:
                seeds["lowered_mlp.debug"] = encode_debug_table(compiled.debug_table)
    torch.manual_seed(0)
    for name, factory, shape in (("linear", SmallLinear, [2, 4]), ("stateful", Stateful, [3])):
        scripted = torch.jit.script(factory().eval())
        seeds[f"torch_{name}.ptmf"] = _lite(scripted, _use_flatbuffer=True)
        seeds[f"torch_{name}.zip"] = _lite(scripted)
        inputs[f"torch_{name}.ptmf"] = inputs[f"torch_{name}.zip"] = [shape]
    seeds["torch_linear_debug.zip"] = _lite(torch.jit.script(SmallLinear().eval()), _save_mobile_debug_info=True)
    inputs["torch_linear_debug.zip"] = [[2, 4]]
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(SmallLinear().eval()), buf)  # not a lite model: must be refused
    seeds["torch_full_jit_save.zip"] = buf.getvalue()
    for old in SEEDS.glob("*.bin"):
        old.unlink()
    for name, data in sorted(seeds.items()):
        (SEEDS / f"{name}.bin").write_bytes(data)
        print(f"{name}: {len(data)} bytes")
    (SEEDS / "inputs.json").write_text(json.dumps(inputs, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
