"""RESIZE2D (issue 20): F.interpolate's nearest and bilinear modes against torch eager on the
same inputs, scripted and traced, in runtime_py and in torch's lite interpreter with liteexport's
backend; the numpy kernel against ATen's upsample ops directly; the modes that are not compiled
reported as unsupported nodes."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile
import torch.nn.functional as F

import liteexport.torch_backend as tb
import runtime_py
from bundle_format.debug_table import DebugTable
from bundle_format.program import OpCode, ResizeAttrs
from liteexport.backend import DEMO_BACKEND
from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.errors import UnsupportedNodesError
from liteexport.lowered import CompiledModule, MethodSignature
from liteexport.parity import scaled_atol
from runtime_py.backends.demo.resize import make_resize2d
from runtime_py.budgets import RunLimitExceeded
from tests.runtime_py.backends.demo_backend_helpers import one_op_program
from tests.text_models.typed import assert_same, compile_traced, run_engines, spec_of

pytestmark = pytest.mark.torch_oracle

Interp = Callable[[torch.Tensor], torch.Tensor]

# name -> (input shape, the interpolation); upscaling, downscaling, non-integer ratios, both forms
CASES: dict[str, tuple[tuple[int, ...], Interp]] = {
    "nearest_size_up": ((1, 3, 5, 7), lambda x: F.interpolate(x, size=(11, 16), mode="nearest")),
    "nearest_size_down": ((2, 2, 13, 9), lambda x: F.interpolate(x, size=(4, 5), mode="nearest")),
    "nearest_scale_2": ((1, 3, 6, 5), lambda x: F.interpolate(x, scale_factor=2.0, mode="nearest")),
    "nearest_scale_fraction": ((1, 2, 7, 9), lambda x: F.interpolate(x, scale_factor=(1.7, 0.45), mode="nearest")),
    "bilinear_size_up": ((1, 3, 5, 7), lambda x: F.interpolate(x, size=(12, 17), mode="bilinear")),
    "bilinear_size_down": ((2, 2, 13, 9), lambda x: F.interpolate(x, size=(4, 6), mode="bilinear")),
    "bilinear_corners_up": ((1, 3, 5, 7), lambda x: F.interpolate(x, size=(12, 17), mode="bilinear",
                                                                  align_corners=True)),
    "bilinear_corners_down": ((1, 2, 13, 9), lambda x: F.interpolate(x, size=(5, 1), mode="bilinear",
                                                                     align_corners=True)),
    "bilinear_scale_fraction": ((1, 2, 7, 9), lambda x: F.interpolate(x, scale_factor=(2.3, 0.6), mode="bilinear")),
    "bilinear_scale_corners": ((1, 2, 7, 9), lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear",
                                                                     align_corners=True)),
    "upsample_module": ((1, 3, 4, 6), torch.nn.Upsample(scale_factor=3, mode="bilinear")),
    "upsample_nearest_module": ((1, 3, 4, 6), torch.nn.UpsamplingNearest2d(size=(9, 5))),
}


class Interpolate(torch.nn.Module):
    def __init__(self, fn: Interp) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x) * 2.0  # a consumer: the resize is an instruction, not the whole method


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


def _input(shape: tuple[int, ...]) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(7)) * 4


@pytest.mark.parametrize("name", sorted(CASES))
def test_traced_interpolate_matches_torch_in_both_engines(name: str, tmp_path: Path) -> None:
    shape, fn = CASES[name]
    x = _input(shape)
    traced, compiled = compile_traced(Interpolate(fn), [x])
    assert [ins.op for ins in compiled.programs[0].instructions].count(OpCode.RESIZE2D) == 1
    expected = Interpolate(fn)(x)
    ours, lite = run_engines(compiled, tmp_path / "m.ptl", [x])
    assert_same(ours, expected)
    assert_same(lite, expected)


class Scripted(torch.nn.Module):
    """F.interpolate scripted: the .vec overloads, the output size folded from the static shape."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        return (F.interpolate(x, scale_factor=1.6, mode="bilinear", align_corners=False),
                F.interpolate(x, scale_factor=(0.7, 2.5), mode="nearest"),
                F.interpolate(x, size=[3, 10], mode="bilinear", align_corners=True),
                # recomputed: the size from the graph's own floor(in * scale), no scale to the kernel
                F.interpolate(x, scale_factor=2.7, mode="bilinear", recompute_scale_factor=True),
                F.interpolate(x, scale_factor=1.3, mode="nearest", recompute_scale_factor=True))


