"""Max pooling with ceil_mode on the native core's XNNPACK path (native/src/demo/xnn.cpp):
torch's last partial window comes from extra bottom/right padding, for float values and for int8
values (googlenet's and inception's pools). Max pooling only picks values, so float results equal
torch's exactly, and int8 ones runtime_py's."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
from tests.android.test_native_int8 import _run_native, _within_quanta
from tests.text_models.typed import run_native

pytestmark = [pytest.mark.android, pytest.mark.torch_oracle,
              pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None,
                                 reason="needs cmake and g++ to build C++")]

# (kernel, stride, padding, dilation, input size): sizes where ceil mode adds a partial window,
# where it adds none, and where torch drops the window that would start in the right padding
CASES = [(3, 2, 0, 1, 15), (3, 2, 0, 1, 16), (2, 2, 0, 1, 7), (3, 2, 1, 1, 8), (3, 3, 1, 1, 10), (3, 2, 0, 2, 12),
         (2, 3, 1, 1, 9)]


@pytest.mark.parametrize(("kernel", "stride", "padding", "dilation", "size"), CASES)
def test_ceil_mode_max_pooling_equals_torch(kernel: int, stride: int, padding: int, dilation: int, size: int,
                                            tmp_path: Path) -> None:
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 1), torch.nn.MaxPool2d(kernel, stride, padding, dilation,
                                                                            ceil_mode=True)).eval()
    x = torch.randn(2, 3, size, size + 1, generator=torch.Generator().manual_seed(size))
    path = tmp_path / "pool.ptl"
    liteexport.export(model, path, input_shapes=[tuple(x.shape)])
    with torch.no_grad():
        expected = model(x).numpy()
    (native,) = run_native(path, [x.numpy()])
    assert native.shape == expected.shape
    np.testing.assert_allclose(native, expected, rtol=1e-6, atol=1e-6)


class _QuantizedCeilPool(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.conv = torch.nn.Conv2d(3, 16, 3)
        self.pool = torch.nn.MaxPool2d(3, 2, ceil_mode=True)
        self.conv2 = torch.nn.Conv2d(16, 8, 1)
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dequant(self.conv2(self.pool(self.conv(self.quant(x)))))


def test_int8_ceil_mode_max_pooling_runs_on_int8(tmp_path: Path) -> None:
    torch.backends.quantized.engine = "qnnpack"
    model = _QuantizedCeilPool().eval()
    model.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.prepare(model, inplace=True)
    model(torch.randn(4, 3, 16, 16, generator=torch.Generator().manual_seed(0)))
    torch.ao.quantization.convert(model, inplace=True)
    path = tmp_path / "qpool.ptl"
    liteexport.export(torch.jit.script(model), path, input_shapes=[(1, 3, 16, 16)])
    x = np.random.default_rng(5).standard_normal((1, 3, 16, 16)).astype(np.float32)
    native, rows = _run_native(path, x, tmp_path)
    assert native.shape == (1, 8, 7, 7)  # ceil mode: 14 -> 7 windows (6 without it)
    assert _within_quanta(path, x, native) <= 1 + 1e-3
    pools = [r for r in rows if r["op"] == "MAX_POOL2D"]
    assert len(pools) == 1 and pools[0]["int8"], pools
