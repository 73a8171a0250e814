"""Every demo kernel against torch (the oracle) on random inputs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from bundle_format.program import (
    Activation,
    AxisAttrs,
    BinaryAttrs,
    Conv2dAttrs,
    FlattenAttrs,
    FusedAttrs,
    GeluAttrs,
    LayerNormAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    ShapeAttrs,
)
from runtime_py.backends.demo.elementwise import make_gelu
from runtime_py.backends.demo.executor import run
from tests.runtime_py.backends.demo_backend_helpers import one_op_program, plan_of, run_op

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.torch_oracle

Shape = tuple[int, ...]


def randn(rng: np.random.Generator, shape: Shape, scale: float = 1.0) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape) * scale, dtype=np.float32)


def away_from_zero(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    """Divisors: magnitudes in [0.5, 2) so the quotient is well conditioned."""
    return np.asarray(rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape), dtype=np.float32)


def t(array: np.ndarray) -> Any:
    return torch.from_numpy(array.copy())


def assert_matches(ours: np.ndarray, expected: Any) -> None:
    expected = expected.detach().numpy()
    assert isinstance(ours, np.ndarray)
    assert ours.dtype == np.float32
    assert ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, atol=1e-5, rtol=1e-4)


# --- binary ---
# (id, op, attrs, shape of a, shape of b or None for the scalar form, torch reference)
BINARY_CASES: list[tuple[str, OpCode, BinaryAttrs, Shape, Shape | None, Callable[..., Any]]] = [
    ("add", OpCode.ADD, BinaryAttrs(), (2, 3), (2, 3), lambda a, b: a + b),
    ("add-broadcast", OpCode.ADD, BinaryAttrs(), (4, 1, 3), (2, 1), lambda a, b: a + b),
    ("add-alpha", OpCode.ADD, BinaryAttrs(alpha=2.5), (2, 3), (3,), lambda a, b: torch.add(a, b, alpha=2.5)),
    ("sub", OpCode.SUB, BinaryAttrs(), (5,), (2, 5), lambda a, b: a - b),
    (
        "sub-alpha",
        OpCode.SUB,
        BinaryAttrs(alpha=-3.0),
        (2, 3),
        (2, 3),
        lambda a, b: torch.sub(a, b, alpha=-3.0),
    ),
    (
        "rsub-alpha",
        OpCode.SUB,
        BinaryAttrs(alpha=0.5, reverse=True),
        (2, 3),
        (1, 3),
        lambda a, b: torch.rsub(a, b, alpha=0.5),
    ),
    ("mul-broadcast", OpCode.MUL, BinaryAttrs(), (3, 1, 4), (1, 5, 1), lambda a, b: a * b),
    ("div", OpCode.DIV, BinaryAttrs(), (2, 3), (2, 3), lambda a, b: a / b),
    ("div-reverse", OpCode.DIV, BinaryAttrs(reverse=True), (2, 3), (3,), lambda a, b: b / a),
    (
        "add-scalar-alpha",
        OpCode.ADD,
        BinaryAttrs(alpha=2.0, scalar=3.0),
        (2, 3),
        None,
        lambda a: torch.add(a, 3.0, alpha=2.0),
    ),
    ("sub-scalar", OpCode.SUB, BinaryAttrs(scalar=0.25), (4,), None, lambda a: a - 0.25),
    (
        "rsub-scalar",
        OpCode.SUB,
        BinaryAttrs(scalar=3.0, reverse=True),
        (2, 3),
        None,
        lambda a: torch.rsub(a, 3.0),
    ),
    (
        "rsub-scalar-alpha",
        OpCode.SUB,
        BinaryAttrs(alpha=2.0, scalar=1.0, reverse=True),
        (2, 3),
        None,
        lambda a: torch.rsub(a, 1.0, alpha=2.0),
    ),
    ("mul-scalar", OpCode.MUL, BinaryAttrs(scalar=-1.5), (2, 2, 2), None, lambda a: a * -1.5),
    ("div-scalar", OpCode.DIV, BinaryAttrs(scalar=3.0), (7,), None, lambda a: a / 3.0),
    ("rdiv-scalar", OpCode.DIV, BinaryAttrs(scalar=2.0, reverse=True), (2, 3), None, lambda a: 2.0 / a),
    ("add-0d", OpCode.ADD, BinaryAttrs(), (), (), lambda a, b: a + b),
]


@pytest.mark.parametrize(
    ("op", "attrs", "shape_a", "shape_b", "reference"),
    [case[1:] for case in BINARY_CASES],
    ids=[case[0] for case in BINARY_CASES],
)
def test_binary(
    rng: np.random.Generator,
    op: OpCode,
    attrs: BinaryAttrs,
    shape_a: Shape,
    shape_b: Shape | None,
    reference: Callable[..., Any],
) -> None:
    # divisions (either way round) get operands away from zero
    a = away_from_zero(rng, shape_a) if op == OpCode.DIV else randn(rng, shape_a)
    if shape_b is None:
        assert_matches(run_op(op, attrs, [a]), reference(t(a)))
    else:
        b = away_from_zero(rng, shape_b) if op == OpCode.DIV else randn(rng, shape_b)
        assert_matches(run_op(op, attrs, [a, b]), reference(t(a), t(b)))


# --- unary ---
UNARY_CASES: list[tuple[str, OpCode, Any, Callable[[Any], Any]]] = [
    ("neg", OpCode.NEG, None, torch.neg),
    ("relu", OpCode.RELU, None, F.relu),
    ("sigmoid", OpCode.SIGMOID, None, torch.sigmoid),
    ("tanh", OpCode.TANH, None, torch.tanh),
    ("gelu", OpCode.GELU, GeluAttrs(), F.gelu),
    ("gelu-default-attrs", OpCode.GELU, None, F.gelu),
    ("gelu-tanh", OpCode.GELU, GeluAttrs(tanh_approximation=True), lambda x: F.gelu(x, approximate="tanh")),
]
EXTREMES = np.array(
    [0.0, -0.0, 1e-8, -1e-8, 5.0, -5.0, 10.0, -10.0, 30.0, -30.0, 100.0, -100.0, 1e4, -1e4], dtype=np.float32
)


@pytest.mark.parametrize(
    ("op", "attrs", "reference"), [c[1:] for c in UNARY_CASES], ids=[c[0] for c in UNARY_CASES]
)
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4)])
def test_unary(
    rng: np.random.Generator, op: OpCode, attrs: Any, reference: Callable[[Any], Any], shape: Shape
) -> None:
    x = randn(rng, shape, scale=4.0)
    assert_matches(run_op(op, attrs, [x]), reference(t(x)))


@pytest.mark.parametrize(
    ("op", "attrs", "reference"), [c[1:] for c in UNARY_CASES], ids=[c[0] for c in UNARY_CASES]
)
def test_unary_extremes(op: OpCode, attrs: Any, reference: Callable[[Any], Any]) -> None:
    assert_matches(run_op(op, attrs, [EXTREMES]), reference(t(EXTREMES)))


def test_exact_gelu_is_accurate_everywhere() -> None:
    # against float64 erf on a dense grid (the tails included), well inside the parity bound
    x = np.linspace(-12, 12, 24001, dtype=np.float32)
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()])
    np.testing.assert_allclose(make_gelu(GeluAttrs(), 1)(x), expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("reuse_output", [False, True])
def test_exact_gelu_special_values(reuse_output: bool) -> None:
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30], dtype=np.float32)
    with np.errstate(all="ignore"):
        ours = make_gelu(GeluAttrs(), 1, reuse_output=reuse_output)(x)
    # torch's vectorized GELU gives NaN for +inf on AVX-512 but inf on AVX2 and in its scalar path;
    # its scalar path (one element at a time) is the same on every CPU, so that is the reference
    expected = np.array([F.gelu(t(x[i:i + 1])).item() for i in range(len(x))], dtype=np.float32)
    np.testing.assert_array_equal(ours, expected)  # inf, NaN (as torch), NaN, 0, -0, 1e30, 0
    assert np.signbit(ours[4])


def test_relu_keeps_nan() -> None:
    x = np.array([np.nan, -1.0, 1.0], dtype=np.float32)
    np.testing.assert_array_equal(run_op(OpCode.RELU, None, [x]), [np.nan, 0.0, 1.0])


# --- softmax ---
@pytest.mark.parametrize("op", [OpCode.SOFTMAX, OpCode.LOG_SOFTMAX])
@pytest.mark.parametrize(
    ("shape", "axis"), [((5,), 0), ((2, 3, 5), -1), ((2, 3, 5), 0), ((2, 3, 5), 1), ((4, 6), -2)]
)
@pytest.mark.parametrize("scale", [1.0, 100.0])
def test_softmax(rng: np.random.Generator, op: OpCode, shape: Shape, axis: int, scale: float) -> None:
    x = randn(rng, shape, scale)
    reference = F.softmax if op == OpCode.SOFTMAX else F.log_softmax
    assert_matches(run_op(op, AxisAttrs(axis), [x]), reference(t(x), dim=axis))


# --- linear algebra ---
@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)),
        ((5, 2, 3), (1, 3, 4)),
        ((2, 1, 2, 3), (4, 3, 2)),
        ((3,), (2, 3, 4)),
    ],
)
def test_matmul(rng: np.random.Generator, shape_a: Shape, shape_b: Shape) -> None:
    a, b = randn(rng, shape_a), randn(rng, shape_b)
    assert_matches(run_op(OpCode.MATMUL, None, [a, b]), torch.matmul(t(a), t(b)))


@pytest.mark.parametrize("x_shape", [(3, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("activation", [Activation.NONE, Activation.RELU])
def test_linear(rng: np.random.Generator, x_shape: Shape, bias: bool, activation: Activation) -> None:
    x, w, b = randn(rng, x_shape), randn(rng, (5, 4)), randn(rng, (5,))
    weights = [w, b] if bias else [w]
    expected = F.linear(t(x), t(w), t(b) if bias else None)
    if activation == Activation.RELU:
        expected = F.relu(expected)
    assert_matches(run_op(OpCode.LINEAR, FusedAttrs(activation), [x], weights), expected)


# --- convolution ---
# (id, x shape, weight shape, stride, padding, dilation, groups)
CONV_CASES: list[tuple[str, Shape, Shape, tuple[int, int], tuple[int, int], tuple[int, int], int]] = [
    ("plain", (1, 3, 8, 8), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ("stride-padding", (2, 3, 9, 7), (6, 3, 3, 3), (2, 2), (1, 1), (1, 1), 1),
    ("asymmetric", (2, 3, 9, 11), (5, 3, 2, 5), (1, 2), (0, 2), (1, 1), 1),
    ("dilation", (1, 2, 12, 12), (3, 2, 3, 3), (1, 1), (2, 2), (2, 3), 1),
    ("groups", (2, 4, 10, 10), (4, 2, 3, 3), (1, 2), (2, 1), (2, 1), 2),
    ("groups-wide", (1, 6, 7, 7), (9, 2, 3, 3), (1, 1), (1, 1), (1, 1), 3),
    ("depthwise", (1, 4, 8, 8), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1), 4),
    ("depthwise-multiplier", (2, 3, 7, 7), (6, 1, 3, 3), (2, 2), (1, 1), (1, 1), 3),
    ("depthwise-dilated", (1, 5, 9, 9), (5, 1, 3, 3), (2, 1), (2, 2), (2, 2), 5),
    # im2col in several channel chunks
    ("depthwise-large", (1, 40, 40, 40), (40, 1, 3, 3), (1, 1), (1, 1), (1, 1), 40),
    ("depthwise-large-strided", (2, 2, 101, 90), (4, 1, 5, 5), (2, 3), (2, 1), (1, 2), 2),
    ("pointwise", (2, 8, 5, 5), (16, 8, 1, 1), (1, 1), (0, 0), (1, 1), 1),
    ("pointwise-groups", (2, 8, 5, 5), (16, 4, 1, 1), (1, 1), (0, 0), (1, 1), 2),
    ("pointwise-stride", (1, 8, 6, 6), (4, 8, 1, 1), (2, 2), (0, 0), (1, 1), 1),
    ("pointwise-padding", (1, 2, 3, 3), (4, 2, 1, 1), (1, 1), (1, 1), (1, 1), 1),
    ("single-channel", (1, 1, 6, 6), (2, 1, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ("unbatched", (3, 8, 8), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
]


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "stride", "padding", "dilation", "groups"),
    [c[1:] for c in CONV_CASES],
    ids=[c[0] for c in CONV_CASES],
)
@pytest.mark.parametrize(("bias", "activation"), [(True, Activation.NONE), (False, Activation.RELU)])
def test_conv2d(
    rng: np.random.Generator,
    x_shape: Shape,
    w_shape: Shape,
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    groups: int,
    bias: bool,
    activation: Activation,
) -> None:
    x, w, b = randn(rng, x_shape), randn(rng, w_shape), randn(rng, (w_shape[0],))
    attrs = Conv2dAttrs(stride, padding, dilation, groups, activation)
    expected = F.conv2d(t(x), t(w), t(b) if bias else None, stride, padding, dilation, groups)
    if activation == Activation.RELU:
        expected = F.relu(expected)
    assert_matches(run_op(OpCode.CONV2D, attrs, [x], [w, b] if bias else [w]), expected)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "padding"),
    [((1, 32, 10, 10), (32, 32, 3, 3), (1, 1)), ((2, 40, 9, 8), (36, 40, 3, 3), (0, 1)),
     ((1, 33, 5, 12), (40, 33, 3, 3), (2, 0))],
    ids=["even", "odd", "asymmetric-padding"],
)
@pytest.mark.parametrize(("bias", "activation"), [(True, Activation.NONE), (False, Activation.RELU)])
def test_conv2d_winograd(
    rng: np.random.Generator, x_shape: Shape, w_shape: Shape, padding: tuple[int, int], bias: bool,
    activation: Activation,
) -> None:
    """3x3 stride-1 convolutions with 32x32 channels or more run as Winograd's F(2x2, 3x3). Its
    rounding error is a few ulp of the terms' magnitude, as im2col's; the weights are scaled as
    torch initializes them (1 / sqrt(fan_in)), so outputs are O(1) as in a network and the
    absolute tolerance means what it does for the other cases (with unit weights the outputs
    are ~20, where 1e-5 is 2 ulp)."""
    x, b = randn(rng, x_shape), randn(rng, (w_shape[0],))
    w = randn(rng, w_shape, 1 / float(np.sqrt(w_shape[1] * 9)))
    attrs = Conv2dAttrs((1, 1), padding, (1, 1), 1, activation)
    expected = F.conv2d(t(x), t(w), t(b) if bias else None, 1, padding)
    if activation == Activation.RELU:
        expected = F.relu(expected)
    assert_matches(run_op(OpCode.CONV2D, attrs, [x], [w, b] if bias else [w]), expected)


def test_conv2d_non_contiguous_input(rng: np.random.Generator) -> None:
    x = randn(rng, (1, 8, 8, 3)).transpose(0, 3, 1, 2)
    w = randn(rng, (4, 3, 3, 3))
    assert_matches(run_op(OpCode.CONV2D, None, [x], [w]), F.conv2d(t(x), t(w)))


# --- normalization ---
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3), (2, 3, 6)])
def test_channel_affine_is_inference_batch_norm(rng: np.random.Generator, shape: Shape) -> None:
    channels = shape[1]
    x = randn(rng, shape)
    mean, gamma, beta = randn(rng, (channels,)), randn(rng, (channels,)), randn(rng, (channels,))
    var = rng.uniform(0.5, 2.0, channels).astype(np.float32)
    eps = 1e-5
    scale = (gamma / np.sqrt(var + eps)).astype(np.float32)
    shift = (beta - mean * scale).astype(np.float32)
    expected = F.batch_norm(t(x), t(mean), t(var), t(gamma), t(beta), training=False, eps=eps)
    assert_matches(run_op(OpCode.CHANNEL_AFFINE, None, [x], [scale, shift]), expected)


@pytest.mark.parametrize(
    ("shape", "normalized_ndim"), [((2, 5, 6), 1), ((2, 5, 6), 2), ((7,), 1), ((3, 2, 4), 3), ((1, 64), 1)]
)
@pytest.mark.parametrize("params", ["none", "weight", "weight+bias"])
@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_layer_norm(
    rng: np.random.Generator, shape: Shape, normalized_ndim: int, params: str, eps: float
) -> None:
    x = randn(rng, shape, 3.0) + 1.0
    normalized = shape[len(shape) - normalized_ndim :]
    w, b = randn(rng, normalized), randn(rng, normalized)
    weights = {"none": [], "weight": [w], "weight+bias": [w, b]}[params]
    expected = F.layer_norm(
        t(x), normalized, t(w) if weights else None, t(b) if len(weights) == 2 else None, eps
    )
    assert_matches(run_op(OpCode.LAYER_NORM, LayerNormAttrs(normalized_ndim, eps), [x], weights), expected)


# --- pooling ---
# (id, x shape, kernel, stride, padding, dilation, ceil_mode)
MAX_POOL_CASES: list[
    tuple[str, Shape, tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int], bool]
] = [
    ("2x2", (1, 2, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ("3x3-s2-p1", (2, 3, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1), False),
    ("3x3-s2-p1-ceil", (2, 3, 10, 10), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ("ceil-partial-window", (1, 2, 5, 5), (2, 2), (2, 2), (0, 0), (1, 1), True),
    ("ceil-window-in-padding-dropped", (1, 1, 5, 5), (2, 2), (2, 2), (1, 1), (1, 1), True),
    ("asymmetric-dilated-ceil", (1, 1, 10, 7), (3, 2), (2, 1), (1, 1), (2, 1), True),
    ("dilated", (1, 2, 9, 9), (2, 3), (1, 2), (1, 1), (2, 2), False),
    ("overlapping", (1, 1, 6, 6), (3, 3), (1, 1), (1, 1), (1, 1), False),
    ("unbatched", (3, 8, 8), (2, 2), (2, 2), (1, 1), (1, 1), True),
]


@pytest.mark.parametrize(
    ("x_shape", "kernel", "stride", "padding", "dilation", "ceil_mode"),
    [c[1:] for c in MAX_POOL_CASES],
    ids=[c[0] for c in MAX_POOL_CASES],
)
def test_max_pool2d(
    rng: np.random.Generator,
    x_shape: Shape,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    ceil_mode: bool,
) -> None:
    # all negative: padding must never win the maximum
    x = -np.abs(randn(rng, x_shape)) - 1.0
    attrs = Pool2dAttrs(kernel, stride, padding, dilation, ceil_mode)
    expected = F.max_pool2d(t(x), kernel, stride, padding, dilation, ceil_mode)
    assert_matches(run_op(OpCode.MAX_POOL2D, attrs, [x]), expected)


def test_max_pool2d_propagates_nan(rng: np.random.Generator) -> None:
    x = randn(rng, (1, 1, 4, 4))
    x[0, 0, 1, 1] = np.nan
    ours = run_op(OpCode.MAX_POOL2D, Pool2dAttrs((2, 2), (2, 2)), [x])
    np.testing.assert_array_equal(np.isnan(ours), F.max_pool2d(t(x), 2).isnan().numpy())


# (id, x shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_POOL_CASES: list[
    tuple[str, Shape, tuple[int, int], tuple[int, int], tuple[int, int], bool, bool, int | None]
] = [
    ("2x2", (1, 2, 8, 8), (2, 2), (2, 2), (0, 0), False, True, None),
    ("ceil-include-pad", (2, 3, 9, 9), (3, 3), (2, 2), (1, 1), True, True, None),
    ("ceil-exclude-pad", (2, 3, 9, 9), (3, 3), (2, 2), (1, 1), True, False, None),
    ("ceil-overhang-include-pad", (1, 1, 6, 6), (3, 3), (2, 2), (1, 1), True, True, None),
    ("ceil-rule-include-pad", (1, 1, 5, 5), (2, 2), (2, 2), (1, 1), True, True, None),
    ("ceil-rule-exclude-pad", (1, 1, 5, 5), (2, 2), (2, 2), (1, 1), True, False, None),
    ("divisor-override", (1, 2, 7, 6), (3, 2), (2, 1), (1, 1), False, True, 3),
    ("divisor-override-ceil", (1, 2, 7, 6), (3, 2), (2, 1), (1, 1), True, False, 5),
    ("asymmetric-exclude-pad", (1, 2, 7, 6), (3, 2), (2, 3), (1, 0), True, False, None),
    ("unbatched", (3, 7, 7), (2, 2), (2, 2), (1, 1), True, False, None),
]


@pytest.mark.parametrize(
    ("x_shape", "kernel", "stride", "padding", "ceil_mode", "include_pad", "divisor"),
    [c[1:] for c in AVG_POOL_CASES],
    ids=[c[0] for c in AVG_POOL_CASES],
)
def test_avg_pool2d(
    rng: np.random.Generator,
    x_shape: Shape,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    ceil_mode: bool,
    include_pad: bool,
    divisor: int | None,
) -> None:
    x = randn(rng, x_shape)
    attrs = Pool2dAttrs(kernel, stride, padding, (1, 1), ceil_mode, include_pad, divisor)
    expected = F.avg_pool2d(t(x), kernel, stride, padding, ceil_mode, include_pad, divisor)
    plan = plan_of(one_op_program(OpCode.AVG_POOL2D, attrs, [None]))
    for _ in range(2):  # the second run divides by the cached divisor
        (ours,) = run(plan, [x])
        assert_matches(ours, expected)


@pytest.mark.parametrize(
    ("x_shape", "size"),
    [
        ((1, 2, 8, 8), (1, 1)),
        ((1, 2, 8, 8), (4, 2)),
        ((2, 3, 7, 9), (3, 4)),
        ((1, 1, 5, 5), (3, 3)),
        ((1, 1, 4, 10), (3, 7)),
        ((1, 2, 6, 6), (6, 6)),
        ((1, 1, 3, 3), (5, 5)),
        ((3, 10, 7), (4, 7)),
        ((1, 2, 224, 224), (7, 7)),
        ((1, 2, 225, 223), (7, 7)),
    ],
)
def test_adaptive_avg_pool2d(rng: np.random.Generator, x_shape: Shape, size: tuple[int, int]) -> None:
    x = randn(rng, x_shape) + 3.0  # an offset makes summed-area cancellation visible, if any
    expected = F.adaptive_avg_pool2d(t(x), size)
    assert_matches(run_op(OpCode.ADAPTIVE_AVG_POOL2D, ShapeAttrs(size), [x]), expected)


def test_adaptive_avg_pool2d_minus_one_keeps_the_input_size(rng: np.random.Generator) -> None:
    x = randn(rng, (1, 2, 6, 5))
    expected = F.adaptive_avg_pool2d(t(x), (3, None))
    assert_matches(run_op(OpCode.ADAPTIVE_AVG_POOL2D, ShapeAttrs((3, -1)), [x]), expected)


# --- layout ---
@pytest.mark.parametrize(
    ("shape", "perm"), [((2, 3, 4), (2, 0, 1)), ((3, 5), (1, 0)), ((2, 3, 4, 5), (0, 2, 3, 1))]
)
def test_transpose(rng: np.random.Generator, shape: Shape, perm: tuple[int, ...]) -> None:
    x = randn(rng, shape)
    assert_matches(run_op(OpCode.TRANSPOSE, PermuteAttrs(perm), [x]), t(x).permute(perm))


@pytest.mark.parametrize(
    ("shape", "dims"),
    [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((2, 3, 4), (4, -1, 2)), ((6,), (1, 6, 1)), ((1,), ())],
)
def test_reshape(rng: np.random.Generator, shape: Shape, dims: tuple[int, ...]) -> None:
    x = randn(rng, shape)
    assert_matches(run_op(OpCode.RESHAPE, ShapeAttrs(dims), [x]), t(x).reshape(dims))


def test_reshape_of_a_transposed_input_copies(rng: np.random.Generator) -> None:
    x = randn(rng, (3, 4)).T
    assert_matches(run_op(OpCode.RESHAPE, ShapeAttrs((12,)), [x]), t(x).reshape(12))


@pytest.mark.parametrize(
    ("shape", "start", "end"),
    [
        ((2, 3, 4, 5), 1, -1),
        ((2, 3, 4, 5), 0, 1),
        ((2, 3, 4, 5), -3, -2),
        ((2, 3, 4, 5), 0, -1),
        ((2, 3, 4, 5), 2, 2),
        ((), 0, -1),
        ((4,), 0, 0),
    ],
)
def test_flatten(rng: np.random.Generator, shape: Shape, start: int, end: int) -> None:
    x = randn(rng, shape)
    assert_matches(run_op(OpCode.FLATTEN, FlattenAttrs(start, end), [x]), torch.flatten(t(x), start, end))


@pytest.mark.parametrize(
    ("shapes", "axis"),
    [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 5)], -1), ([(1, 2, 3)], 1), ([(2, 2, 2), (2, 3, 2)], 1)],
)
def test_cat(rng: np.random.Generator, shapes: list[Shape], axis: int) -> None:
    xs = [randn(rng, shape) for shape in shapes]
    assert_matches(run_op(OpCode.CAT, AxisAttrs(axis), xs), torch.cat([t(x) for x in xs], axis))


def test_exact_gelu_buffers_only_when_the_plan_allows() -> None:
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    expected = F.gelu(t(x)).numpy()
    kept = make_gelu(GeluAttrs(), 1, reuse_output=True)
    first = kept(x)
    assert kept(-x) is first  # written in place: the plan only asks for this when it never escapes
    np.testing.assert_allclose(kept(x), expected, atol=1e-6)
    fresh = make_gelu(GeluAttrs(), 1)
    a = fresh(x)
    b = fresh(-x)
    assert a is not b
    np.testing.assert_allclose(a, expected, atol=1e-6)
