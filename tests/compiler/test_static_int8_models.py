"""--quantize int8 on torchvision's resnet18 and mobilenet_v2 (issue 22, item 2): random weights
(seed 0, batch-norm statistics from random images), four calibration images. The int8 bundle is at
most 0.27x the float one, every conv and linear is quantized with FAKE_QUANTIZE steps where the
native int8 kernels expect them, the export states its error against the float model (within
liteexport.static_int8.TOLERANCE of the output's range, top-1 agreement) on the 3 calibration
images its grids were observed on and on the 4th, held out, and torch's lite interpreter with our
backend runs the bundle within liteexport.quantized_parity.QUANTA quanta of runtime_py.
`tests/compiler/models/int8_report.py` prints the figures."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import runtime_py
from liteexport.inspect_bundle import delegate_contents
from liteexport.quantized_parity import QUANTA, output_quantum, quanta_apart
from liteexport.torch_backend import load_torch_backend
from tests.compiler.models.int8_models import calibration, export_both, float_model
from tests.liteexport.int8_checks import assert_int8_contract

pytestmark = [pytest.mark.torch_oracle, pytest.mark.slow]

# conv/linear layers; FAKE_QUANTIZE steps: one per layer's output, one per residual add, the
# image's, and the grid repeated where a layer reads a pooled value (resnet18: after the stem's max
# pool and before fc; mobilenet_v2: before the classifier)
MODELS = {"resnet18": (21, 21 + 8 + 3), "mobilenet_v2": (53, 53 + 10 + 2)}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_torchvision_classifier_quantizes_to_int8(name: str, tmp_path: Path) -> None:
    plain, int8, _, _ = export_both(float_model(name), tmp_path)
    assert int8.size <= 0.27 * plain.size, (int8.size, plain.size)
    contents = delegate_contents(runtime_py.load(int8.path).ptmf)
    assert contents is not None
    program = contents[0]["forward"]
    layers, grids = MODELS[name]
    assert assert_int8_contract(program, contents[1]) == layers
    assert sum(ins.op.name == "FAKE_QUANTIZE" for ins in program.instructions) == grids
    cost = [n for n in int8.notes if n.startswith("int8 weights and activations cost forward")]
    assert len(cost) == 2, int8.notes
    labels = ("3 of 4 calibration sets", r"1 held-out calibration set of 4 \(calibration input set 3\)")
    for note, inputs, rows in zip(cost, labels, (3, 1), strict=True):
        pattern = rf"on {inputs}, top-1 agreement \d/{rows} \([0-9.e-]+ x the output's range; allowed: 0.1 x\)"
        assert re.search(pattern, note), note

    x = np.random.default_rng(7).standard_normal(calibration()[0][0].shape).astype(np.float32)
    ours = np.asarray(runtime_py.load(int8.path).forward(x))
    load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(int8.path)(torch.from_numpy(x)).numpy()
    quantum = output_quantum(program, 0)
    assert quantum is not None and quanta_apart(lite, ours, quantum) <= QUANTA + 1e-3
