"""The kernel contract: stack discipline, default filling, varargs, views vs copies, in-place
writes, read-only bundle tensors and errors that name the operator. Runs without torch."""

from __future__ import annotations

import numpy as np
import pytest

from bundle_format import ptmf
from runtime_py.errors import ExecutionError
from runtime_py.operators import OPERATORS, bind_operator, is_supported


def run(name: str, overload: str, args: list, num_args: int = -1) -> list:
    stack = ["below", *args]
    bind_operator(ptmf.Operator(name, overload, num_args), "f")(stack)
    assert stack[0] == "below"
    return stack[1:]


def test_registry_is_large_and_keyed_by_name_and_overload() -> None:
    assert len(OPERATORS) > 600
    assert "aten::add.Tensor" in OPERATORS and "aten::linear" in OPERATORS
    assert is_supported("aten::linear", "") and not is_supported("aten::linear", "out")


def test_unknown_operator_fails_when_called_naming_itself() -> None:
    kernel = bind_operator(ptmf.Operator("aten::frobnicate", "fancy", 2), "__torch__.M.forward")
    with pytest.raises(ExecutionError, match=r"aten::frobnicate \(overload 'fancy'\).*M.forward"):
        kernel([1, 2])


def test_defaults_fill_omitted_trailing_arguments() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = run("aten::add", "Tensor", [x, x], num_args=2)  # alpha=1 omitted
    np.testing.assert_array_equal(y, 2 * x)
    (y,) = run("aten::sum", "dim_IntList", [x, [1]], num_args=2)  # keepdim=False, dtype=None omitted
    assert y.shape == (2,)
    (y,) = run("aten::max_pool2d", "", [np.ones((1, 1, 4, 4), np.float32), [2, 2]], num_args=2)
    assert y.shape == (1, 1, 2, 2)  # stride=[] means kernel_size, padding=0 -> [0, 0]


def test_all_arguments_when_num_args_is_minus_one() -> None:
    x = np.ones(3, np.float32)
    (y,) = run("aten::add", "Tensor", [x, x, 3])
    np.testing.assert_array_equal(y, 4 * x)


def test_too_few_arguments_for_required_ones_is_reported() -> None:
    kernel = bind_operator(ptmf.Operator("aten::add", "Tensor", 1), "f")
    with pytest.raises(ExecutionError, match="aten::add.Tensor.*'other' has no default"):
        kernel([np.ones(1)])


def test_multiple_returns_are_pushed_separately() -> None:
    values, indices = run("aten::max", "dim", [np.array([[1.0, 3.0], [4.0, 2.0]], np.float32), 1], num_args=2)
    assert values.tolist() == [3.0, 4.0] and indices.tolist() == [1, 0]


def test_vararg_operator_pops_its_count() -> None:
    stack = ["below", "{}-{}", 1, "b", 3]  # OPN pushes N=3 on top of the arguments
    bind_operator(ptmf.Operator("aten::format", "", -1), "f")(stack)
    assert stack == ["below", "1-b"]


def test_tuple_unpack_pushes_every_element() -> None:
    assert run("prim::TupleUnpack", "", [(1, 2, 3)]) == [1, 2, 3]


def test_zero_dim_results_are_arrays_and_numbers_are_python() -> None:
    (s,) = run("aten::sum", "", [np.ones(3, np.float32)], num_args=1)
    assert isinstance(s, np.ndarray) and s.shape == () and s.dtype == np.float32
    (v,) = run("aten::item", "", [np.asarray(2.5, np.float32)])
    assert type(v) is float
    (n,) = run("aten::size", "int", [np.ones((2, 3)), 1])
    assert type(n) is int


@pytest.mark.parametrize(("name", "overload", "extra"), [
    ("aten::view", "", [[6]]), ("aten::reshape", "", [[3, 2]]), ("aten::transpose", "int", [0, 1]),
    ("aten::select", "int", [0, 1]), ("aten::slice", "Tensor", [1, 0, 2, 1]), ("aten::unsqueeze", "", [0]),
    ("aten::expand", "", [[4, 2, 3]]), ("aten::permute", "", [[1, 0]]), ("aten::t", "", []),
    ("aten::squeeze", "", []), ("aten::narrow", "", [1, 1, 2]), ("aten::flatten", "using_ints", [0, -1]),
])
def test_views_share_memory(name: str, overload: str, extra: list) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = run(name, overload, [x, *extra], num_args=1 + len(extra))
    assert np.shares_memory(x, y)


