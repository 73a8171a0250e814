"""Zip lite models that are malicious, corrupt or of an unknown version end in FormatError."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_bytes
from bundle_format.restricted_unpickler import restricted_loads
from runtime_py.errors import FormatError
from runtime_py.module import Module


def _zip(records: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, data in records.items():
            z.writestr(f"model/{name}", data)
    return out.getvalue()


def _bytecode(version: int = 8) -> bytes:
    return pickle.dumps((version,), protocol=2)


def _calls(module: str, name: str, arg: str) -> bytes:
    """A protocol-0 pickle that calls ``module.name(arg)`` when loaded with plain pickle."""
    return f"c{module}\n{name}\n(V{arg}\ntR.".encode()


@pytest.mark.parametrize("module, name", [
    ("os", "system"), ("posix", "system"), ("builtins", "eval"), ("builtins", "exec"),
    ("subprocess", "check_call"), ("torch", "load"), ("__builtin__", "eval"),
])
@pytest.mark.parametrize("record", ["data.pkl", "bytecode.pkl"])
def test_malicious_globals_are_refused_not_run(tmp_path: Path, module: str, name: str, record: str) -> None:
    sentinel = tmp_path / "pwned"
    command = f"touch {sentinel}" if name in ("system", "check_call") else f"open({str(sentinel)!r}, 'w')"
    payload = _calls(module, name, command)
    records = {"bytecode.pkl": _bytecode(), "data.pkl": payload}
    records[record] = payload
    with pytest.raises(FormatError, match=f"refuses to load global {module}.{name}"):
        read_bundle_bytes(_zip(records), "evil.ptl")
    assert not sentinel.exists()


def test_restricted_unpickler_refuses_reduce_of_allowed_lookalikes(tmp_path: Path) -> None:
    # The name check is exact: a near miss of an allowed module is refused as well.
    with pytest.raises(FormatError, match="refuses to load global torch._utils_evil._rebuild_tensor_v2"):
        restricted_loads(_calls("torch._utils_evil", "_rebuild_tensor_v2", "x"), "data.pkl")


def test_torch_classes_never_import(tmp_path: Path) -> None:
    obj = restricted_loads(b"c__torch__.os\nsystem\n)\x81}b.", "data.pkl")
    assert type(obj).type_name == "__torch__.os.system" and obj.state == {}


@pytest.mark.parametrize("version", [3, 4, 9, 10])
def test_bytecode_version_out_of_range(version: int) -> None:
    with pytest.raises(FormatError, match=rf"bytecode version {version}.*versions 5\.\.8"):
        read_bundle_bytes(_zip({"bytecode.pkl": _bytecode(version), "data.pkl": b"N."}), "old.ptl")


def test_not_a_lite_model() -> None:
    with pytest.raises(FormatError, match="without bytecode.pkl"):
        read_bundle_bytes(_zip({"data.pkl": b"N."}), "full.pt")


def test_corrupt_pickle_and_missing_storage() -> None:
    with pytest.raises(FormatError, match="bytecode.pkl is not a valid pickle"):
        read_bundle_bytes(_zip({"bytecode.pkl": _bytecode()[:-3], "data.pkl": b"N."}), "m.ptl")
    storage_pid = b"(Vstorage\nctorch\nFloatStorage\nV0\nVcpu\nI4\ntQ."
    with pytest.raises(FormatError, match="no tensor data record data/0"):
        read_bundle_bytes(_zip({"bytecode.pkl": _bytecode(), "data.pkl": storage_pid}), "m.ptl")


def test_every_truncation_is_a_format_error() -> None:
    data = _zip({"bytecode.pkl": _bytecode(), "data.pkl": b"c__torch__\nM\n)\x81}b.", "data/0": bytes(64)})
    for length in range(4, len(data) - 1, 5):
        with pytest.raises(FormatError):
            read_bundle_bytes(data[:length], "cut.ptl")


def _seed_zip_with(record: str, payload: bytes) -> bytes:
    from tests.fuzz import harness

    data = harness.load_seeds()["torch_linear.zip.bin"]
    return harness.rezip([(info.filename, payload if info.filename.endswith("/" + record) else content)
                          for info, content in harness.zip_members(data)])


def _linear_outputs() -> np.ndarray:
    from tests.fuzz import harness

    module = Module(read_bundle_bytes(harness.load_seeds()["torch_linear.zip.bin"]))
    weights = [s for s in module.ptmf.ivalues if isinstance(s, ptmf.TensorMetadata)]
    assert weights and all(t.scalar_type == ptmf.ScalarType.FLOAT for t in weights)
    return np.asarray(module.forward(np.arange(4, dtype=np.float32).reshape(1, 4)))


@pytest.mark.parametrize("payload, target", [
    # torch.FloatStorage's stand-in told it is float16 (scalar type 5)
    (b"\x80\x02ctorch\nFloatStorage\n}X\x0b\x00\x00\x00scalar_typeK\x05sb.", "StorageType"),
    # _rebuild_tensor_v2's stand-in stripped of its default arguments (slot state: setattr)
    (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nN}X\x0c\x00\x00\x00__defaults__Ns\x86b.", "_StandIn"),
    # a model class itself (not an instance) given state
    (b"\x80\x02c__torch__\nM\nN}X\x09\x00\x00\x00type_nameK\x01s\x86b.", "type"),
])
def test_build_on_shared_stand_ins_is_refused_and_poisons_nothing(payload: bytes, target: str) -> None:
    before = _linear_outputs()
    with pytest.raises(FormatError, match=f"sets the state of {target} \\(pickle BUILD\\)") as info:
        read_bundle_bytes(_seed_zip_with("data.pkl", payload), "evil.ptl")
    assert info.value.where.startswith("data.pkl, byte ")
    np.testing.assert_array_equal(_linear_outputs(), before)  # a later load in the same process is unharmed


def test_stand_ins_are_immutable() -> None:
    from bundle_format import restricted_unpickler

    for stand_in in restricted_unpickler._ALLOWED.values():
        with pytest.raises((AttributeError, TypeError)):
            stand_in.scalar_type = 5
        with pytest.raises((AttributeError, TypeError)):
            stand_in.__dict__  # noqa: B018  (nothing to update behind the frozen fields)