def test_scripted_interpolate_matches_torch_in_both_engines(tmp_path: Path) -> None:
    x = _input((2, 3, 9, 7))
    compiled = DEMO_BACKEND.preprocess(torch.jit.script(Scripted()), input_shapes={"forward": [spec_of(x)]})
    assert [ins.op for ins in compiled.programs[0].instructions].count(OpCode.RESIZE2D) == 5
    ours, lite = run_engines(compiled, tmp_path / "m.ptl", [x])
    assert_same(ours, Scripted()(x))
    assert_same(lite, Scripted()(x))


# the numpy kernel against ATen's ops directly, with the scales ATen maps with (including the
# identity and doubling shortcuts of its nearest index, which win over a given scale)
_SIZES_IN = [(4, 4), (5, 7), (1, 6), (13, 9)]
_SIZES_OUT = [(8, 8), (3, 2), (9, 14), (1, 1), (5, 7), (26, 18)]
_SCALES = [None, (1.3, 0.7), (2.1, 2.0), (1.05, 0.5)]


@pytest.mark.parametrize("bilinear,align_corners", [(False, False), (True, False), (True, True)])
def test_numpy_kernel_matches_aten(bilinear: bool, align_corners: bool) -> None:
    g = torch.Generator().manual_seed(0)
    for (h, w), (oh, ow), scales in itertools.product(_SIZES_IN, _SIZES_OUT, _SCALES):
        x = torch.randn(2, 3, h, w, generator=g) * 10
        sh, sw = scales or (None, None)
        attrs = ResizeAttrs(bilinear=bilinear, size=(oh, ow), align_corners=align_corners, scale_h=sh, scale_w=sw)
        if bilinear:
            expected = torch.ops.aten.upsample_bilinear2d(x, [oh, ow], align_corners, sh, sw).numpy()
        else:
            expected = torch.ops.aten.upsample_nearest2d(x, [oh, ow], sh, sw).numpy()
        got = make_resize2d(attrs, 1)(x.numpy())
        assert got.dtype == np.float32 and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, atol=scaled_atol(expected), rtol=1e-4,
                                   err_msg=f"{(h, w)} -> {(oh, ow)}, scales {scales}")


@pytest.mark.parametrize("kind,fn,shape", [
    ("aten::upsample_bicubic2d", lambda x: F.interpolate(x, size=(8, 8), mode="bicubic"), (1, 2, 4, 4)),
    ("aten::_upsample_bilinear2d_aa", lambda x: F.interpolate(x, size=(3, 3), mode="bilinear", antialias=True),
     (1, 2, 6, 6)),
    ("aten::_upsample_nearest_exact2d", lambda x: F.interpolate(x, size=(8, 8), mode="nearest-exact"), (1, 2, 4, 4)),
    ("aten::upsample_linear1d", lambda x: F.interpolate(x, size=8, mode="linear"), (1, 2, 4)),
    ("aten::upsample_nearest3d", lambda x: F.interpolate(x, size=(4, 4, 4), mode="nearest"), (1, 2, 2, 2, 2)),
])
def test_modes_not_compiled_are_unsupported_nodes_with_their_source(kind: str, fn: Interp,
                                                                    shape: tuple[int, ...]) -> None:
    traced = torch.jit.trace(Interpolate(fn), torch.rand(shape))
    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(traced, input_shapes={"forward": [spec_of(torch.rand(shape))]})
    assert list(info.value.counts) == [kind]
    assert info.value.reports[0].startswith(f"The node of {kind} is not supported")
    assert "test_resize.py" in info.value.reports[0]  # the source line of the interpolate call


@pytest.mark.parametrize("bilinear", [False, True])
def test_memory_budget_refuses_a_huge_resize_before_allocating_it(bilinear: bool, tmp_path: Path) -> None:
    """A 2x2 plane resized to 30000x30000 (3.6 GB): runtime_py's bound (memory.py) covers the result
    and bilinear's temporaries, so the budget stops it before the kernel runs."""
    program = one_op_program(OpCode.RESIZE2D, ResizeAttrs(bilinear, (30000, 30000)), [(1, 1, 2, 2)])
    path = tmp_path / "huge.ptl"
    write_bundle(CompiledModule("__torch__.m.M", (MethodSignature("forward", ("x",), False, 1),), (program,), (),
                                DebugTable(())), path)
    module = runtime_py.load(path, max_memory=1 << 30)
    with pytest.raises(RunLimitExceeded, match="RESIZE2D .* would allocate up to 3600000000 bytes" if not bilinear
                       else "RESIZE2D .* would allocate up to 14400960000 bytes"):
        module.forward(np.ones((1, 1, 2, 2), np.float32))
