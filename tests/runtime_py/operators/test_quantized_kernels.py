"""runtime_py's quantized kernels against torch's quantized operators (qnnpack engine) on random
inputs: per-tensor and per-channel weights, quint8 and qint8 activations. Results are compared
as integers with the same scale and zero point: within one quantum (qnnpack's paths give the
same integers; torch's generic kernels may round a value a quantum apart)."""

from __future__ import annotations

import platform
from typing import Any

import numpy as np
import pytest

from bundle_format.ptmf import ScalarType
from runtime_py.errors import ExecutionError
from runtime_py.operators import OPERATORS, bind
from runtime_py.operators.packed_params import conv2d_from_state
from runtime_py.quantized_tensor import QuantizedTensor

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch_oracle

# qnnpack's x86 kernels (SSE2) give exactly these integers; other machines' may round a tie apart
EXACT = 0 if platform.machine() in ("x86_64", "AMD64") else 1
SCALAR_TYPES = {torch.qint8: ScalarType.QINT8, torch.quint8: ScalarType.QUINT8, torch.qint32: ScalarType.QINT32}


@pytest.fixture(autouse=True)
def qnnpack() -> Any:
    previous = torch.backends.quantized.engine
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    yield
    torch.backends.quantized.engine = previous


def ours(q: torch.Tensor) -> QuantizedTensor:
    """torch's quantized tensor as runtime_py holds one."""
    values, scalar_type = q.int_repr().numpy(), SCALAR_TYPES[q.dtype]
    if q.qscheme() == torch.per_tensor_affine:
        return QuantizedTensor(values, scalar_type, q.q_scale(), q.q_zero_point())
    return QuantizedTensor(values, scalar_type, scales=q.q_per_channel_scales().numpy(),
                           zero_points=q.q_per_channel_zero_points().numpy(), axis=q.q_per_channel_axis())


def call(key: str, *args: Any) -> Any:
    """Operator ``key`` run as a bundle's call site runs it (its registered kernel, dispatch included)."""
    stack = list(args)
    bind(OPERATORS[key], len(args))(stack)
    return stack.pop()


def assert_same(mine: Any, theirs: torch.Tensor, quanta: int = 1) -> int:
    """Same type, scale and zero point, integers within ``quanta``; returns the largest difference."""
    assert isinstance(mine, QuantizedTensor) and mine.scalar_type == SCALAR_TYPES[theirs.dtype]
    assert mine.shape == tuple(theirs.shape)
    assert np.float32(mine.scale) == np.float32(theirs.q_scale()) and mine.zero_point == theirs.q_zero_point()
    diff = int(np.abs(mine.int_repr.astype(np.int64) - theirs.int_repr().numpy().astype(np.int64)).max(initial=0))
    assert diff <= quanta, f"{diff} quanta apart"
    return diff


def qrand(shape: tuple[int, ...], dtype: Any = torch.quint8, scale: float = 0.05, zero_point: int = 120) -> Any:
    zero_point = zero_point if dtype == torch.quint8 else zero_point - 128
    return torch.quantize_per_tensor(torch.randn(shape) * 2, scale, zero_point, dtype)


def qweight(shape: tuple[int, ...], per_channel: bool) -> Any:
    w = torch.randn(shape) * 0.2
    if not per_channel:
        return torch.quantize_per_tensor(w, 0.004, 3, torch.qint8)
    scales = torch.rand(shape[0], dtype=torch.double) * 0.005 + 0.001
    return torch.quantize_per_channel(w, scales, torch.randint(-5, 5, (shape[0],)), 0, torch.qint8)


# ---- quantize / dequantize -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
def test_quantize_per_tensor_rounds_half_to_even_as_torch(dtype: Any) -> None:
    scale, zero_point = 0.0625, 5  # a power of two: x / scale lands exactly on the ties
    x = torch.cat([(torch.arange(-300, 300) + 0.5) * scale, torch.randn(1000) * 10,
                   torch.tensor([float("inf"), -float("inf")])]).float()
    mine = call("aten::quantize_per_tensor", x.numpy(), scale, zero_point, SCALAR_TYPES[dtype])
    assert_same(mine, torch.quantize_per_tensor(x, scale, zero_point, dtype), quanta=EXACT)


