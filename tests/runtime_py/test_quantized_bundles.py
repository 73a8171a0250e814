"""torch's own lite bundles of quantized torchvision models run in runtime_py, in both of torch's
containers, with the outputs of torch's lite interpreter (qnnpack engine) on the same input.

Each model is quantized the way ``torchvision.models.quantization.<name>(weights=None,
quantize=True)`` does it (utils.quantize_model: the backend's qconfig, fuse_model, prepare,
calibrate, convert: per-tensor weights for the mobilenets, per-channel for the others) with two
changes that keep the test quick and its comparison meaningful: random BatchNorm statistics (the
default ones leave some of these models' outputs all zero, which any runtime would "match") and
calibration at the test's input size instead of 299x299.
"""

from __future__ import annotations

import collections
import io
import pickle
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import runtime_py
from bundle_format import ptmf
from bundle_format.ptmf_reader import read_module
from bundle_format.ptmf_verify import verify_module
from bundle_format.restricted_unpickler import restricted_loads
from bundle_format.zip_reader import read_zip_module
from runtime_py.budgets import RunLimitExceeded
from runtime_py.errors import ExecutionError, FormatError
from runtime_py.quantized_tensor import QuantizedTensor

torch = pytest.importorskip("torch")
mobile = pytest.importorskip("torch.jit.mobile")
warnings.filterwarnings("ignore", message="Lite Interpreter is deprecated")
pytestmark = pytest.mark.torch_oracle

from benchmarks.torchvision_shim import import_torchvision  # noqa: E402
from tests.conformance.lite_oracle import check  # noqa: E402

# model -> (input size, the qconfig backend torchvision quantizes it for)
MODELS = {"mobilenet_v2": (64, "qnnpack"), "mobilenet_v3_large": (64, "qnnpack"), "resnet18": (64, "fbgemm"),
          "shufflenet_v2_x1_0": (64, "fbgemm"), "googlenet": (64, "fbgemm"), "inception_v3": (75, "fbgemm")}
FORMATS = {"flatbuffer": True, "zip": False}


class Logits(torch.nn.Module):
    """googlenet's and inception_v3's logits: their scripted forward returns a NamedTuple, which
    torch's flatbuffer writer refuses ("__torch__ types other than custom c++ classes")."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.model._forward(self.model.quant(x))
        return self.model.dequant(out[0])


def _quantize(model: torch.nn.Module, backend: str, x: torch.Tensor) -> torch.nn.Module:
    """torchvision's quantize_model, calibrated on ``x``."""
    model.eval()
    weight = (torch.ao.quantization.default_per_channel_weight_observer if backend == "fbgemm"
              else torch.ao.quantization.default_weight_observer)
    model.qconfig = torch.ao.quantization.QConfig(activation=torch.ao.quantization.default_observer, weight=weight)
    model.fuse_model()
    torch.ao.quantization.prepare(model, inplace=True)
    with torch.no_grad():
        model(x)
    torch.ao.quantization.convert(model, inplace=True)
    return model


@dataclass
class Built:
    paths: dict[str, Path]
    x: np.ndarray
    expected: np.ndarray  # torch's lite interpreter's output (the same for both containers)
    output_scale: float  # of the last quantized layer: one quantum of the dequantized output


@pytest.fixture(scope="module", params=sorted(MODELS))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    name = request.param
    size, backend = MODELS[name]
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    x = torch.randn(1, 3, size, size)
    # torch's default initialization: googlenet's and inception_v3's own (scipy's truncnorm) takes seconds
    extra = {"init_weights": False} if name in ("googlenet", "inception_v3") else {}
    model = getattr(import_torchvision().models.quantization, name)(weights=None, quantize=False, **extra)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    model = _quantize(model, backend, x)
    torch.backends.quantized.engine = "qnnpack"  # quantize_model-style calibration may leave fbgemm's
    linears = [m for m in model.modules() if isinstance(m, torch.ao.nn.quantized.Linear)]
    scripted = torch.jit.script(Logits(model) if name in ("googlenet", "inception_v3") else model)
    folder = tmp_path_factory.mktemp(name)
    paths = {fmt: folder / f"{fmt}.ptl" for fmt in FORMATS}
    outputs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fmt, flatbuffer in FORMATS.items():
            scripted._save_for_lite_interpreter(str(paths[fmt]), _use_flatbuffer=flatbuffer)
            with torch.no_grad():
                outputs.append(mobile._load_for_lite_interpreter(str(paths[fmt]))(x).numpy())
    np.testing.assert_array_equal(outputs[0], outputs[1])
    return Built(paths, x.numpy(), outputs[0], float(linears[-1].scale))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_quantized_torchvision_model_matches_torch_lite(built: Built, fmt: str) -> None:
    ours = runtime_py.load(str(built.paths[fmt])).forward(built.x)
    assert ours.dtype == np.float32 and ours.shape == built.expected.shape == (1, 1000)
    # the comparison means something: the outputs take many values, not one saturated level
    assert len(np.unique(built.expected)) > 20
    quanta = np.abs(ours - built.expected) / built.output_scale
    assert quanta.max() <= 1.0 + 1e-3, f"{quanta.max():.2f} quanta off (at {int(quanta.argmax())})"


