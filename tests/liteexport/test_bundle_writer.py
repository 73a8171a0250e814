"""write_bundle streams the weights from their own memory: the file is exactly encode_module's
bytes, and the builder never holds a copy of the weights."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_bytes
from bundle_format.ptmf_writer import encode_module, encode_module_chunks
from liteexport.bundle import pack, write_bundle
from liteexport.lowered import CompiledModule


def test_the_file_holds_encode_modules_bytes(tmp_path: Path, linear_relu_module: CompiledModule) -> None:
    out = tmp_path / "m.ptl"
    size = write_bundle(linear_relu_module, out)
    data = out.read_bytes()
    assert size == len(data)
    assert data == encode_module(pack(linear_relu_module))


def test_weights_are_written_from_their_own_memory(linear_relu_module: CompiledModule) -> None:
    module = pack(linear_relu_module)
    chunks = encode_module_chunks(module)
    metadata_size = chunks[0].nbytes
    for weight in linear_relu_module.weights:
        assert any(np.shares_memory(np.asarray(chunk), weight) for chunk in chunks[1:])
    assert metadata_size % ptmf.STORAGE_ALIGNMENT == 0
    assert metadata_size < sum(c.nbytes for c in chunks)  # the storage follows the metadata


def test_empty_and_odd_sized_storages_stay_aligned(linear_relu_module: CompiledModule) -> None:
    weights = (np.zeros(0, np.float32), np.ones(3, np.float32), np.arange(5, dtype=np.float32))
    module = pack(dataclasses.replace(linear_relu_module, weights=weights))
    data = bytearray(encode_module(module))
    base = np.frombuffer(data, np.uint8).ctypes.data
    read = read_bundle_bytes(data)
    assert [s.tobytes() for s in read.storage_data] == [np.asarray(s).tobytes() for s in module.storage_data]
    for storage in read.storage_data:
        assert (storage.ctypes.data - base) % ptmf.STORAGE_ALIGNMENT == 0
