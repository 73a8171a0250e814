"""runtime_py imports and runs a bundle in a Python where torch cannot be imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from liteexport.bundle import write_bundle
from liteexport.lowered import CompiledModule

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
class BlockTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
sys.meta_path.insert(0, BlockTorch())
import numpy as np
import runtime_py
m = runtime_py.load(sys.argv[1])
x = np.array([[1.0, 2.0, 3.0, 4.0]], dtype=np.float32)
y, same = m.forward(x)
assert "torch" not in sys.modules
print(" ".join(f"{v:.4f}" for v in y.ravel()))
"""


def test_runtime_runs_with_torch_blocked(tmp_path: Path, linear_relu_module: CompiledModule) -> None:
    bundle = tmp_path / "m.ptl"
    write_bundle(linear_relu_module, bundle)
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(bundle)], capture_output=True, text=True,
                            cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    x = [1.0, 2.0, 3.0, 4.0]
    w, b = linear_relu_module.weights
    expected = [max(0.0, sum(w[i][j] * x[j] for j in range(4)) + b[i]) for i in range(3)]
    assert result.stdout.split() == [f"{v:.4f}" for v in expected]