# ---- the readers ----------------------------------------------------------------------------------

class PerChannel(torch.nn.Module):
    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        self.w = weight  # a per-channel quantized attribute, as the module's state holds it

    def forward(self) -> torch.Tensor:
        return self.w.dequantize()


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_readers_give_quantized_tensors_as_torch_saved_them(fmt: str, tmp_path: Path) -> None:
    torch.manual_seed(1)
    w = torch.quantize_per_channel(torch.randn(4, 3, 2), torch.tensor([0.1, 0.02, 0.3, 0.05], dtype=torch.double),
                                   torch.tensor([0, -3, 7, 127]), 0, torch.qint8)
    path = tmp_path / "m.ptl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.script(PerChannel(w))._save_for_lite_interpreter(str(path), _use_flatbuffer=FORMATS[fmt])
    module = (read_module if fmt == "flatbuffer" else read_zip_module)(path.read_bytes())
    (meta,) = [v for v in module.ivalues if isinstance(v, ptmf.TensorMetadata) and v.quantized_schema]
    assert meta.scalar_type == ptmf.ScalarType.QINT8 and meta.sizes == (4, 3, 2)
    schema = meta.quantized_schema
    assert schema is not None and schema.qscheme == ptmf.QScheme.PER_CHANNEL_AFFINE and schema.axis == 0
    loaded = runtime_py.load(str(path))
    (q,) = [v for v in loaded._loaded.root.slots if isinstance(v, QuantizedTensor)]
    assert q.per_channel
    np.testing.assert_array_equal(q.int_repr, w.int_repr().numpy())
    np.testing.assert_array_equal(q.scales, w.q_per_channel_scales().numpy())
    np.testing.assert_array_equal(q.zero_points, w.q_per_channel_zero_points().numpy())
    np.testing.assert_array_equal(loaded.forward(), w.dequantize().numpy())