def test_quantize_per_channel_matches_torch() -> None:
    x, scales, zero_points = torch.randn(5, 3, 4) * 3, torch.rand(3, dtype=torch.double) * 0.1 + 0.01, torch.arange(3)
    theirs = torch.quantize_per_channel(x, scales, zero_points, 1, torch.qint8)
    mine = call("aten::quantize_per_channel", x.numpy(), scales.numpy(), zero_points.numpy(), 1, ScalarType.QINT8)
    np.testing.assert_array_equal(mine.int_repr, theirs.int_repr().numpy())
    np.testing.assert_array_equal(mine.dequantize(), theirs.dequantize().numpy())


def test_output_parameters_are_checked() -> None:
    with pytest.raises(ExecutionError, match=r"quantized::add_relu: output scale 0.1 and zero point 300 are not those "
                                             r"of a QUInt8 tensor \(a positive scale, a zero point in \[0, 255\]\)"):
        call("quantized::add_relu", ours(qrand((3,))), ours(qrand((3,))), 0.1, 300)


def test_dequantize_matches_torch_per_tensor_and_per_channel() -> None:
    for q in (qrand((3, 4, 5)), qweight((6, 3, 2, 2), per_channel=True)):
        np.testing.assert_array_equal(call("aten::dequantize.self", ours(q)), q.dequantize().numpy())
    assert call("aten::q_scale", ours(qrand((2,)))) == pytest.approx(0.05)


# ---- convolution and linear ----------------------------------------------------------------------

@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize(("channels", "out", "groups", "stride", "padding", "dilation", "kernel"), [
    (4, 6, 1, 1, 1, 1, 3), (6, 6, 6, 2, 1, 1, 3), (6, 6, 6, 1, 2, 1, 5), (4, 8, 2, 1, 0, 2, 3), (3, 5, 1, 2, 3, 1, 7),
], ids=["plain", "depthwise", "depthwise5x5", "grouped_dilated", "strided_7x7"])
@pytest.mark.parametrize("relu", [False, True], ids=["", "relu"])
def test_conv2d_matches_qnnpack(per_channel: bool, channels: int, out: int, groups: int, stride: int, padding: int,
                                dilation: int, kernel: int, relu: bool) -> None:
    x = qrand((2, channels, 11, 9))
    w = qweight((out, channels // groups, kernel, kernel), per_channel)
    bias = torch.randn(out)
    window = ([stride] * 2, [padding] * 2, [dilation] * 2)
    packed = torch.ops.quantized.conv2d_prepack(w, bias, *window, groups)
    theirs = (torch.ops.quantized.conv2d_relu if relu else torch.ops.quantized.conv2d)(x, packed, 0.07, 100)
    mine_packed = call("quantized::conv2d_prepack", ours(w), bias.numpy(), *window, groups)
    mine = call("quantized::conv2d_relu.new" if relu else "quantized::conv2d.new", ours(x), mine_packed, 0.07, 100)
    assert_same(mine, theirs)


def test_conv2d_and_linear_take_quint8_activations_only_as_qnnpack() -> None:
    x = qrand((1, 2, 5, 5), torch.qint8)
    packed = torch.ops.quantized.conv2d_prepack(qweight((3, 2, 3, 3), False), None, [1, 1], [0, 0], [1, 1], 1)
    with pytest.raises(RuntimeError, match="QUInt8"):
        torch.ops.quantized.conv2d(x, packed, 0.1, 0)
    mine_packed = call("quantized::conv2d_prepack", ours(qweight((3, 2, 3, 3), False)), None, [1, 1], [0, 0], [1, 1], 1)
    with pytest.raises(ExecutionError, match="quantized::conv2d: qnnpack takes quint8 activations, got QInt8"):
        call("quantized::conv2d.new", ours(x), mine_packed, 0.1, 0)
    linear = call("quantized::linear_prepack", ours(qweight((3, 5), False)), None)
    with pytest.raises(ExecutionError, match="quantized::linear: qnnpack takes quint8"):
        call("quantized::linear", ours(qrand((2, 5), torch.qint8)), linear, 0.1, 0)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("relu", [False, True], ids=["", "relu"])
def test_linear_matches_qnnpack(per_channel: bool, relu: bool) -> None:
    x, w, bias = qrand((3, 4, 40)), qweight((17, 40), per_channel), torch.randn(17)
    theirs = (torch.ops.quantized.linear_relu if relu else torch.ops.quantized.linear)(
        x, torch.ops.quantized.linear_prepack(w, bias), 0.09, 60)
    packed = call("quantized::linear_prepack", ours(w), bias.numpy())
    assert_same(call("quantized::linear_relu" if relu else "quantized::linear", ours(x), packed, 0.09, 60), theirs)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_linear_dynamic_matches_qnnpack(per_channel: bool) -> None:
    x, w, bias = torch.randn(5, 33) * 3 + 1, qweight((9, 33), per_channel), torch.randn(9)
    theirs = torch.ops.quantized.linear_dynamic(x, torch.ops.quantized.linear_prepack(w, bias)).numpy()
    mine = call("quantized::linear_dynamic", x.numpy(), call("quantized::linear_prepack", ours(w), bias.numpy()))
    assert mine.dtype == np.float32
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-5)


# ---- elementwise ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("dtype", "shape_b"), [(torch.quint8, (2, 3, 4, 5)), (torch.quint8, (1, 3, 1, 1)),
                                                 (torch.qint8, (2, 3, 4, 5))], ids=["qnnpack", "broadcast", "qint8"])
