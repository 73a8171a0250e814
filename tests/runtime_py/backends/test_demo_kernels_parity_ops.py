"""The demo kernels of the opcodes added for real models (tests/parity/op_cases.py) against
torch (the oracle) on random inputs, extremes and NaN."""

from __future__ import annotations

import numpy as np
import pytest

from bundle_format.program import ClampAttrs, OpCode, ReduceAttrs, ShapeAttrs, SliceAttrs
from tests.parity.op_cases import OP_CASES
from tests.runtime_py.backends.demo_backend_helpers import run_op

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.torch_oracle


def assert_matches(ours: np.ndarray, expected: object) -> None:
    want = expected.detach().numpy()  # type: ignore[attr-defined]
    assert isinstance(ours, np.ndarray) and ours.dtype == np.float32
    assert ours.shape == want.shape
    np.testing.assert_allclose(ours, want, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_op_matches_torch(name: str) -> None:
    op, shapes, weights, attrs, reference = OP_CASES[name]
    rng = np.random.default_rng(5)
    inputs = [(rng.standard_normal(s) * 3).astype(np.float32) for s in shapes]
    expected = reference(*[torch.from_numpy(a.copy()) for a in [*inputs, *weights]])
    assert_matches(run_op(op, attrs, inputs, weights), expected)


EXTREMES = np.array([-1e30, -100.0, -3.0, -2.9999, -1e-30, -0.0, 0.0, 1e-30, 2.9999, 3.0, 100.0, 1e30,
                     np.inf, -np.inf], dtype=np.float32)


@pytest.mark.parametrize(("op", "reference"), [
    (OpCode.HARDSIGMOID, F.hardsigmoid), (OpCode.HARDSWISH, F.hardswish), (OpCode.SILU, F.silu),
    (OpCode.EXP, torch.exp)])
def test_activation_extremes(op: OpCode, reference: object) -> None:
    assert_matches(run_op(op, None, [EXTREMES]), reference(torch.from_numpy(EXTREMES.copy())))  # type: ignore[operator]


@pytest.mark.parametrize("attrs", [ClampAttrs(-1.0, 1.0), ClampAttrs(min=0.0, max=None), ClampAttrs(min=None, max=0.0)])
def test_clamp_keeps_nan(attrs: ClampAttrs) -> None:
    x = np.array([np.nan, -2.0, 2.0], dtype=np.float32)
    expected = torch.clamp(torch.from_numpy(x.copy()), attrs.min, attrs.max)
    np.testing.assert_array_equal(run_op(OpCode.CLAMP, attrs, [x]), expected.numpy())


def test_mean_of_an_empty_axis_is_nan_like_torch() -> None:
    x = np.zeros((2, 0, 3), dtype=np.float32)
    got = run_op(OpCode.MEAN, ReduceAttrs((1,)), [x])
    np.testing.assert_array_equal(got, torch.from_numpy(x).mean(1).numpy())


def test_slice_returns_a_view_and_the_plan_copies_weight_outputs() -> None:
    weight = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = run_op(OpCode.SLICE, SliceAttrs(0, 1, 3), [], [weight])
    np.testing.assert_array_equal(out, weight[1:3])


@pytest.mark.parametrize(("attrs", "shape", "message"), [
    (SliceAttrs(4, 0, 1), (2, 3), "axis 4 is out of range"),
    (ReduceAttrs((2,)), (2, 3), "axis 2 is out of range"),
    (ReduceAttrs((1, -1)), (2, 3), "name an axis twice"),
    (ShapeAttrs((3, 4)), (2, 4), r"cannot expand shape \(2, 4\) to \(3, 4\)"),
    (ShapeAttrs((4,)), (2, 4), "fewer dims"),
    (ShapeAttrs((-1, 2, 4)), (2, 4), "-1 in a new leading dim"),
])
def test_bad_inputs_are_input_errors(attrs: object, shape: tuple[int, ...], message: str) -> None:
    # run_op's program declares no input shape: the kernel is the input's check (INPUT_UNFIT, exit 6)
    from runtime_py.errors import InputError

    op = {SliceAttrs: OpCode.SLICE, ReduceAttrs: OpCode.SUM, ShapeAttrs: OpCode.EXPAND}[type(attrs)]
    with pytest.raises(InputError, match=message) as info:
        run_op(op, attrs, [np.ones(shape, np.float32)])  # type: ignore[arg-type]
    assert info.value.code == "INPUT_UNFIT" and info.value.fields["index"] == "0"


@pytest.mark.parametrize(("op", "attrs", "message"), [
    (OpCode.CLAMP, ClampAttrs(None, None), "at least one of min and max"),
    (OpCode.MEAN, ReduceAttrs((1, 1)), "repeat an axis"),
    (OpCode.SLICE, SliceAttrs(0, 0, 1, 0), "step must be positive"),
    (OpCode.EXPAND, ShapeAttrs((-2, 3)), "may hold -1"),
])
def test_bad_attributes_are_format_errors(op: OpCode, attrs: object, message: str) -> None:
    from runtime_py.errors import FormatError

    with pytest.raises(FormatError, match=message):
        run_op(op, attrs, [np.ones((2, 3), np.float32)])  # type: ignore[arg-type]
