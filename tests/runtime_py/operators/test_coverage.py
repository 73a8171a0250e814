"""The operator table covers every operator torch's lite-interpreter bytecode uses for the
nn modules issue 3 lists (scripted in eval mode, saved in the zip format)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from runtime_py.operators import OPERATORS  # noqa: E402
from tests.runtime_py.operators.discover_operators import MODULES, module_operators  # noqa: E402


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_operators_are_implemented(name: str) -> None:
    missing = sorted(module_operators(name) - set(OPERATORS))
    assert not missing, f"{name} uses operators runtime_py lacks: {missing}"
