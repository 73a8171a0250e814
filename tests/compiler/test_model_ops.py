"""Ops issue 33 lists as refused that models use, compiled as the ops they are made of
(liteexport/compiler/composite_ops.py): conv_transpose1d/2d (strides, padding, output_padding,
dilation, groups; constant and run-time weights), prod (a dim, all, keepdim; float32 and int64 as
torch computes it), nearest 1-d upsampling, sort (values and indices, stable, descending, ties and
NaN), scatter, scatter_add and index_put into an ordinary tensor (constant and run-time indices),
and floor/ceil/trunc/round, relu and sign of integers, in integers. Each on both front ends against
eager torch on runtime_py, the native core and torch's lite interpreter with liteexport's backend:
integers and indices exactly, floats within the parity tolerance."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile  # noqa: F401 - the lite interpreter runs the bundles
import torch.nn.functional as F  # noqa: N812 - torch's own spelling

import liteexport
import liteexport.torch_backend as tb
import runtime_py
from tests.frontend_export.test_opinfo_parity import _tool
from tests.text_models.typed import assert_same, run_native

pytestmark = pytest.mark.torch_oracle

Op = Callable[[torch.Tensor], object]


def _floats(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def _ties(*shape: int) -> torch.Tensor:
    """Few distinct values (ties in every row), a NaN, infinities and a -0.0."""
    x = torch.randint(-2, 3, shape, generator=torch.Generator().manual_seed(1)).float()
    x.view(-1)[[1, 5, 9, 14]] = torch.tensor([float("nan"), float("inf"), -0.0, float("-inf")])
    return x


def _ints(*shape: int) -> torch.Tensor:
    return torch.randint(-4, 5, shape, generator=torch.Generator().manual_seed(2))


_W = _floats(4, 3, 3, 3, seed=3)  # conv_transpose2d's [in, out / groups, kh, kw]
_B = _floats(3, seed=4)
_WG = _floats(6, 2, 3, 2, seed=5)  # groups=3: 6 in, 6 out
_W1 = _floats(4, 5, 3, seed=6)
_IDX = torch.tensor([[0, 2, 2, 5], [1, 1, 1, 1], [5, 4, 3, 2], [0, 0, 0, 0]])
_IDX0 = torch.tensor([[0, 2, 3, 1, 0, 2], [3, 3, 0, 1, 2, 2]])
_SRC = _floats(4, 6, seed=7)

# name -> (op, input)
CASES: dict[str, tuple[Op, torch.Tensor]] = {
    "conv_transpose2d": (lambda x: F.conv_transpose2d(x, _W, _B), _floats(2, 4, 5, 6)),
    "conv_transpose2d_stride2_pad1_out1": (
        lambda x: F.conv_transpose2d(x, _W, _B, stride=2, padding=1, output_padding=1), _floats(1, 4, 5, 6)),
    "conv_transpose2d_mixed": (
        lambda x: F.conv_transpose2d(x, _W, None, stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                     dilation=(1, 2)), _floats(2, 4, 4, 5)),
    "conv_transpose2d_crop": (  # padding beyond dilation * (k - 1): the output is cropped
        lambda x: F.conv_transpose2d(x, _W, _B, stride=3, padding=4, dilation=2), _floats(1, 4, 6, 6)),
    "conv_transpose2d_groups": (
        lambda x: F.conv_transpose2d(x, _WG, None, stride=2, padding=1, groups=3), _floats(1, 6, 5, 4)),
    "conv_transpose2d_unbatched": (lambda x: F.conv_transpose2d(x, _W, _B, stride=2), _floats(4, 3, 5)),
    "conv_transpose1d": (
        lambda x: F.conv_transpose1d(x, _W1, None, stride=2, padding=1, output_padding=1), _floats(2, 4, 7)),
    "prod_dim": (lambda x: x.prod(1), _floats(3, 5, 4)),
    "prod_keepdim": (lambda x: torch.prod(x, -1, keepdim=True), _floats(3, 5, 7)),
    "prod_all": (lambda x: x.prod(), _floats(3, 5, 2) * 0.5 + 1),
    "prod_int64": (lambda x: x.prod(0), _ints(9, 4)),
    "prod_int64_all": (lambda x: x.prod(), _ints(3, 7)),
    "prod_bool": (lambda x: (x > -3).prod(1), _ints(3, 7)),
    "upsample_nearest1d_scale": (lambda x: F.interpolate(x, scale_factor=2.0), _floats(2, 3, 5)),
    "upsample_nearest1d_size": (lambda x: F.interpolate(x, size=12, mode="nearest"), _floats(2, 3, 5)),
    "upsample_nearest1d_down": (lambda x: F.interpolate(x, scale_factor=0.6), _floats(2, 3, 9)),
    "sort": (lambda x: torch.sort(x, 1), _ties(4, 6)),
    "sort_descending": (lambda x: torch.sort(x, 0, descending=True), _ties(4, 6)),
    "sort_stable": (lambda x: torch.sort(x, dim=-1, descending=True, stable=True), _ties(3, 8)),
    "sort_int64": (lambda x: torch.sort(x, dim=1, stable=True), _ints(4, 9)),
    "sort_bool": (lambda x: torch.sort(x > 0, dim=1, descending=True, stable=True), _ints(4, 9)),
    # a constant index (repeated positions: the last write wins, as torch's CPU kernel)
    "scatter": (lambda x: x.scatter(1, _IDX, _SRC), _floats(4, 6)),
    "scatter_value": (lambda x: x.scatter(1, _IDX, 2.5), _floats(4, 6)),
    "scatter_add": (lambda x: x.scatter_add(1, _IDX, _SRC), _floats(4, 6)),
    "scatter_add_smaller_index": (lambda x: x.scatter_add(0, _IDX0[:, :4], _SRC), _floats(4, 6)),
    "scatter_reduce_add": (lambda x: x.scatter(1, _IDX, _SRC, reduce="add"), _floats(4, 6)),
    "scatter_add_int64": (lambda x: x.scatter_add(0, _IDX0, x * 3), _ints(4, 6)),
    "index_put": (lambda x: x.index_put((torch.tensor([0, -1, 2, 0]),), torch.arange(24.0).reshape(4, 6)),
                  _floats(5, 6)),
    # integers stay integers, as torch computes them
    "rounding_int64": (lambda x: torch.floor(x) + torch.ceil(x) * 2 + torch.trunc(x) * 3 + torch.round(x) * 5,
                       _ints(3, 7)),
    "relu_int64": (lambda x: torch.relu(x) * 3, _ints(3, 7)),
    "relu_sign_int32": (lambda x: torch.relu(x) + torch.sign(x) * 10, _ints(3, 7).int()),
    "sign_int64_bool": (lambda x: (torch.sign(x), torch.sign(x > 0)), _ints(3, 7)),
}
# run-time weights and indices: name -> (op, inputs)
RUN_TIME: dict[str, tuple[Callable[..., object], tuple[torch.Tensor, ...]]] = {
    # a run-time weight, flipped and swapped by instructions
    "conv_transpose2d_weight": (lambda x, w: F.conv_transpose2d(x, w, None, stride=2, padding=1, groups=3),
                                (_floats(1, 6, 5, 4), _WG)),
    "conv_transpose1d_weight": (lambda x, w: F.conv_transpose1d(x, w, None, stride=3, output_padding=2),
                                (_floats(2, 4, 7), _W1)),
    "scatter_index": (lambda x, i: x.scatter(0, i, _SRC), (_floats(4, 6), torch.tensor([[0, 2, 3, 1, 0, 2],
                                                                                       [3, 3, 0, 1, 2, 2]]))),
    "scatter_add_index": (lambda x, i, s: x.scatter_add(1, i, s), (_floats(4, 6), torch.tensor([[0, 2, 2, 5]] * 4),
                                                                    _floats(4, 4, seed=8))),
    "index_put_accumulate": (lambda x, i, v: torch.ops.aten.index_put(x, [None, i], v, True),
                             (_floats(4, 6), torch.tensor([1, 1, -2]), _floats(4, 3, seed=9))),
    "index_put_scalar": (lambda x, i: x.index_put((i,), torch.tensor(0.0)), (_floats(4, 6), torch.tensor([3, 0]))),
}


class Wrapped(torch.nn.Module):
    def __init__(self, op: Callable[..., object]) -> None:
        super().__init__()
        self.op = op

    def forward(self, x: torch.Tensor) -> object:
        return self.op(x)


class Wrapped2(Wrapped):  # the front ends name a method's inputs: no *args
    def forward(self, x: torch.Tensor, i: torch.Tensor) -> object:  # type: ignore[override]
        return self.op(x, i)


class Wrapped3(Wrapped):
    def forward(self, x: torch.Tensor, i: torch.Tensor, v: torch.Tensor) -> object:  # type: ignore[override]
        return self.op(x, i, v)


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("name", sorted(CASES) + sorted(RUN_TIME))
def test_op_matches_torch_on_every_engine(name: str, frontend: str, tmp_path: Path) -> None:
    op, inputs = (CASES[name][0], (CASES[name][1],)) if name in CASES else RUN_TIME[name]
    model, path = (Wrapped, Wrapped2, Wrapped3)[len(inputs) - 1](op), tmp_path / "op.ptl"
    # the TorchScript front end takes the model traced (a lambda cannot be scripted)
    given = torch.jit.trace(model, inputs) if frontend == "torchscript" else model
    liteexport.export(given, path, example_inputs=[inputs], check=False)
    with torch.no_grad():
        result = model(*inputs)
    expected = [t.numpy() for t in (result if isinstance(result, tuple) else (result,))]
    arrays = [t.numpy() for t in inputs]
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path)).run_method("forward", *inputs)
    for engine, got in (("runtime_py", runtime_py.load(path).forward(*arrays)),
                        ("native", run_native(path, arrays, _tool())),
                        ("torch backend", [t.numpy() for t in (lite if isinstance(lite, tuple) else (lite,))])):
        try:
            assert_same(got, expected)
        except AssertionError as exc:
            raise AssertionError(f"{engine}: {exc}") from exc


def test_sort_keeps_ties_in_index_order_and_nan_as_the_largest(tmp_path: Path) -> None:
    """The values above could match with the ties' indices swapped; these say which index comes
    first: torch's stable sort keeps equal values (0.0 and -0.0 too) in index order both ways."""
    x = torch.tensor([[1.0, float("nan"), 0.0, 1.0, -0.0, float("nan"), -1.0]])
    path = tmp_path / "sort.ptl"
    liteexport.export(Wrapped(lambda v: torch.sort(v, descending=True, stable=True)[1]), path,
                      input_shapes=[(1, 7)], check=False)
    got = runtime_py.load(path).forward(x.numpy())
    np.testing.assert_array_equal(got, [[1, 5, 0, 3, 2, 4, 6]])
    np.testing.assert_array_equal(got, torch.sort(x, descending=True, stable=True)[1].numpy())