class FloatOpOnQuantized(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = torch.quantize_per_tensor(x, 0.1, 3, torch.quint8)
        return torch.tanh(q).dequantize()  # torch has a quantized tanh; runtime_py does not


def test_an_operator_without_a_quantized_kernel_refuses_by_name(tmp_path: Path) -> None:
    path = tmp_path / "m.ptl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.script(FloatOpOnQuantized())._save_for_lite_interpreter(str(path), _use_flatbuffer=True)
    with pytest.raises(ExecutionError, match="aten::tanh is not supported on quantized tensors"):
        runtime_py.load(str(path)).forward(np.ones((2, 2), np.float32))


class QuantizedValues(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[bool, int, float, int, torch.Tensor, torch.Tensor]:
        q = torch.quantize_per_tensor(x, 0.1, 3, torch.quint8)
        y = torch.flatten(q, 1)
        return q.dtype == torch.quint8, q.dim(), q.q_scale(), q.q_zero_point(), y.int_repr(), y.dequantize()


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_bytecode_reads_a_quantized_tensors_type_and_parameters(fmt: str, tmp_path: Path) -> None:
    x = np.linspace(-2, 30, 24, dtype=np.float32).reshape(2, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(torch.jit.script(QuantizedValues()), tmp_path, "values", fmt, (x,))


def _schema(meta: ptmf.TensorMetadata, **fields: Any) -> ptmf.TensorMetadata:
    assert meta.quantized_schema is not None
    return replace(meta, quantized_schema=replace(meta.quantized_schema, **fields))


@pytest.mark.parametrize(("corrupt", "message"), [
    (lambda m: replace(m, quantized_schema=None), r"quantized tensor \(scalar type 12\) without a quantized schema"),
    (lambda m: replace(m, scalar_type=ptmf.ScalarType.FLOAT), "tensor of scalar type 6 has a quantized schema"),
    (lambda m: _schema(m, qscheme=ptmf.QScheme.PER_CHANNEL_AFFINE_FLOAT_QPARAMS), "quantization scheme 4 is not"),
    (lambda m: _schema(m, axis=3), "per-channel quantization axis 3 of a 3-d tensor"),
    (lambda m: _schema(m, scales=None), "per-channel quantized tensor without scales"),
    (lambda m: _schema(m, zero_points=m.quantized_schema.scales), "per-channel zero_points of scalar type 7"),
], ids=["no_schema", "float_with_schema", "float_qparams", "axis", "no_scales", "float_zero_points"])
def test_malformed_quantization_is_a_format_error(corrupt: Any, message: str, tmp_path: Path) -> None:
    w = torch.quantize_per_channel(torch.randn(4, 3, 2), torch.rand(4, dtype=torch.double) + 0.01,
                                   torch.zeros(4, dtype=torch.long), 0, torch.qint8)
    path = tmp_path / "m.ptl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.script(PerChannel(w))._save_for_lite_interpreter(str(path), _use_flatbuffer=True)
    module = read_module(path.read_bytes())
    verify_module(module)  # as torch saved it
    index = next(i for i, v in enumerate(module.ivalues) if isinstance(v, ptmf.TensorMetadata) and v.quantized_schema)
    ivalues = list(module.ivalues)
    ivalues[index] = corrupt(ivalues[index])
    with pytest.raises(FormatError, match=message):
        verify_module(replace(module, ivalues=tuple(ivalues)))


class ManyCopies(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> float:
        q = torch.quantize_per_tensor(x, 0.1, 3, torch.quint8)
        return torch.ops.quantized.cat([q for _ in range(n)], 0, 0.1, 3).q_scale()


def test_quantized_values_count_against_the_memory_budget(tmp_path: Path) -> None:
    path = tmp_path / "m.ptl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.script(ManyCopies())._save_for_lite_interpreter(str(path), _use_flatbuffer=True)
    module = runtime_py.load(str(path))
    x = np.ones(1000, np.float32)
    limits = {"max_memory": 30_000, "timeout": 60.0}  # values are checked under run limits
    assert module.forward(x, 20, **limits) == pytest.approx(0.1)
    with pytest.raises(RunLimitExceeded, match="built a tensor of 40000 bytes"):
        module.forward(x, 40, **limits)


class _Storage:
    """Pickled as torch pickles a storage: a persistent id (see _pickle)."""


_STORAGE = _Storage()


class _QTensor:
    """Pickles as torch's C++ pickler writes a quantized tensor, with the given quantizer params."""

    def __init__(self, params: tuple[Any, ...]) -> None:
        self.params = params

    def __reduce__(self) -> tuple[Any, ...]:
        return (torch._utils._rebuild_qtensor, (_STORAGE, 0, (4,), (1,), self.params, False, collections.OrderedDict()))


def _pickle(value: Any) -> bytes:
    class Pickler(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:
            return ("storage", torch.QUInt8Storage, "0", "cpu", 4) if obj is _STORAGE else None

    out = io.BytesIO()
    Pickler(out, protocol=2).dump(value)
    return out.getvalue()


def test_zip_quantizer_parameters_are_checked() -> None:
    ref = restricted_loads(_pickle(_QTensor((torch.per_tensor_affine, 0.5, 3))), "data.pkl", lambda k, s, n: 0)
    assert ref.scalar_type == ptmf.ScalarType.QUINT8 and ref.quantizer is not None
    assert (ref.quantizer.qscheme, ref.quantizer.scale, ref.quantizer.zero_point) == (0, 0.5, 3)
    nested = _QTensor((torch.per_tensor_affine, 0.5, 3))  # per-channel scales that are themselves quantized
    for params, message in (((0.5, 3), "do not start with a qscheme"),
                            ((torch.per_tensor_affine, "x", 3), "malformed quantized tensor parameters"),
                            ((torch.per_channel_affine, nested, nested, 0), "malformed quantized tensor parameters")):
        with pytest.raises(FormatError, match=message):
            restricted_loads(_pickle(_QTensor(params)), "data.pkl", lambda k, s, n: 0)


class PackedAttributes(torch.nn.Module):
    """Packed weights held as attributes: torch pickles the C++ objects' own states (conv: version 3)."""

    def __init__(self) -> None:
        super().__init__()
        w = torch.quantize_per_channel(torch.randn(6, 2, 3, 3) * 0.2, torch.rand(6, dtype=torch.double) * 0.01 + 0.001,
                                       torch.zeros(6, dtype=torch.long), 0, torch.qint8)
        self.conv = torch.ops.quantized.conv2d_prepack(w, torch.randn(6), [2, 1], [1, 0], [1, 1], 2)
        self.linear = torch.ops.quantized.linear_prepack(
            torch.quantize_per_tensor(torch.randn(5, 36) * 0.2, 0.004, 0, torch.qint8), None)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
        y = torch.ops.quantized.conv2d(q, self.conv, 0.1, 100)
        z = torch.ops.quantized.linear(torch.flatten(y, 1), self.linear, 0.2, 120)
        weight, bias = torch.ops.quantized.conv2d_unpack(self.conv)
        return y.int_repr(), z.int_repr(), weight.int_repr()


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_packed_params_objects_are_rebuilt_from_their_state(fmt: str, tmp_path: Path) -> None:
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(3)
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 4)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(torch.jit.script(PackedAttributes()), tmp_path, "packed", fmt, (x,))
