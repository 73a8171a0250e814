"""What loading skips or does without the interpreter behaves as the slow way did: the lowered
``__setstate__`` run step for step, the lazily decoded debug table, the single-pass PTMF reader."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from bundle_format import ptmf, ptmf_reader, ptmf_verify
from bundle_format.bundle_file import read_bundle_bytes, read_bundle_file
from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE
from bundle_format.ptmf_writer import encode_module
from liteexport.bundle import pack
from liteexport.lowered import CompiledModule
from runtime_py import loader
from runtime_py.backends.demo.backend import DemoBackend
from runtime_py.errors import ExecutionError, FormatError, InputError, InternalError
from runtime_py.module import Module

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
import harness  # noqa: E402

from tests.fuzz.format_structure import verify_structure  # noqa: E402


def _index(module: ptmf.Module, matches: object) -> int:
    return next(i for i, v in enumerate(module.ivalues) if matches(v))  # type: ignore[operator]


def _setstate_index(module: ptmf.Module) -> int:
    return _index(module, lambda v: isinstance(v, ptmf.Function) and v.qn.endswith(".__setstate__"))


def _lowered_object(module: ptmf.Module) -> ptmf.ObjectValue:
    obj = module.ivalues[_index(module, lambda v: isinstance(v, ptmf.ObjectValue) and v.setstate_func)]
    assert isinstance(obj, ptmf.ObjectValue)
    return obj


def _replaced(module: ptmf.Module, index: int, value: ptmf.IValue) -> bytes:
    ivalues = list(module.ivalues)
    ivalues[index] = value
    return encode_module(dataclasses.replace(module, ivalues=tuple(ivalues)))


def _outcome(data: bytes, interpreted: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    """The loaded lowered module's slots (types for the objects), or the load's error message."""
    with monkeypatch.context() as m:
        if interpreted:
            m.setattr(loader, "is_lowered_setstate", lambda fn, module: False)
        try:
            module = Module(read_bundle_bytes(data))
        except (FormatError, InternalError) as exc:
            return str(exc)
    slots = module._loaded.root.slots[0].slots
    return [type(s).__name__ if not isinstance(s, dict | list) else sorted(map(str, s)) for s in slots]


def test_lowered_setstate_runs_without_the_interpreter(linear_relu_module: CompiledModule,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    data = encode_module(pack(linear_relu_module))
    calls: list[str] = []
    run = loader.interpreter.run
    monkeypatch.setattr(loader.interpreter, "run", lambda code, *a: calls.append(code.qn) or run(code, *a))
    fast = _outcome(data, False, monkeypatch)
    assert calls == []
    assert fast == _outcome(data, True, monkeypatch) == [
        ["programs", "weights"], ["forward"], "DemoBackend", ["forward"], "_BackendDebugInfo"]
    assert calls and calls[0].endswith(".__setstate__")


@pytest.mark.parametrize("change, expected", [
    ("flag_false", "failed at load: GET_ATTR failed"),  # no backend created: is_available() has no object
    ("state_not_a_tuple", None),  # a list indexes the same: the interpreter loads it
    ("compile_fails", "expected a dict with keys 'programs' and 'weights'"),  # the backend's own FormatError
    # a bug of ours: InternalError (exit 70), named with its instruction, never the bundle's FormatError
    ("backend_breaks", "internal error (a bug in liteexport, please report it): INTERFACE_CALL at pc 43 of "
                       "function"),
])
def test_unusual_states_end_as_the_interpreter_ends_them(linear_relu_module: CompiledModule, change: str,
                                                         expected: str | None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    module = pack(linear_relu_module)
    state = module.ivalues[_lowered_object(module).state]
    assert isinstance(state, ptmf.TupleValue)
    data = encode_module(module)
    if change == "flag_false":
        data = _replaced(module, state.items[2], ptmf.BoolValue(False))
    elif change == "state_not_a_tuple":
        data = _replaced(module, _index(module, lambda v: v is state), ptmf.ListValue(state.items, "List[Any]"))
    elif change == "compile_fails":
        data = _replaced(module, state.items[1], ptmf.DictValue((), (), "Dict[str, Any]"))
    else:
        monkeypatch.setattr(DemoBackend, "compile", lambda self, processed, spec: 1 // 0)
    fast, slow = _outcome(data, False, monkeypatch), _outcome(data, True, monkeypatch)
    assert fast == slow
    assert isinstance(fast, list) if expected is None else expected in str(fast)


def test_setstate_that_refers_to_its_own_object_is_a_format_error(linear_relu_module: CompiledModule) -> None:
    """Its constants include the object it rebuilds: once an endless loop at load."""
    module = pack(linear_relu_module)
    index = _setstate_index(module)
    fn = module.ivalues[index]
    assert isinstance(fn, ptmf.Function)
    obj = _index(module, lambda v: v is _lowered_object(module))
    data = _replaced(module, index, dataclasses.replace(fn, constants=fn.constants[:-1] + (obj,)))
    with pytest.raises(FormatError, match=f"ivalue {obj} depends on itself"):
        Module(read_bundle_bytes(data))


def test_wrapper_state_of_another_shape_fails_as_interpreted(linear_relu_module: CompiledModule) -> None:
    """The lowered forward met a wrapper whose __loweredModule__ is an int (a hostile bundle):
    the interpreter's error, not an AttributeError."""
    module = pack(linear_relu_module)
    root = module.ivalues[module.state_obj]
    assert isinstance(root, ptmf.ObjectValue)
    data = _replaced(module, root.attrs[0], ptmf.IntValue(3))
    loaded = Module(read_bundle_bytes(data))
    assert loaded._loaded.lowered_calls
    with pytest.raises(ExecutionError, match="GET_ATTR failed at pc 12 .*: GET_ATTR of attribute slot 2 needs an "
                                             "object, got an int"):
        loaded.forward(np.zeros((1, 4), np.float32))