def test_conv_transpose_with_a_constant_weight_is_stride_squared_convolutions_of_the_input() -> None:
    """Not a convolution over an input spaced with zeros (stride**2 times the multiply-adds): one
    CONV2D per output phase, each over x itself with the phase's taps (2 x 2 of the 4 x 4 kernel)."""
    from bundle_format.program import OpCode
    from liteexport.compiler.exported import compile_exported

    weight = _floats(4, 3, 4, 4, seed=10)
    module = Wrapped(lambda x: F.conv_transpose2d(x, weight, None, stride=2, padding=1))
    program = compile_exported(torch.export.export(module, (_floats(1, 4, 5, 6),))).programs[0]
    convs = [i for i in program.instructions if i.op == OpCode.CONV2D]
    assert len(convs) == 4 and OpCode.WHERE not in {i.op for i in program.instructions}
    assert {(c.attributes.stride, c.attributes.padding) for c in convs} == {((1, 1), (1, 1))}  # 2 taps: pad 1


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
def test_conv_transpose_modules_as_users_write_them(frontend: str, tmp_path: Path) -> None:
    """nn.ConvTranspose1d/2d in a model (scripted whole on the TorchScript front end: forward's
    output_size=None branch resolved at export), a decoder's upsampling path."""
    model = torch.nn.Sequential(torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
                                torch.nn.ReLU(),
                                torch.nn.ConvTranspose2d(6, 2, 4, stride=2, padding=1, groups=2)).eval()
    x, path = _floats(1, 4, 5, 7), tmp_path / "decoder.ptl"
    liteexport.export(model, path, example_inputs=[(x,)], frontend=frontend)
    with torch.no_grad():
        expected = model(x).numpy()
    assert expected.shape == (1, 2, 20, 28)
    assert_same(runtime_py.load(path).forward(x.numpy()), expected)
    assert_same(run_native(path, [x.numpy()], _tool()), [expected])
