"""runtime_py reports a failure inside a lowered module with the module hierarchy and traceback
torch's lite interpreter prints for it: for liteexport's own bundles (the LoweredWrapper frames
rebuilt, levels in torch's naming: ``SELF(...)`` for a module's own methods,
``UNKNOWN_INSTANCE(UNKNOWN_TYPE)`` for free functions), for torch's zip files with debug info
(the handle stack composed as torch does), and for traced models (the node's Python stack).
Torch's text comes from torch itself on the same module, lowered by ``_jit_to_backend`` and
saved with ``_save_mobile_debug_info``; lines are compared without trailing blanks. liteexport
names files relative to the working directory (torch: absolute paths), so scripted Python
modules are compared with paths made absolute.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.jit.mobile import _load_for_lite_interpreter

import liteexport
import runtime_py
from runtime_py.errors import ExecutionError
from tests.to_backend import mixed_models
from tests.to_backend.torch_source import define, to_backend

pytestmark = [pytest.mark.torch_oracle, pytest.mark.usefixtures("backend")]

REPO = Path(__file__).resolve().parents[2]


def _trace_text(message: str) -> str:
    lines = message[message.index("Module hierarchy:"):].splitlines()
    return "\n".join(line.rstrip() for line in lines).strip()


def _torch_text(module: Any, inputs: tuple[torch.Tensor, ...], tmp_path: Path) -> str:
    path = tmp_path / "torch_dbg.ptl"
    path.write_bytes(to_backend(module)._c._save_to_buffer_for_mobile({}, True, False))
    with pytest.raises(RuntimeError) as info:
        _load_for_lite_interpreter(str(path))(*inputs)
    return _trace_text(str(info.value))


def _runtime_py_text(path: Path, inputs: tuple[torch.Tensor, ...]) -> str:
    with pytest.raises(ExecutionError) as info:
        runtime_py.load(path).forward(*(x.numpy() for x in inputs))
    return _trace_text(str(info.value))


def _nested() -> Any:
    a = define("A", "\n    def forward(self, x, y):\n      return x + y\n  ")
    b = define("B", "\n    def forward(self, x, y):\n      return self.A0.forward(x, y) + 2\n  ", A0=a)
    return define("C", "\n    def forward(self, x, y):\n      return self.B0.forward(x, y) + 3\n  ", B0=b)


BAD_ADD = (torch.rand(2, 4), torch.rand(13, 9))


def test_our_bundle_prints_torchs_text(tmp_path: Path) -> None:
    module = _nested()
    expected = _torch_text(module, BAD_ADD, tmp_path)
    assert expected.startswith(
        "Module hierarchy:top(C)::<unknown>.__loweredModule__(C)::forward.B0(B)::forward.A0(A)::forward.aten::add")
    ours = tmp_path / "ours.ptl"
    liteexport.export(module, ours)
    assert _runtime_py_text(ours, BAD_ADD) == expected


def test_torch_zip_with_debug_info_prints_torchs_text(tmp_path: Path) -> None:
    module = _nested()
    expected = _torch_text(module, BAD_ADD, tmp_path)
    assert _runtime_py_text(tmp_path / "torch_dbg.ptl", BAD_ADD) == expected


def _absolute(text: str) -> str:
    """liteexport's relative file names as torch prints them."""
    torch_root = Path(torch.__file__).parent.parent
    text = text.replace('File "torch/', f'File "{torch_root}/torch/')
    return text.replace('File "tests/', f'File "{REPO}/tests/')


@pytest.mark.parametrize("traced", [False, True])
def test_self_method_and_free_function_levels(tmp_path: Path, traced: bool, monkeypatch: Any) -> None:
    monkeypatch.chdir(REPO)
    torch.manual_seed(0)
    model: Any = mixed_models.Calls().eval()
    x, y = torch.randn(2, 4), torch.randn(3, 4)
    if traced:
        model = torch.jit.trace(model, (x, torch.randn(2, 4)))
    else:
        model = torch.jit.script(model)
    expected = _torch_text(model, (x, y), tmp_path)
    ours = tmp_path / "ours.ptl"
    liteexport.export(model, ours)
    text = _runtime_py_text(ours, (x, y))
    assert (text if traced else _absolute(text)) == expected
    if not traced:
        assert ".enc(Projector)::forward.SELF(Projector)::project.UNKNOWN_INSTANCE(UNKNOWN_TYPE)::combine.aten::add" \
            in text
    np.testing.assert_allclose(runtime_py.load(ours).forward(x.numpy(), x.numpy()),
                               model(x, x).detach().numpy(), atol=1e-5, rtol=1e-4)
