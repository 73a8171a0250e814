"""Corrupted bundles end in the project's own errors: never IndexError, struct.error, hangs..."""

from __future__ import annotations

import random

import pytest

from bundle_format.bundle_file import read_bundle_bytes
from bundle_format.ptmf_writer import encode_module
from liteexport.bundle import pack
from liteexport.lowered import CompiledModule
from runtime_py.errors import FormatError, InternalError, LiteExportError
from runtime_py.module import Module


def _load(data: bytes) -> None:
    Module(read_bundle_bytes(data))


@pytest.fixture
def bundle(linear_relu_module: CompiledModule) -> bytes:
    return encode_module(pack(linear_relu_module))


@pytest.mark.parametrize("data, message", [
    (b"", "too short"),
    (b"PTMF", "too short"),
    (b"PK\x03\x04" + bytes(60), "zip-format"),
    (bytes(4) + b"XXXX" + bytes(40), "not a PTMF bundle"),
])
def test_not_a_bundle(data: bytes, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        _load(data)


def test_every_truncation_is_a_format_error(bundle: bytes) -> None:
    for length in range(0, len(bundle) - 16, 7):
        with pytest.raises(FormatError):
            _load(bundle[:length])


def test_bit_flips_end_in_our_errors(bundle: bytes) -> None:
    rng = random.Random(1234)
    outcomes = {"loaded": 0, "rejected": 0}
    for _ in range(800):
        data = bytearray(bundle)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        try:
            _load(bytes(data))
            outcomes["loaded"] += 1
        except InternalError:
            raise
        except LiteExportError:
            outcomes["rejected"] += 1
    assert outcomes["rejected"] > 0 and outcomes["loaded"] > 0


def test_wrong_bytecode_version_names_the_accepted_one(linear_relu_module: CompiledModule) -> None:
    from dataclasses import replace

    data = encode_module(replace(pack(linear_relu_module), bytecode_version=7))
    with pytest.raises(FormatError, match="unsupported bytecode version 7: flatbuffer bundles must be version 9"):
        _load(data)


def test_a_lower_layers_error_is_located_once() -> None:
    from types import MappingProxyType

    inner = FormatError("bad program")
    inner.code, inner.fields = "E_TEST", MappingProxyType({"slot": "3"})
    located = inner.at("program of method 'forward'")
    assert str(located) == "bad program (at program of method 'forward')"
    assert (located.code, dict(located.fields)) == ("E_TEST", {"slot": "3"})  # the structured form is kept
    assert located.at("elsewhere") is located  # the innermost location stands