@pytest.mark.parametrize("name", ["add", "add_relu", "mul"])
def test_binary_ops_match_torch(name: str, dtype: Any, shape_b: tuple[int, ...]) -> None:
    a = qrand((2, 3, 4, 5), dtype, 0.05, 130)
    b = qrand(shape_b, dtype, 0.11, 90)
    theirs = getattr(torch.ops.quantized, name)(a, b, 0.08, 110 if dtype == torch.quint8 else -5)
    assert_same(call(f"quantized::{name}", ours(a), ours(b), 0.08, 110 if dtype == torch.quint8 else -5), theirs)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_cat_requantizes_each_input_as_torch(dtype: Any) -> None:
    xs = [qrand((1, 2, 3, 3), dtype, 0.05, 120), qrand((1, 4, 3, 3), dtype, 0.21, 100), qrand((1, 1, 3, 3), dtype)]
    theirs = torch.ops.quantized.cat(xs, 1, 0.1, 127 if dtype == torch.quint8 else 0)
    assert_same(call("quantized::cat", [ours(x) for x in xs], 1, 0.1, 127 if dtype == torch.quint8 else 0), theirs)
    assert_same(call("quantized::cat", [ours(x) for x in xs[:1]], 0, None, None),
                torch.ops.quantized.cat(xs[:1], 0, None, None))


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_activations_match_torch(dtype: Any) -> None:
    x = qrand((2, 3, 5, 7), dtype, 0.04, 128)
    zero_point = 20 if dtype == torch.quint8 else -100
    assert_same(call("quantized::hardswish", ours(x), 0.03, zero_point),
                torch.ops.quantized.hardswish(x, 0.03, zero_point))
    assert_same(call("aten::hardsigmoid", ours(x)), torch.nn.functional.hardsigmoid(x))
    assert_same(call("aten::sigmoid", ours(x)), torch.sigmoid(x))
    # qnnpack's sigmoid (quint8) takes its fixed output parameters only, torch's generic one (qint8) any
    sigmoid_params = (1 / 256, 0) if dtype == torch.quint8 else (0.002, -3)
    assert_same(call("quantized::sigmoid", ours(x), *sigmoid_params), torch.ops.quantized.sigmoid(x, *sigmoid_params))
    if dtype == torch.quint8:
        with pytest.raises(RuntimeError, match="only output scale of 1/256 is supported|QNNPACK sigmoid"):
            torch.ops.quantized.sigmoid(x, 0.002, 3)
        with pytest.raises(ExecutionError, match="quantized::sigmoid: qnnpack takes the output scale 1/256"):
            call("quantized::sigmoid", ours(x), 0.002, 3)
    assert_same(call("aten::relu", ours(x)), torch.relu(x), quanta=0)
    assert_same(call("quantized::relu6", ours(x), False), torch.ops.quantized.relu6(x), quanta=0)