def test_debug_table_is_decoded_when_first_needed(linear_relu_module: CompiledModule) -> None:
    module = pack(linear_relu_module)
    extra = tuple(ptmf.ExtraFile(e.name, b"not a debug table" if e.name == DEBUG_TABLE_EXTRA_FILE else e.content)
                  for e in module.extra_files)
    loaded = Module(read_bundle_bytes(encode_module(dataclasses.replace(module, extra_files=extra))))
    y, _ = loaded.forward(np.ones((1, 4), np.float32))  # running needs no debug table
    assert y.shape == (1, 3)
    with pytest.raises(FormatError):  # mapping an error to source needs it: malformed, so a FormatError
        loaded.forward(np.zeros((1, 5), np.float32))
    with pytest.raises(FormatError):
        _ = loaded.debug_table


def test_good_debug_table_maps_errors(linear_relu_module: CompiledModule) -> None:
    loaded = Module(read_bundle_bytes(encode_module(pack(linear_relu_module))))
    assert "debug_table" not in vars(loaded)  # not decoded by loading
    torch_style = r"Module hierarchy:top\(M\)::<unknown>\.__loweredModule__\(M\)::forward\.l\(Linear\)::forward"
    with pytest.raises(ExecutionError, match=torch_style):  # a failure inside the program (its memory budget)
        loaded.forward(np.zeros((1000, 4), np.float32), max_memory=8)
    with pytest.raises(InputError, match=r"got float32 of shape \(1, 5\)\nModule hierarchy: top\(M\)\.l\(Linear\)$"):
        loaded.forward(np.zeros((1, 5), np.float32))  # a misfit input: one line, then the module reading it


