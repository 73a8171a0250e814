"""torch's test/cpp/jit/test_backend.cpp (BackendTest / BackendTestDebugInfo, the
``backend_with_compiler_demo`` cases) replayed against liteexport's backend, from Python.

``codegen_backend_module`` is ``torch._C._jit_to_backend``; ``_save_for_mobile(ss, {}, true)`` is
``_save_to_buffer_for_lite_interpreter(_save_mobile_debug_info=True)``; modules are defined from
the same source strings, so sources, lines and highlights are torch's. The expected messages are
torch's test strings; lines are compared without trailing blanks (torch's generated wrapper source
has indentation-only lines, which its C++ test file does not keep).

Where liteexport differs from torch's demo compiler: the demo refuses ``aten::mul``
(TestCompilerNotSupport expects "The node of aten::mul is not supported"); liteexport compiles it,
so that case checks the lowered result instead and checks the message on a node liteexport
refuses (``aten::nonzero``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.jit.mobile import _load_for_lite_interpreter

import liteexport
import runtime_py
from runtime_py.errors import ExecutionError
from tests.to_backend.torch_source import define, to_backend

pytestmark = [pytest.mark.torch_oracle, pytest.mark.usefixtures("backend")]


def _mobile(module: Any, debug_info: bool = False, flatbuffer: bool = False) -> Any:
    data = module._c._save_to_buffer_for_mobile({}, debug_info, flatbuffer)
    return _load_for_lite_interpreter(io.BytesIO(data))


def _lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines())


def _assert_throws_with_message(call: Any, pattern: str) -> None:
    """ASSERT_THROWS_WITH_MESSAGE: the error's message contains ``pattern``."""
    with pytest.raises(Exception) as info:
        call()
    assert _lines(pattern) in _lines(str(info.value))


ADD = """
    def forward(self, x, h):
        return x + h
  """


@pytest.mark.parametrize("flatbuffer", [False, True])
def test_compiler(flatbuffer: bool) -> None:  # BackendTest.TestCompiler (+ the flatbuffer format)
    m = define("m", ADD)
    inputs = (2.0 * torch.ones(()), 1.0 * torch.ones(()))
    ref = m(*inputs)
    lm = to_backend(m)
    assert torch.equal(lm(*inputs), ref)
    assert torch.equal(_mobile(lm, flatbuffer=flatbuffer)(*inputs), ref)


def _composite(sub1_name: str, sub2_name: str, forward: str) -> Any:
    add = to_backend(define(sub1_name, "\n    def forward(self, x, y):\n      return x + y\n  "))
    sub = to_backend(define(sub2_name, "\n    def forward(self, x, y):\n      return x - y\n  "))
    return define("C", forward, Add=add, Sub=sub)


def test_composite() -> None:  # BackendTest.TestComposite
    c = _composite("m_add", "m_sub", """
    def forward(self, x, y):
      return self.Add.forward(x, y) * self.Sub.forward(x, y)
  """)
    inputs = (3.0 * torch.ones(()), 1.0 * torch.ones(()))
    assert torch.equal(_mobile(c)(*inputs), c(*inputs))


SAME_NAME_FORWARD = """
    def forward(self, a, b, s:int):
      c = self.Add.forward(a, b)
      d = self.Sub.forward(a, b)
      y = s * (c * d)
      return y
  """


def test_composite_with_set_states() -> None:  # BackendTest.TestCompositeWithSetStates
    c = _composite("m_add", "m_add", SAME_NAME_FORWARD)
    inputs = (torch.ones(()), 3.0 * torch.ones(()), 3)
    assert torch.equal(_mobile(c)(*inputs), c(*inputs))


def test_consistency_of_composite_with_set_states() -> None:  # BackendTest.TestConsistencyOfComposite...
    c = _composite("m_add", "m_add", SAME_NAME_FORWARD)
    inputs = (torch.ones(()), 3.0 * torch.ones(()), 3)
    data = c._c._save_to_buffer_for_mobile({}, False, False)
    mc = _load_for_lite_interpreter(io.BytesIO(data))
    reloaded = torch.jit.load(io.BytesIO(data))  # torch::jit::load of the mobile file, then saved again
    mc_reload = _mobile(reloaded)
    assert torch.equal(mc_reload(*inputs), mc(*inputs))
    names = [name for name in dir(mc._c) if not name.startswith("_")]
    assert names == [name for name in dir(mc_reload._c) if not name.startswith("_")]