# ---- pooling and shapes ---------------------------------------------------------------------------

@pytest.mark.parametrize(("kernel", "stride", "padding"), [([3], [1], [1]), ([2], [2], [0]), ([3], [2], [1]),
                                                        ([3, 2], [3, 2], [0]), ([5, 3], [1], [2, 1])])
def test_avg_pool2d_matches_qnnpack(kernel: list[int], stride: list[int], padding: list[int]) -> None:
    # many scales and zero points: qnnpack's rescale of a window's sum (input_scale / (output_scale * size))
    # and 1 / size round a tie apart for some of them
    for scale, zero_point in ((0.05, 120), (0.0137, 3), (0.31, 250), (0.0021, 77)):
        x = qrand((1, 5, 9, 8), scale=scale, zero_point=zero_point)
        theirs = torch.nn.functional.avg_pool2d(x, kernel, stride, padding)
        assert_same(call("aten::avg_pool2d", ours(x), kernel, stride, padding), theirs, quanta=EXACT)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize(("ceil_mode", "count_include_pad", "divisor_override"),
                         [(False, True, None), (True, True, None), (False, False, None), (True, False, 5)])
def test_avg_pool2d_options_match_torch(dtype: Any, ceil_mode: bool, count_include_pad: bool,
                                        divisor_override: int | None) -> None:
    # qint8, and quint8 in ceil mode, take torch's generic kernel; quint8 otherwise qnnpack's, which
    # ignores count_include_pad and divisor_override as torch does
    x = qrand((2, 3, 8, 7), dtype, 0.0137, 200)
    args = ([3, 2], [2], [1, 1], ceil_mode, count_include_pad, divisor_override)
    theirs = torch.nn.functional.avg_pool2d(x, *args)
    assert_same(call("aten::avg_pool2d", ours(x), *args), theirs)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("output_size", [(1, 1), (2, 3), (6, 6), (4, 5), (3, 7)])
def test_adaptive_avg_pool2d_matches_torch(dtype: Any, output_size: tuple[int, int]) -> None:
    x = qrand((2, 5, 6, 6), dtype)  # bins that tile it (qnnpack's kernel, for quint8) and that overlap
    theirs = torch.nn.functional.adaptive_avg_pool2d(x, output_size)
    assert_same(call("aten::adaptive_avg_pool2d", ours(x), list(output_size)), theirs,
                quanta=EXACT if dtype == torch.quint8 else 1)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean_matches_torch(dtype: Any, keepdim: bool) -> None:
    x = qrand((2, 5, 4, 7), dtype)
    assert_same(call("aten::mean.dim", ours(x), [2, 3], keepdim), x.mean([2, 3], keepdim=keepdim))
    assert_same(call("aten::mean.dim", ours(x), [3], keepdim), x.mean([3], keepdim=keepdim))


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_max_pool_and_shape_ops_keep_the_quantization(dtype: Any) -> None:
    x = qrand((2, 4, 7, 7), dtype)
    assert_same(call("aten::max_pool2d", ours(x), [3], [2], [1]), torch.nn.functional.max_pool2d(x, 3, 2, 1), 0)
    assert_same(call("aten::flatten.using_ints", ours(x), 1), torch.flatten(x, 1), 0)
    assert_same(call("aten::transpose.int", ours(x), 1, 2), x.transpose(1, 2), 0)
    if dtype == torch.quint8:  # torch's quantized channel shuffle takes quint8 only
        assert_same(call("aten::channel_shuffle", ours(x), 2), torch.nn.functional.channel_shuffle(x, 2), 0)
    for mine, theirs in zip(call("aten::chunk", ours(x), 2, 1), x.chunk(2, 1), strict=True):
        assert_same(mine, theirs, 0)
    assert call("aten::size", ours(x)) == [2, 4, 7, 7]