@pytest.mark.parametrize("name", sorted(n for n in harness.load_seeds() if harness.kind_of(n) == "ptmf"))
def test_single_pass_reader_accepts_what_the_generic_verifier_accepts(name: str) -> None:
    """read_module (the decoder) and verify_structure (the schema-driven walk of every table,
    with the same checker) agree: on every mutant of every PTMF seed, both accept it or both reject it."""
    mutator = harness.Mutator(harness.load_seeds()[name], "ptmf")
    for i in range(300):
        data = mutator.mutant(i)
        outcomes = []
        for check in (lambda d: verify_structure(d, "ptmf"), ptmf_reader.read_module):
            try:
                check(data)
                outcomes.append("ok")
            except FormatError:
                outcomes.append("FormatError")
        assert outcomes[0] == outcomes[1], f"mutant {i}: verifier {outcomes[0]}, reader {outcomes[1]}"


def _function_index(module: ptmf.Module, suffix: str) -> int:
    return _index(module, lambda v: isinstance(v, ptmf.Function) and v.qn.endswith(suffix))


def _with_bad_jump(module: ptmf.Module, suffix: str) -> tuple[bytes, int]:
    """The bundle with the function ending in ``suffix`` jumping past its last instruction."""
    index = _function_index(module, suffix)
    fn = module.ivalues[index]
    assert isinstance(fn, ptmf.Function)
    code = tuple(fn.instructions)
    bad = code[:-1] + (ptmf.Instruction(ptmf.BytecodeOp.JMP, 1000, 0),) + code[-1:]
    return _replaced(module, index, dataclasses.replace(fn, instructions=bad)), index


def test_recognized_functions_are_never_decoded(linear_relu_module: CompiledModule,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The wrapper and __setstate__ are recognized by their bytes, __getstate__ never runs:
    loading and running decode none of their instructions."""
    checked: list[str] = []
    check = ptmf_reader.check_code
    monkeypatch.setattr(ptmf_reader, "check_code", lambda code, limits, where: checked.append(where) or check(
        code, limits, where))
    loaded = Module(read_bundle_bytes(encode_module(pack(linear_relu_module))))
    loaded.forward(np.ones((1, 4), np.float32))
    assert checked == []


def test_unused_malformed_function_fails_when_used(linear_relu_module: CompiledModule) -> None:
    """__getstate__ jumping outside its code loads (nothing runs it), and is a FormatError as
    soon as its instructions are read; an in-memory copy with other tables is checked eagerly."""
    data, index = _with_bad_jump(pack(linear_relu_module), ".__getstate__")
    loaded = Module(read_bundle_bytes(data))
    loaded.forward(np.ones((1, 4), np.float32))
    fn = loaded.ptmf.ivalues[index]
    assert isinstance(fn, ptmf.Function) and isinstance(fn.instructions, ptmf.LazyInstructions)
    assert len(fn.instructions) > 0  # counting needs no decoding
    for use in (tuple, lambda code: code[0], hash, lambda code: code == ()):
        with pytest.raises(FormatError, match="jump target 1.* out of range"):
            use(fn.instructions)
    changed = dataclasses.replace(loaded.ptmf, ivalues=loaded.ptmf.ivalues[:index] + (
        dataclasses.replace(fn, register_size=fn.register_size + 1),) + loaded.ptmf.ivalues[index + 1:])
    with pytest.raises(FormatError, match="jump target"):
        ptmf_verify.verify_module(changed)


def test_malformed_method_fails_when_run(linear_relu_module: CompiledModule) -> None:
    """A forward that is not the lowered template is interpreted: its bad jump is a FormatError
    on the first call, before anything runs."""
    data, _ = _with_bad_jump(pack(linear_relu_module), ".forward")
    loaded = Module(read_bundle_bytes(data))
    assert not loaded._loaded.lowered_calls
    with pytest.raises(FormatError, match="jump target"):
        loaded.forward(np.ones((1, 4), np.float32))


def test_reading_a_bundle_file_checks_every_function(linear_relu_module: CompiledModule, tmp_path: Path) -> None:
    """What describes a whole bundle (liteexport inspect) still rejects code nothing runs."""
    data, _ = _with_bad_jump(pack(linear_relu_module), ".__getstate__")
    path = tmp_path / "bad_getstate.ptl"
    path.write_bytes(data)
    with pytest.raises(FormatError, match="jump target"):
        read_bundle_file(path)
