"""Lowered wrapper methods run without interpreting their bytecode, with the same results
and errors as the interpreter; anything that is not exactly the wrapper is interpreted."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_bytes, read_bundle_file
from bundle_format.ptmf_writer import encode_module
from liteexport.bundle import pack
from liteexport.lowered import CompiledModule
from runtime_py.errors import InputError
from runtime_py.lowered_methods import recognize
from runtime_py.module import Module

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "torch_reference"


def _interpreted(module: Module) -> Module:
    module._loaded.lowered_calls.clear()
    return module


def test_results_and_errors_match_the_interpreter(linear_relu_module: CompiledModule) -> None:
    data = encode_module(pack(linear_relu_module))
    fast, slow = Module(read_bundle_bytes(data)), _interpreted(Module(read_bundle_bytes(data)))
    assert list(fast._loaded.lowered_calls) == [
        "torch.jit.LoweredWrapper.backend_with_compiler_demo.__torch__.m.M.forward"]
    x = np.array([[1, -2, 3, 0.5]], dtype=np.float32)
    for a, b in zip(fast.forward(x), slow.forward(x), strict=True):
        np.testing.assert_array_equal(a, b)
    errors = []
    for module in (fast, slow):
        with pytest.raises(InputError) as info:
            module.forward(np.zeros((1, 5), np.float32))
        errors.append((str(info.value), info.value.debug_handle))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("reference", ["two_in_two_out.ptl", "one_in_one_out.ptl"])
def test_torch_written_wrappers_are_recognized(reference: str) -> None:
    module = read_bundle_file(REFERENCE / reference)
    forward = next(v for v in module.ivalues if isinstance(v, ptmf.Function) and v.qn.endswith(".forward"))
    call = recognize(forward, module)
    assert call is not None and call.signature.num_outputs == (2 if reference.startswith("two") else 1)


def test_a_changed_wrapper_is_interpreted(linear_relu_module: CompiledModule) -> None:
    module = pack(linear_relu_module)
    index = module.methods[0]
    fn = module.ivalues[index]
    assert isinstance(fn, ptmf.Function) and recognize(fn, module) is not None
    changed = dataclasses.replace(fn, register_size=fn.register_size + 1)
    assert recognize(changed, module) is None
    ivalues = list(module.ivalues)
    ivalues[index] = changed
    loaded = Module(read_bundle_bytes(encode_module(dataclasses.replace(module, ivalues=tuple(ivalues)))))
    assert loaded._loaded.lowered_calls == {}
    y, x = loaded.forward(np.ones((2, 4), np.float32))  # still runs, through the interpreter
    assert y.shape == (2, 3) and x.shape == (2, 4)


def test_constant_outputs_match_the_interpreter(linear_relu_module: CompiledModule) -> None:
    """A tuple with constants (googlenet's (logits, None, None), and ints, bools, floats): the
    recognized call puts them where the wrapper's LOADCs do."""
    (sig,) = linear_relu_module.methods
    constants = ((1, ptmf.NoneValue()), (3, ptmf.IntValue(7)), (4, ptmf.BoolValue(False)), (5, ptmf.DoubleValue(0.5)))
    compiled = dataclasses.replace(linear_relu_module, methods=(dataclasses.replace(sig, constants=constants),))
    data = encode_module(pack(compiled))
    fast, slow = Module(read_bundle_bytes(data)), _interpreted(Module(read_bundle_bytes(data)))
    assert len(fast._loaded.lowered_calls) == 1
    assert fast.method_schema("forward").returns[0].type == "Tuple[Tensor, NoneType, Tensor, int, bool, float]"
    x = np.array([[1, -2, 3, 0.5]], dtype=np.float32)
    results = [module.forward(x) for module in (fast, slow)]
    for result in results:
        assert [type(v) for v in result] == [np.ndarray, type(None), np.ndarray, int, bool, float]
        assert result[1:2] + result[3:] == (None, 7, False, 0.5)
    for i in (0, 2):
        np.testing.assert_array_equal(results[0][i], results[1][i])