def test_compiler_not_support() -> None:  # BackendTest.TestCompilerNotSupport
    mul = define("m", "\n    def forward(self, x, h):\n        return x * h\n  ")
    inputs = (2.0 * torch.ones(3), 1.5 * torch.ones(3))
    # torch's demo refuses aten::mul; liteexport compiles it
    assert torch.equal(to_backend(mul)(*inputs), mul(*inputs))
    sort = define("m", "\n    def forward(self, x, h):\n        return x.nonzero()\n  ")
    with pytest.raises(RuntimeError) as info:
        to_backend(sort)
    assert str(info.value).startswith(
        'The node of aten::nonzero is not supported in this compiler. Source code:   File "<string>", line 3\n')


def _debug_info_error(module: Any) -> Any:
    mlm = _mobile(to_backend(module), debug_info=True)
    return lambda: mlm(torch.rand(2, 4), torch.rand(13, 9))


WRAPPER_FRAMES = """
Traceback of TorchScript (most recent call last):
  File "<string>", line 3, in <unknown>

            def forward(self, x: Tensor, {second}: Tensor):
                return self.__loweredModule__.forward(x, {second})
                       ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE

  File "<string>", line 5, in forward
                typed_inputs: List[Any] = [x, {second}, ]
                if self.__backend.is_available() :
                  _0, = self.__backend.execute(self.__handles["forward"], typed_inputs)
                        ~~~~~~~~~~~~~~~~~~~~~~ <--- HERE
                  assert isinstance(_0, Tensor)
                  return _0"""


def test_debug_info_compiler() -> None:  # BackendTestDebugInfo.TestCompiler
    expected = ("\n  Module hierarchy:top(m)::<unknown>.__loweredModule__(m)::forward.aten::add"
                + WRAPPER_FRAMES.format(second="h") + """
  File "<string>", line 3, in <unknown>

    def forward(self, x, h):
        return x + h
               ~~~~~ <--- HERE
  """)
    _assert_throws_with_message(_debug_info_error(define("m", ADD)), expected)


def _a() -> Any:
    return define("A", "\n    def forward(self, x, y):\n      return x + y\n  ")


def test_exception_stack_for_compiler_with_module_hierarchy() -> None:  # ...WithModuleHierarchy
    b = define("B", "\n    def forward(self, x):\n      return x + 2\n  ")
    c = define("C", "\n    def forward(self, x, y):\n      return self.A0.forward(x, y) + self.B0.forward(x)\n  ",
               A0=_a(), B0=b)
    expected = ("\n  Module hierarchy:top(C)::<unknown>.__loweredModule__(C)::forward.A0(A)::forward.aten::add"
                + WRAPPER_FRAMES.format(second="y") + """
  File "<string>", line 3, in <unknown>

    def forward(self, x, y):
      return self.A0.forward(x, y) + self.B0.forward(x)
             ~~~~~~~~~~~~~~~ <--- HERE

  File "<string>", line 3, in forward

    def forward(self, x, y):
      return x + y
             ~~~~~ <--- HERE
  """)
    _assert_throws_with_message(_debug_info_error(c), expected)


def test_exception_stack_for_compiler_with_two_level_module_hierarchy() -> None:  # ...TwoLevelModuleHierarchy
    b = define("B", "\n    def forward(self, x, y):\n      return self.A0.forward(x, y) + 2\n  ", A0=_a())
    c = define("C", "\n    def forward(self, x, y):\n      return self.B0.forward(x, y) + 3\n  ", B0=b)
    expected = ("\n  Module hierarchy:top(C)::<unknown>.__loweredModule__(C)::forward.B0(B)::forward.A0(A)::forward"
                ".aten::add" + WRAPPER_FRAMES.format(second="y") + """
  File "<string>", line 3, in <unknown>

    def forward(self, x, y):
      return self.B0.forward(x, y) + 3
             ~~~~~~~~~~~~~~~ <--- HERE

  File "<string>", line 3, in forward

    def forward(self, x, y):
      return self.A0.forward(x, y) + 2
             ~~~~~~~~~~~~~~~ <--- HERE

  File "<string>", line 3, in forward

    def forward(self, x, y):
      return x + y
             ~~~~~ <--- HERE
  """)
    _assert_throws_with_message(_debug_info_error(c), expected)


SUBMODULE_FRAMES = """
Traceback of TorchScript (most recent call last):
  File "<string>", line 3, in <unknown>

    def forward(self, x, y):
      return self.A0.forward(x, y) + self.B0.forward(x)
             ~~~~~~~~~~~~~~~ <--- HERE

  File "<string>", line 3, in forward

            def forward(self, x: Tensor, y: Tensor):
                return self.__loweredModule__.forward(x, y)
                       ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE

  File "<string>", line 5, in forward
                typed_inputs: List[Any] = [x, y, ]
                if self.__backend.is_available() :
                  _0, = self.__backend.execute(self.__handles["forward"], typed_inputs)
                        ~~~~~~~~~~~~~~~~~~~~~~ <--- HERE
                  assert isinstance(_0, Tensor)
                  return _0"""


