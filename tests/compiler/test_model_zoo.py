"""The model zoo: every classification model of torchvision.models (all of them script)
and the torch.nn models, with random weights; each lowers and matches eager torch, or
fails with exactly its known blockers.

A model that does not lower yet is an expected failure whose reason is its blocker set
(``xfail(strict=True)`` on :class:`Blocked` only): when it starts to lower the test
XPASSes and fails, so the table below must be updated; when its blockers change it fails
on the assertion naming the new set. ``zoo_report.py`` prints the same facts as a table.

Default run: the smallest model of each torchvision family (24 models) plus the torch.nn
models: about 30 s on 2 cores. ``LITEEXPORT_FULL_ZOO=1`` adds the other 56 torchvision
models (larger variants of the same families, up to vit_h_14 and regnet_y_128gf: about 15
minutes and several GB of memory; marked ``slow``); tests/compiler/models/zoo_report.py
prints the table for all 84.
"""

from __future__ import annotations

import gc
import os

import pytest

from .models.model_zoo import NN_CASES, PACK_LIMIT, ZooCase, evaluate, torchvision_case, torchvision_names

# Run by default: one (small) model per torchvision family, and every torch.nn model.
DEFAULT = {
    "alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s", "googlenet",
    "inception_v3", "maxvit_t", "mnasnet0_5", "mobilenet_v2", "mobilenet_v3_small", "regnet_x_400mf",
    "regnet_y_400mf", "resnet18", "resnext50_32x4d", "shufflenet_v2_x0_5", "squeezenet1_0", "squeezenet1_1",
    "swin_t", "swin_v2_t", "vgg11", "vgg11_bn", "vit_b_32", "wide_resnet50_2",
}

# Model -> the node kinds (or packing limit) keeping it from lowering today.
EXPECTED_BLOCKERS: dict[str, set[str]] = {
    "regnet_y_128gf": {PACK_LIMIT},  # 644M parameters: 2.6 GB of float32 weights
    "vit_h_14": {PACK_LIMIT},  # 632M parameters
}


class Blocked(Exception):
    """The model does not lower yet, with exactly its expected blockers."""


def _param(case: ZooCase) -> object:
    marks = []
    if case.name not in DEFAULT and not case.name.startswith("nn."):
        marks.append(pytest.mark.slow)
    expected = EXPECTED_BLOCKERS.get(case.name)
    if expected is not None:
        marks.append(pytest.mark.xfail(raises=Blocked, strict=True,
                                       reason="blocked by " + ", ".join(sorted(expected))))
    return pytest.param(case, id=case.name, marks=marks)


FULL_ZOO = os.environ.get("LITEEXPORT_FULL_ZOO") == "1"
CASES = [_param(torchvision_case(name)) for name in torchvision_names() if FULL_ZOO or name in DEFAULT] + [
    _param(c) for c in NN_CASES]


@pytest.mark.torch_oracle
@pytest.mark.parametrize("case", CASES)
def test_zoo_model_lowers_and_matches_eager(case: ZooCase) -> None:
    result = evaluate(case)
    gc.collect()  # the largest models hold gigabytes
    if not result.lowered:
        expected = EXPECTED_BLOCKERS.get(case.name)
        assert expected is not None, f"{case.name} no longer lowers: {result.blockers}"
        assert set(result.blockers) == expected, (
            f"{case.name}'s blockers changed: now {result.blockers}; update EXPECTED_BLOCKERS")
        raise Blocked(", ".join(f"{kind} x{n}" for kind, n in result.blockers.items()))
    assert result.matches, f"{case.name}: max abs error {result.max_abs_error:.3g} against eager torch"


def test_every_torchvision_classification_model_is_in_the_zoo() -> None:
    names = torchvision_names()
    assert len(names) >= 80  # torchvision 0.28's classification zoo
    assert DEFAULT <= set(names)
    assert {n for n in EXPECTED_BLOCKERS if not n.startswith("nn.")} <= set(names)