# ---- refusals -------------------------------------------------------------------------------------

def test_unsupported_quantized_inputs_are_refused_naming_the_operator() -> None:
    per_channel = ours(qweight((4, 3), per_channel=True))
    with pytest.raises(ExecutionError, match="quantized::add: per-channel quantized activations are not supported"):
        call("quantized::add", per_channel, per_channel, 0.1, 0)
    with pytest.raises(ExecutionError, match="quantized::mul expects a quantized tensor, got a float tensor"):
        call("quantized::mul", np.ones(3, np.float32), ours(qrand((3,))), 0.1, 0)
    with pytest.raises(RuntimeError, match="QNNPACK Average Pooling"):
        torch.nn.functional.avg_pool2d(qrand((1, 2, 4, 4)), 1)
    with pytest.raises(ExecutionError, match="aten::avg_pool2d: qnnpack refuses a 1x1 average pooling"):
        call("aten::avg_pool2d", ours(qrand((1, 2, 4, 4))), [1], [1], [0])
    with pytest.raises(ExecutionError, match="aten::avg_pool2d of a quantized tensor: runtime_py takes 4-D"):
        call("aten::avg_pool2d", ours(qrand((2, 4, 4), torch.qint8)), [2], [2], [0])
    with pytest.raises(ExecutionError, match="aten::exp is not supported on quantized tensors"):
        call("aten::exp", ours(qrand((3,))))
    with pytest.raises(ExecutionError, match="aten::cat is not supported on quantized tensors"):
        call("aten::cat", [ours(qrand((3,))), ours(qrand((3,)))], 0)
    with pytest.raises(ExecutionError, match="aten::flatten.using_ints: per-channel quantized tensors are only "
                                             "supported as weights"):
        call("aten::flatten.using_ints", per_channel, 0)
    assert call("aten::size", per_channel) == [4, 3]  # reading its shape is fine
    with pytest.raises(TypeError, match="not a float tensor: dequantize it first"):
        np.asarray(ours(qrand((3,))))


def test_conv_packed_params_states_of_both_versions() -> None:
    """torch writes version 2 (checked on torch's own bundles in test_quantized_bundles.py); version 3
    is what its loader also reads: both give the same packed parameters."""
    w = ours(qweight((4, 2, 3, 3), per_channel=False))
    bias = np.arange(4, dtype=np.float32)
    v2 = conv2d_from_state(("2", [np.array([2, 2, 1, 1, 0, 1, 1, 0, 0, 2, 0], np.int16), w], [bias]))
    v3 = conv2d_from_state((3, [2, 2, 1, 1, 0, 1, 1, 0, 0, 2, 0], [None, w, bias]))
    for params in (v2, v3):
        assert (params.stride, params.padding, params.dilation, params.groups) == ((2, 1), (1, 0), (1, 1), 2)
        assert params.weight is w and params.bias is bias
    with pytest.raises(ExecutionError, match="expected a version 2 or 3 conv state"):
        conv2d_from_state((4, [2] * 11, [None, w, bias]))
    with pytest.raises(ExecutionError, match=r"quantized transposed convolution \(ConvTranspose2d\) is not supported"):
        conv2d_from_state((3, [2, 2, 1, 1, 0, 1, 1, 0, 0, 2, 1], [None, w, bias]))


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("name", ["batch_norm2d", "batch_norm2d_relu", "batch_norm"])
def test_batch_norm_matches_torch(name: str, dtype: Any) -> None:
    x = qrand((2, 6, 5, 4), dtype, 0.05, 128)
    weight, bias, mean, var = torch.randn(6), torch.randn(6), torch.randn(6) * 0.3, torch.rand(6) + 0.5
    zero_point = 100 if dtype == torch.quint8 else -20
    theirs = getattr(torch.ops.quantized, name)(x, weight, bias, mean, var, 1e-5, 0.07, zero_point)
    mine = call(f"quantized::{name}", ours(x), weight.numpy(), bias.numpy(), mean.numpy(), var.numpy(), 1e-5, 0.07,
                zero_point)
    assert_same(mine, theirs)
