"""torch's OpInfo sample inputs for every Core ATen op docs/reference.md's table marks "compiles"
or "decomposes": each sample exported through the torch.export front end and run on runtime_py
and the native core against eager torch (tests/frontend_export/opinfo.py). A wrong answer on any
engine fails; a sample the compiler refuses must be refused with a clear error (exit 4 or 6 class,
with the reason: a dtype or an argument a lowering does not take). The counts must be the ones
scripts/core_aten_opinfo.json stores (the table's OpInfo column).

About a second a sample: run it on its own (``pytest tests/frontend_export/test_opinfo_parity.py``);
the table's freshness test does not need it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from liteexport.native_tool import NativeToolMissing
from liteexport.native_tool import native_tool as checkout_tool
from tests.frontend_export.opinfo import Tally, opinfos_by_aten_name, opinfos_for, probe, samples
from tests.frontend_export.test_core_aten_table import ROOT, _generator

pytestmark = [pytest.mark.torch_oracle, pytest.mark.slow]

_MEASURED = json.loads((ROOT / "scripts" / "core_aten_opinfo.json").read_text())


def _compiled_names() -> list[str]:
    generator = _generator()
    names = set()
    for op in generator.core_overloads():
        state, _ = generator.status(op, _MEASURED)
        if state in ("compiles", "decomposes"):
            names.add(str(op).removeprefix("aten.").split(".")[0])
    return sorted(names & set(_MEASURED))


# Wrong answers these samples found and not fixed yet, by op name with the reason: strict xfails,
# so a fix makes the test fail until it is removed. None now (full_like of a 0-d tensor and
# scalar_tensor came back with shape (1,): numpy's ascontiguousarray made 0-d constants 1-d).
KNOWN_WRONG: dict[str, str] = {}


def _param(name: str) -> object:
    if name in KNOWN_WRONG:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[name]))
    return name


def _tool() -> Path:
    """The host tool: $LITEEXPORT_NATIVE_RUN or this checkout's host build, else the tests' build."""
    try:
        return checkout_tool()
    except NativeToolMissing:
        from tests.text_models.typed import native_tool

        return native_tool()


@pytest.mark.parametrize("name", [_param(name) for name in _compiled_names()])
def test_opinfo_samples_match_eager_torch_on_every_engine(name: str, tmp_path: Path) -> None:
    from tests.text_models.typed import run_native

    tool = _tool()

    def native(path: Path, arrays: list[np.ndarray]) -> list[np.ndarray]:
        return run_native(path, arrays, tool)

    tally = Tally()
    for info in opinfos_for(name, opinfos_by_aten_name()):
        for index, sample in enumerate(samples(info)):
            tally.add(probe(info, sample, tmp_path / f"{info.variant_test_name or 'x'}{index}.ptl", native))
    assert tally.wrong == []
    stored = _MEASURED[name]
    exported = tally.samples - sum(tally.skipped.values())
    assert (exported, tally.lowered, dict(sorted(tally.refused.items()))) == \
        (stored["samples"], stored["lowered"], stored["refused"])


def test_a_zero_d_input_and_constant_run_on_the_native_core(tmp_path: Path) -> None:
    """A 0-d input, a 0-d result and a 0-d constant output keep shape () (the tests' .npy files
    and the bundle's weights were made 1-d by numpy's ascontiguousarray)."""
    import torch

    import runtime_py
    from liteexport.bundle import write_bundle
    from liteexport.compiler.exported import compile_exported
    from tests.text_models.typed import run_native

    class Double(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            return x * 2, torch.full_like(x, 7.0), torch.scalar_tensor(4.0)

    x = torch.tensor(1.5)
    write_bundle(compile_exported(torch.export.export(Double(), (x,))), tmp_path / "d.ptl")
    expected = [np.asarray(v, np.float32) for v in (3.0, 7.0, 4.0)]
    for got in (run_native(tmp_path / "d.ptl", [x.numpy()], _tool()),
                runtime_py.load(tmp_path / "d.ptl").forward(x.numpy())):
        for out, want in zip(got, expected, strict=True):
            np.testing.assert_array_equal(out, want, strict=True)  # strict: shape () too, not (1,)

