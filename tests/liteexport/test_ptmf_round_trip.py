"""PTMF bundles survive write -> read unchanged, byte-identical on rewrite, and weights are aligned."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_bytes
from bundle_format.ptmf_writer import BundleTooLargeError, encode_module, encode_module_chunks
from liteexport.bundle import pack
from liteexport.lowered import CompiledModule


def test_round_trip_is_lossless(linear_relu_module: CompiledModule) -> None:
    written = pack(linear_relu_module)
    data = encode_module(written)
    read = read_bundle_bytes(data)
    for field in ("bytecode_version", "extra_files", "methods", "state_obj", "ivalues", "object_types",
                  "jit_sources", "jit_constants", "operator_version", "mobile_ivalue_size"):
        assert getattr(read, field) == getattr(written, field), field
    assert [s.tobytes() for s in read.storage_data] == [s.tobytes() for s in written.storage_data]
    assert encode_module(read) == data


def test_export_is_deterministic(linear_relu_module: CompiledModule) -> None:
    assert encode_module(pack(linear_relu_module)) == encode_module(pack(linear_relu_module))


def test_storage_is_16_byte_aligned_and_read_in_place(linear_relu_module: CompiledModule) -> None:
    data = bytearray(encode_module(pack(linear_relu_module)))
    base = np.frombuffer(data, np.uint8).ctypes.data
    module = read_bundle_bytes(data)
    for storage in module.storage_data:
        offset = storage.ctypes.data - base
        assert 0 <= offset < len(data)  # a view into the buffer, not a copy
        assert offset % ptmf.STORAGE_ALIGNMENT == 0


def test_a_bundle_over_2_gib_is_refused_before_anything_is_written(linear_relu_module: CompiledModule) -> None:
    """torch's loader refuses PTMF files over 2 GiB, so the writer does; np.zeros maps untouched
    pages, so the 2 GiB storage costs no memory."""
    huge = dataclasses.replace(pack(linear_relu_module), storage_data=(np.zeros(1 << 31, np.uint8),))
    with pytest.raises(BundleTooLargeError, match=r"would be 2147\d{6} bytes, .* at most 2 GiB"):
        encode_module_chunks(huge)


def test_the_exporter_reports_an_oversized_bundle_as_the_models_problem(
        linear_relu_module: CompiledModule, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """write_bundle turns the format layer's size refusal into ModelError (exit 3) and writes nothing."""
    import liteexport.bundle as bundle
    from liteexport.errors import ModelError

    real = bundle.encode_module_chunks

    def oversized(module: ptmf.Module) -> list[memoryview]:
        return real(dataclasses.replace(module, storage_data=(np.zeros(1 << 31, np.uint8),)))

    monkeypatch.setattr(bundle, "encode_module_chunks", oversized)
    with pytest.raises(ModelError, match="at most 2 GiB") as info:
        bundle.write_bundle(linear_relu_module, tmp_path / "m.ptl")
    assert info.value.exit_code == 3
    assert list(tmp_path.iterdir()) == []
