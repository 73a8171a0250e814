"""Parsing of shapes and random specs; reading input files (no CLI)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from liteexport.run_inputs import RandomSpec, collect_inputs, parse_shape, read_input_file
from runtime_py.errors import InputError


@pytest.mark.parametrize("text, shape", [("1x3x32x32", (1, 3, 32, 32)), ("1,3,32,32", (1, 3, 32, 32)),
                                         ("7", (7,)), ("2X0", (2, 0))])
def test_parse_shape(text: str, shape: tuple[int, ...]) -> None:
    assert parse_shape(text) == shape


@pytest.mark.parametrize("text", ["", "x", "1x", "1x-2", "a,b", "1.5x2"])
def test_parse_shape_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="is not a shape"):
        parse_shape(text)


def test_random_spec() -> None:
    assert RandomSpec.parse("2x3") == RandomSpec((2, 3), "float32")
    assert RandomSpec.parse("2x3:int64") == RandomSpec((2, 3), "int64")
    assert RandomSpec.parse("4:bool").make(np.random.default_rng(0)).dtype == np.bool_


def test_npz_order_follows_argument_names(tmp_path: Path) -> None:
    np.savez(tmp_path / "a.npz", b=np.zeros(2), a=np.ones(3))
    assert [x.shape for x in read_input_file(tmp_path / "a.npz", ["a", "b"])] == [(3,), (2,)]
    assert [x.shape for x in read_input_file(tmp_path / "a.npz", ["x", "y"])] == [(2,), (3,)]  # file order


def test_files_then_random(tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((1, 2), np.float32))
    arrays = collect_inputs([str(tmp_path / "x.npy")], [RandomSpec((3,))], 0, ["x", "y"])
    assert [a.shape for a in arrays] == [(1, 2), (3,)]


def test_object_array_is_refused(tmp_path: Path) -> None:
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="o.npy"):
        read_input_file(tmp_path / "o.npy", ["x"])
