"""The rule that tells the bundle's errors (exit 7) from ours (exit 70) at a kernel call:
errors.is_value_failure recognises numpy's own complaints about values by their wording, so
these tests pin that wording to the numpy installed; kernels that used to leave a bad value to
a Python error now refuse it themselves. Runs without torch."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from bundle_format import ptmf
from runtime_py.errors import ExecutionError, InternalError, is_value_failure
from runtime_py.operators import bind_operator


def _raised(f: Callable[[], Any]) -> BaseException:
    try:
        f()
    except Exception as exc:  # noqa: BLE001 - the point is which exception numpy raises
        return exc
    raise AssertionError("no exception")


@pytest.mark.parametrize("make", [
    lambda: np.bitwise_and(np.array([1.5]), np.array([True])),  # no loop for float
    lambda: np.floor(np.array([1j])),
    lambda: np.negative(np.array([True])),  # numpy's boolean negative
    lambda: np.subtract(np.array([True]), np.array([True])),  # numpy's boolean subtract
    lambda: np.take(np.arange(3), np.array([5])),  # an index value out of bounds
    lambda: np.add(np.array(["a"]), 1),  # UFuncTypeError
    lambda: np.linalg.inv(np.zeros((2, 2))),  # LinAlgError, a ValueError
    lambda: 1 // 0,
])
def test_numpys_value_complaints_are_value_failures(make: Callable[[], Any]) -> None:
    assert is_value_failure(_raised(make))


@pytest.mark.parametrize("exc", [TypeError("unsupported operand type(s)"), AttributeError("x"), KeyError("x"),
                                 IndexError("tuple index out of range"), NameError("x"), AssertionError("x")])
def test_our_python_errors_are_not(exc: Exception) -> None:
    assert not is_value_failure(exc)


def _call(name: str, *args: Any) -> Any:
    op, _, overload = name.partition(".")
    stack = list(args)
    bind_operator(ptmf.Operator(op, overload, len(args)), "f")(stack)
    return stack


@pytest.mark.parametrize("name, args, message", [
    ("aten::gather", (np.ones((2, 2)), 0, np.ones((2, 2)), False), "gather(): expected an index of an integer dtype"),
    ("aten::index_select", (np.ones(3), 0, np.array([0.5])), "index_select(): expected an index of an integer dtype"),
    ("aten::index_select", (np.ones(3), 0, np.array([7])), "index 7 is out of bounds for axis 0 with size 3"),
    ("aten::scatter.value", (np.ones(3), 0, np.zeros((1, 1), np.int64), 2.0),
     "index tensor must have the same number of dimensions as self tensor"),
    ("aten::sym_size.int", (np.array(3.0), 0), "dimension specified as 0 but the tensor has no dimensions"),
    ("aten::split.Tensor", (np.array(3.0), 1, 0), "dimension specified as 0 but the tensor has no dimensions"),
    ("aten::Int.Tensor", (np.array(1 + 2j),), "a complex tensor has no int value"),
    ("prim::dtype", (np.array([1j]),), "runtime_py has no c10 ScalarType for complex128 tensors"),
    ("aten::ljust", ("ab", 5, ""), "the fill character must be exactly one character long"),
    ("aten::ord", ("",), "ord() expected a character, but string of length 0 found"),
    ("aten::neg", (np.array([True]),), "The numpy boolean negative"),
    ("aten::linear", (np.ones((2, 3)), np.array(1.0), None), "linear expects a weight of 1 or 2 dims, got shape []"),
])
def test_kernels_refuse_bad_values_as_the_bundles_error(name: str, args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ExecutionError, match=re.escape(message)) as failure:
        _call(name, *args)
    assert not isinstance(failure.value, InternalError)
