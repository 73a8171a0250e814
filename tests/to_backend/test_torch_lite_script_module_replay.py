"""torch's test/mobile/test_lite_script_module.py module-hierarchy case (``B`` holding ``A0`` and
``A1``, traced and scripted, a shape error in each), replayed on modules lowered to liteexport's
backend: torch's lite interpreter (torch's to_backend with liteexport's compiler, saved with
debug info) and runtime_py (liteexport's own bundle, and torch's zip file) give torch's pattern
with the lowered module's level, ``top(B)::<unknown>.__loweredModule__(B)::forward.A0(A)...``,
and runtime_py's text is torch's, line for line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.jit.mobile import _load_for_lite_interpreter

import liteexport
import runtime_py
from runtime_py.errors import ExecutionError
from tests.to_backend import mixed_models
from tests.to_backend.torch_source import to_backend

pytestmark = [pytest.mark.torch_oracle, pytest.mark.usefixtures("backend")]

# torch's pattern, the lowered module's level added (torch names the class A, ours is MulA)
PATTERNS = {
    "A0": r"Module hierarchy:top\(TwoMuls\)::<unknown>\.__loweredModule__\(TwoMuls\)::forward\.A0\(MulA\)::forward"
          r"\.aten::mul",
    "A1": r"Module hierarchy:top\(TwoMuls\)::<unknown>\.__loweredModule__\(TwoMuls\)::forward\.A1\(MulA\)::forward"
          r"\.aten::mul",
}
BAD_INPUTS = {
    "A0": (torch.rand(2, 3), torch.rand(8, 10), torch.rand(8, 10)),
    "A1": (torch.rand(2, 3), torch.rand(2, 3), torch.rand(8, 10)),
}


def _text(message: str) -> str:
    lines = message[message.index("Module hierarchy:"):].splitlines()
    return "\n".join(line.rstrip() for line in lines).strip()


@pytest.mark.parametrize("export_method", ["trace", "script"])
def test_module_hierarchy_of_a_lowered_module(export_method: str, tmp_path: Path) -> None:
    x, y, z = torch.rand(2, 3), torch.rand(2, 3), torch.rand(2, 3)
    model: Any = (torch.jit.trace(mixed_models.TwoMuls(), [x, y, z]) if export_method == "trace"
                  else torch.jit.script(mixed_models.TwoMuls()))
    torch_zip = tmp_path / "torch.ptl"
    torch_zip.write_bytes(to_backend(model)._c._save_to_buffer_for_mobile({}, True, False))
    assert b"callstack_debug_map.pkl" in torch_zip.read_bytes()
    ours = tmp_path / "ours.ptl"
    liteexport.export(model, ours)
    mobile = _load_for_lite_interpreter(str(torch_zip))
    assert torch.equal(mobile(x, y, z), model(x, y, z))
    for which, inputs in BAD_INPUTS.items():
        with pytest.raises(RuntimeError) as info:
            mobile(*inputs)
        assert re.search(PATTERNS[which], str(info.value)) is not None
        expected = _text(str(info.value))
        for bundle in (torch_zip, ours):
            with pytest.raises(ExecutionError) as ours_info:
                runtime_py.load(bundle).forward(*(t.numpy() for t in inputs))
            if bundle == ours and export_method == "script":  # our file names are relative
                assert _text(str(ours_info.value)).splitlines()[0] == expected.splitlines()[0]
            else:
                assert _text(str(ours_info.value)) == expected