def test_selecting_one_element_is_a_writable_view() -> None:
    x = np.zeros((2, 3), np.float32)
    (row,) = run("aten::select", "int", [x, 0, 0])
    (element,) = run("aten::select", "int", [row, 0, 1])
    assert isinstance(element, np.ndarray) and element.shape == ()
    run("aten::copy_", "", [element, np.asarray(3.0)], num_args=2)  # x[0, 1] = 3.0
    assert x[0, 1] == 3.0


def test_split_chunk_unbind_are_views_and_copies_are_not() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for name, overload, extra in (("aten::chunk", "", [2, 1]), ("aten::split", "Tensor", [1]),
                                  ("aten::unbind", "int", [0])):
        (parts,) = run(name, overload, [x, *extra], num_args=1 + len(extra))
        assert all(np.shares_memory(x, p) for p in parts)
    for name, overload, extra in (("aten::clone", "", []), ("aten::repeat", "", [[1, 1]]),
                                  ("aten::index", "Tensor", [[np.array([0])]])):
        (y,) = run(name, overload, [x, *extra], num_args=1 + len(extra))
        assert not np.shares_memory(x, y)


def test_in_place_ops_write_through_views() -> None:
    x = np.zeros((2, 3), np.float32)
    (row,) = run("aten::select", "int", [x, 0, 1])
    (out,) = run("aten::add_", "Scalar", [row, 2], num_args=2)
    assert out is row and x[1].tolist() == [2.0, 2.0, 2.0]
    run("aten::copy_", "", [x[0], np.array([1, 2, 3])], num_args=2)  # int source converted
    assert x[0].tolist() == [1.0, 2.0, 3.0]
    run("aten::masked_fill_", "Scalar", [x, x > 1.5, -1.0])
    assert (x == -1).sum() == 5
    run("aten::relu_", "", [x])
    assert x.min() == 0
    run("aten::index_put_", "", [x, [np.array([0, 0])], np.array([5.0], np.float32), True])
    assert x[0].tolist() == [11.0, 10.0, 10.0]
    run("aten::zero_", "", [x])
    assert not x.any()


def test_in_place_refuses_an_unsafe_cast() -> None:
    x = np.zeros(3, np.int64)
    with pytest.raises(ExecutionError, match="aten::add_.Scalar.*can't be cast"):
        run("aten::add_", "Scalar", [x, 1.5], num_args=2)


def test_writing_into_a_bundle_tensor_says_it_is_read_only() -> None:
    x = np.zeros(3, np.float32)
    x.flags.writeable = False
    for name, overload, args in (("aten::add_", "Scalar", [x, 1]), ("aten::fill_", "Scalar", [x, 1.0]),
                                 ("aten::copy_", "", [x, np.ones(3)]), ("aten::relu_", "", [x])):
        with pytest.raises(ExecutionError, match=f"{name}.*bundle's tensors are read-only"):
            run(name, overload, args, num_args=len(args))


def test_errors_name_the_operator() -> None:
    with pytest.raises(ExecutionError, match=r"aten::matmul: shapes \(2, 3\) and \(4, 5\) cannot be multiplied"):
        run("aten::matmul", "", [np.ones((2, 3)), np.ones((4, 5))])
    with pytest.raises(ExecutionError, match="aten::__getitem__.t: list index out of range"):
        run("aten::__getitem__", "t", [[1], 3])
    with pytest.raises(ExecutionError, match="aten::view: shape"):
        run("aten::view", "", [np.ones(6), [4, -1]])
    with pytest.raises(ExecutionError, match="aten::floordiv.int: ZeroDivisionError"):
        run("aten::floordiv", "int", [1, 0])
    with pytest.raises(ExecutionError, match="aten::dropout: dropout in training mode"):
        run("aten::dropout", "", [np.ones(3), 0.5, True])


def test_lists_are_mutated_in_place() -> None:
    items = [1, 2]
    (same,) = run("aten::append", "t", [items, 3])
    assert same is items and items == [1, 2, 3]
    assert run("aten::pop", "t", [items], num_args=1) == [3]
    run("aten::insert", "t", [items, 0, 0])
    run("aten::_set_item", "t", [items, -1, 9])
    assert items == [0, 1, 9]
    d: dict[str, int] = {}
    run("aten::_set_item", "str", [d, "k", 1])
    assert d == {"k": 1}
