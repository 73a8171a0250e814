"""Run one operator both ways: our kernel (through bind_operator, on a stack) and torch.ops."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bundle_format import ptmf
from runtime_py.operators import OPERATORS, bind_operator


def split_key(key: str) -> tuple[str, str]:
    ns, _, rest = key.partition("::")
    name, _, overload = rest.partition(".")
    return f"{ns}::{name}", overload


def ours(key: str, *args: Any, num_args: int | None = None) -> list[Any]:
    """Push args, run our kernel, return what it pushed."""
    name, overload = split_key(key)
    given = len(args) if num_args is None else num_args
    kernel = bind_operator(ptmf.Operator(name, overload, given), "test")
    stack: list[Any] = ["sentinel", *args]
    if OPERATORS[key].schema.varargs:
        stack.append(len(args))
    kernel(stack)
    assert stack[0] == "sentinel"
    return stack[1:]


def to_torch(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    if isinstance(value, list):
        return [to_torch(v) for v in value]
    if isinstance(value, tuple):
        return tuple(to_torch(v) for v in value)
    return value


def theirs(key: str, *args: Any) -> list[Any]:
    """torch.ops.<ns>.<name>.<overload>(*args), kwarg-only arguments passed by name."""
    name, overload = split_key(key)
    ns, op_name = name.split("::")
    packet = getattr(getattr(torch.ops, ns), op_name)
    fn = getattr(packet, overload or "default")
    schema = OPERATORS[key].schema
    positional, keywords = [], {}
    for arg, value in zip(schema.arguments, args, strict=False):
        if arg.kwarg_only:
            keywords[arg.name] = to_torch(value)
        else:
            positional.append(to_torch(value))
    result = fn(*positional, **keywords)
    if len(schema.returns) == 1:
        return [result]
    return list(result) if schema.returns or schema.varret else []


def to_numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    if isinstance(value, list | tuple):
        return type(value)(to_numpy(v) for v in value)
    return value


def assert_same(mine: Any, expected: Any, rtol: float = 1e-4, atol: float = 1e-5, where: str = "") -> None:
    expected = to_numpy(expected)
    if isinstance(expected, np.ndarray):
        assert isinstance(mine, np.ndarray), f"{where}: expected a tensor, got {type(mine).__name__}"
        assert mine.dtype == expected.dtype, f"{where}: dtype {mine.dtype} != torch's {expected.dtype}"
        assert mine.shape == expected.shape, f"{where}: shape {mine.shape} != torch's {expected.shape}"
        np.testing.assert_allclose(mine.astype(np.float64) if mine.dtype.kind != "b" else mine,
                                   expected.astype(np.float64) if expected.dtype.kind != "b" else expected,
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    elif isinstance(expected, list | tuple):
        assert isinstance(mine, list | tuple) and len(mine) == len(expected), f"{where}: {mine!r} != {expected!r}"
        for i, (m, e) in enumerate(zip(mine, expected, strict=True)):
            assert_same(m, e, rtol, atol, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert isinstance(mine, float), f"{where}: {mine!r} is not a float"
        assert mine == pytest_approx(expected), f"{where}: {mine!r} != {expected!r}"
    else:
        assert type(mine) is type(expected) and mine == expected, f"{where}: {mine!r} != {expected!r}"


def pytest_approx(value: float) -> Any:
    import pytest

    return pytest.approx(value, rel=1e-6, abs=1e-9, nan_ok=True)


def check(key: str, *args: Any, num_args: int | None = None, rtol: float = 1e-4, atol: float = 1e-5) -> list[Any]:
    """Our outputs equal torch's on the same arguments (ours may get fewer: defaults filled)."""
    given = args if num_args is None else args[:num_args]
    mine = ours(key, *given, num_args=num_args)
    expected = theirs(key, *given)
    assert len(mine) == len(expected), f"{key}: pushed {len(mine)} values, torch returns {len(expected)}"
    for i, (m, e) in enumerate(zip(mine, expected, strict=True)):
        assert_same(m, e, rtol, atol, f"{key} output {i}")
    return mine
