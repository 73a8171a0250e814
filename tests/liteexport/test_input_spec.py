"""The typed input specs the CLI's --input-shape and --dim give (liteexport/input_spec.py)."""

from __future__ import annotations

import dataclasses

import pytest

from liteexport.input_spec import (
    DimRange,
    InputSpecError,
    TensorSpec,
    as_tensor_spec,
    parse_dim_range,
    parse_tensor_spec,
    parse_tensor_specs,
)


@pytest.mark.parametrize(("text", "shape", "dtype"), [
    ("1x3x224x224", (1, 3, 224, 224), "float32"),
    ("1xS:int64", (1, "S"), "int64"),
    ("BxS:int32", ("B", "S"), "int32"),
    ("4:bool", (4,), "bool"),
    ("1x-1x8:float32", (1, -1, 8), "float32"),
    (":int64", (), "int64"),
])
def test_parses_sizes_names_and_dtypes(text: str, shape: tuple[int | str, ...], dtype: str) -> None:
    assert parse_tensor_spec(text) == TensorSpec(shape, dtype)


def test_a_method_takes_a_comma_separated_list() -> None:
    assert parse_tensor_specs("1xS:int64,1xS:int64") == (TensorSpec((1, "S"), "int64"),) * 2
    assert str(parse_tensor_specs("1xS:int64,2x3")[1]) == "2x3"
    assert str(TensorSpec((1, "S"), "int64")) == "1xS:int64"


@pytest.mark.parametrize(("text", "problem"), [
    ("1x3:float64", "dtype 'float64' is not one of float32, int64, int32, bool"),
    ("1x3.5", "size '3.5' is neither a number nor a dim name"),
    ("1xS-1", "size 'S-1' is neither"),
    ("1x-2", "neither a size >= 0"),
    ("", None),
])
def test_malformed_specs_say_what_is_wrong(text: str, problem: str | None) -> None:
    if problem is None:
        with pytest.raises(InputSpecError, match="no input shapes"):
            parse_tensor_specs(text)
        return
    with pytest.raises(InputSpecError, match=problem.replace("(", r"\(")) as info:
        parse_tensor_spec(text)
    assert repr(text) in str(info.value)


def test_dim_ranges() -> None:
    assert parse_dim_range("S=1..128") == DimRange("S", 1, 128)
    assert parse_dim_range(" seq = 0 .. 7 ") == DimRange("seq", 0, 7)
    for bad, problem in (("S=8..1", "0 <= lo <= hi"), ("S=1-128", "expected NAME=LO..HI"),
                         ("1S=1..2", "must be a name")):
        with pytest.raises(InputSpecError, match=problem):
            parse_dim_range(bad)


def test_specs_are_frozen_and_plain_shapes_are_float32() -> None:
    spec = TensorSpec((1, "S"), "int64")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.dtype = "bool"  # type: ignore[misc]
    assert spec.static_shape == (1, -1) and spec.dim_names == ("S",)
    assert as_tensor_spec((2, 3)) == TensorSpec((2, 3), "float32")
    assert as_tensor_spec(spec) is spec
