"""torch's test/jit/test_backends.py, the ``backend_with_compiler_demo`` classes
(BasicModuleTestWithCompiler, ErrorMessagesWithCompiler, CompModuleTestWithCompiler,
CompModuleTestSameNameWithCompiler), replayed against liteexport's backend: Python, TorchScript,
the lowered module and torch's lite interpreter must agree.

Where liteexport differs from torch's demo compiler: ErrorMessagesWithCompiler expects
``aten::mul`` to be refused; liteexport compiles it (checked here), so torch's pattern is checked
on a node liteexport refuses, with the same source layout.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
import torch
from torch.jit.mobile import _load_for_lite_interpreter

from tests.to_backend.torch_source import to_backend

pytestmark = [pytest.mark.torch_oracle, pytest.mark.usefixtures("backend")]


class BasicModuleAdd(torch.nn.Module):
    def forward(self, x, h):
        return x + h


class BasicModuleSub(torch.nn.Module):
    def forward(self, x, h):
        return x - h


class ErrorMessagesWithCompiler:  # nested as in torch's test: its pattern has that indentation
    class ModuleNotSupported(torch.nn.Module):
        def forward(self, x, h):
            return x * h
            self._loweredmodule.forward()

    class ModuleRefused(torch.nn.Module):
        def forward(self, x, h):
            return x.nonzero()
            self._loweredmodule.forward()


class CompModule(torch.nn.Module):
    def __init__(self, addmodule: Any, submodule: Any) -> None:
        super().__init__()
        self.lowered_add = addmodule
        self.lowered_sub = submodule

    def forward(self, a, b, s):
        c = self.lowered_add.forward(a, b)
        d = self.lowered_sub.forward(a, b)
        y = s * (c * d)
        return y


class CompModuleSameName(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        spec = {"forward": {"some_other_option": "True"}}
        self.add = to_backend(torch.jit.script(BasicModuleAdd()), spec)
        self.sub = to_backend(torch.jit.script(BasicModuleAdd()), spec)

    def forward(self, a, b, s: int):
        c = self.add.forward(a, b)
        d = self.sub.forward(a, b)
        y = s * (c * d)
        return y


# torch's spec: the demo ignores these options (input_shapes given as a string); so does liteexport
DEMO_SPEC = {"forward": {"input_shapes": "((1, 1, 320, 240), (1, 3))", "some_other_option": "True"}}


def _mobile(module: Any, flatbuffer: bool = False) -> Any:
    return _load_for_lite_interpreter(io.BytesIO(module._c._save_to_buffer_for_mobile({}, False, flatbuffer)))


@pytest.mark.parametrize("flatbuffer", [False, True])
def test_basic_module_with_compiler(flatbuffer: bool) -> None:
    module = BasicModuleAdd()
    scripted = torch.jit.script(BasicModuleAdd())
    lowered = to_backend(scripted, DEMO_SPEC)
    mobile = _mobile(lowered, flatbuffer)
    x = torch.ones(1)
    backend_output = lowered(x, x)
    assert torch.equal(module(x, x), backend_output)
    assert torch.equal(scripted(x, x), backend_output)
    assert torch.equal(mobile(x, x), backend_output)


def test_error_messages_with_compiler() -> None:
    # torch's demo refuses x * h; liteexport lowers it and computes torch's result
    x, h = torch.rand(3), torch.rand(3)
    assert torch.equal(to_backend(torch.jit.script(ErrorMessagesWithCompiler.ModuleNotSupported()))(x, h), x * h)
    # torch's pattern ("special escape characters are replaced with '.'"), on a refused node
    pattern = r"""The node of aten::nonzero is not supported in this compiler. .*
        def forward.self, x, h.:
            return x.nonzero..
                   ~~~~~~~~~ <--- HERE
            self._loweredmodule.forward..
"""
    with pytest.raises(RuntimeError) as info:
        to_backend(torch.jit.script(ErrorMessagesWithCompiler.ModuleRefused()))
    assert re.search(pattern, str(info.value)) is not None
    assert str(info.value).startswith("The node of aten::nonzero is not supported in this compiler. "
                                      'Source code:   File "')


@pytest.mark.parametrize("flatbuffer", [False, True])
def test_comp_module_with_compiler(flatbuffer: bool) -> None:
    lowered_add = to_backend(torch.jit.script(BasicModuleAdd()), DEMO_SPEC)
    lowered_sub = to_backend(torch.jit.script(BasicModuleSub()))
    module = CompModule(lowered_add, lowered_sub)
    scripted = torch.jit.script(CompModule(lowered_add, lowered_sub))
    mobile = _mobile(scripted, flatbuffer)
    inputs = (torch.ones(1), torch.ones(1), torch.ones(1))
    assert torch.equal(module(*inputs), scripted(*inputs))
    assert torch.equal(mobile(*inputs), scripted(*inputs))


@pytest.mark.parametrize("flatbuffer", [False, True])
def test_comp_module_same_name_with_compiler(flatbuffer: bool) -> None:
    module = CompModuleSameName()
    scripted = torch.jit.script(module)
    mobile = _mobile(scripted, flatbuffer)
    a, b, s = torch.ones(1), 3 * torch.ones(1), 3
    assert torch.equal(module(a, b, s), scripted(a, b, s))
    assert torch.equal(mobile(a, b, s), scripted(a, b, s))
    assert torch.equal(scripted(a, b, s), s * ((a + b) * (a + b)))