def _c_over(a: Any) -> Any:
    b = define("B", "\n    def forward(self, x):\n      return x + 2\n  ")
    return define("C", "\n    def forward(self, x, y):\n      return self.A0.forward(x, y) + self.B0.forward(x)\n  ",
                  A0=a, B0=b)


def _aa_under_a() -> Any:
    aa = define("AA", "\n    def forward(self, x, y):\n      return x + y\n  ")
    return define("A", "\n    def forward(self, x, y):\n      return self.AA0.forward(x, y) + 3\n  ", AA0=aa)


LOWERED_SUBMODULE = ("\n  Module hierarchy:top(C)::<unknown>.A0(A)::forward.__loweredModule__(A)::forward.aten::add"
                     + SUBMODULE_FRAMES + """
  File "<string>", line 3, in <unknown>

    def forward(self, x, y):
      return x + y
             ~~~~~ <--- HERE
  """)

SELECTIVE_LOWERED_SUBMODULE = (
    "\n  Module hierarchy:top(C)::<unknown>.A0(A)::forward.__loweredModule__(A)::forward.AA0(AA)::forward"
    ".aten::add" + SUBMODULE_FRAMES + """
  File "<string>", line 3, in <unknown>

    def forward(self, x, y):
      return self.AA0.forward(x, y) + 3
             ~~~~~~~~~~~~~~~~ <--- HERE

  File "<string>", line 3, in forward

    def forward(self, x, y):
      return x + y
             ~~~~~ <--- HERE
  """)

# torch's test's inputs: y has the wrong shape for A0's x + y
BAD_INPUTS = (torch.rand(2, 4), torch.rand(13, 9))


def _torch_bundle_message(c: Any) -> str:
    """What torch's lite interpreter says on torch's own bundle of ``c`` (saved with debug info)."""
    with pytest.raises(Exception) as info:
        _mobile(c, debug_info=True)(*BAD_INPUTS)
    return _lines(str(info.value))


def _selectively_lowered(a: Any) -> Any:
    # torch's test swaps A0 for its lowered module by hand; _jit_to_backend_selective does the same
    return torch._C._jit_to_backend_selective(_c_over(a), to_backend, ["A0"])


def _check_our_bundle(a: Any, engine: str, expected: str, tmp_path: Path) -> None:
    """liteexport's mixed bundle (``--lower A0``) fails in ``engine`` with torch's text: torch's
    lite interpreter passes torch's check (the message contains the expected text); runtime_py's
    message, from its module hierarchy on, is the expected text line for line."""
    path = tmp_path / "mixed.ptl"
    liteexport.export(_c_over(a), path, lower=["A0"])
    if engine == "torch_lite":
        _assert_throws_with_message(lambda: _load_for_lite_interpreter(str(path))(*BAD_INPUTS), expected)
        return
    with pytest.raises(ExecutionError) as info:
        runtime_py.load(path).forward(*(x.numpy() for x in BAD_INPUTS))
    text = _lines(str(info.value))
    assert text[text.index("Module hierarchy:"):].strip() == _lines(expected).strip()


def test_exception_stack_for_compiler_with_lowered_submodule() -> None:  # ...WithLoweredSubModule
    c = _selectively_lowered(_a())
    inputs = (torch.rand(2, 4), torch.rand(2, 4))
    assert torch.equal(c(*inputs), (inputs[0] + inputs[1]) + (inputs[0] + 2))
    assert _lines(LOWERED_SUBMODULE) in _torch_bundle_message(c)


def test_exception_stack_for_compiler_with_selective_lowered_submodule() -> None:  # ...SelectiveLowered...
    assert _lines(SELECTIVE_LOWERED_SUBMODULE) in _torch_bundle_message(_selectively_lowered(_aa_under_a()))


# liteexport's mixed bundle of the same modules (--lower A0), in both engines
ENGINES = ["runtime_py", "torch_lite"]


@pytest.mark.parametrize("engine", ENGINES)
def test_exception_stack_for_compiler_with_lowered_submodule_our_bundle(engine: str, tmp_path: Path) -> None:
    _check_our_bundle(_a(), engine, LOWERED_SUBMODULE, tmp_path)


@pytest.mark.parametrize("engine", ENGINES)
def test_exception_stack_for_compiler_with_selective_lowered_submodule_our_bundle(engine: str, tmp_path: Path) -> None:
    _check_our_bundle(_aa_under_a(), engine, SELECTIVE_LOWERED_SUBMODULE, tmp_path)
