"""Round trips and hostile inputs for bundle_format.debug_table_codec."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from bundle_format.debug_table import DEBUG_TABLE_FORMAT_VERSION, DebugEntry, DebugTable, SourceFrame
from bundle_format.debug_table_codec import decode_debug_table, encode_debug_table
from runtime_py.errors import FormatError, InternalError

_SNIPPET = '    x = self.conv(x) + ü\n        ~~~~~~~~~ <--- HERE\n'


def _entry(handle: int, frames: int = 2) -> DebugEntry:
    return DebugEntry(
        handle=handle,
        method="forward",
        node_kind="aten::conv2d",
        module_hierarchy="top(TinyCNN).features(Sequential).0(Conv2d)",
        frames=tuple(SourceFrame(f"f{i}", "examples/tiny_cnn.py", 10 + i, _SNIPPET) for i in range(frames)),
    )


TABLES = {
    "empty": DebugTable(()),
    "one": DebugTable((_entry(0, 1),)),
    "multi_frame": DebugTable((_entry(-5, 0), _entry(1, 3), _entry(2**40, 5))),
    "unicode": DebugTable((DebugEntry(7, "förward", "aten::add", "top(Ä)", (
        SourceFrame("λ", "ファイル.py", 2**32 - 1, "☃ 😀\n~~~~ <--- HERE"),)),)),
    "empty_strings": DebugTable((DebugEntry(1, "", "", "", (SourceFrame("", "", 0, ""),)),)),
    "extremes": DebugTable((_entry(-(2**63)), _entry(2**63 - 1))),
}


@pytest.mark.parametrize("table", TABLES.values(), ids=TABLES.keys())
def test_round_trip(table: DebugTable) -> None:
    data = encode_debug_table(table)
    assert data[4:8] == b"LXDT"
    assert decode_debug_table(data) == table
    assert decode_debug_table(memoryview(data)) == table
    assert decode_debug_table(np.frombuffer(data, np.uint8)) == table
    assert encode_debug_table(table) == data


def test_lookup() -> None:
    table = decode_debug_table(encode_debug_table(TABLES["multi_frame"]))
    assert table.lookup(1) == _entry(1, 3)
    assert table.lookup(2**40) == _entry(2**40, 5)
    assert table.lookup(-5) == _entry(-5, 0)
    assert table.lookup(0) is None and table.lookup(2**41) is None and table.lookup(-6) is None
    assert DebugTable(()).lookup(0) is None


@pytest.mark.parametrize("entries", [(_entry(2), _entry(1)), (_entry(1), _entry(1))], ids=["unsorted", "dup"])
def test_encode_rejects_unsorted(entries: tuple[DebugEntry, ...]) -> None:
    with pytest.raises(InternalError):
        encode_debug_table(DebugTable(entries))


def _encode_unchecked(table: DebugTable) -> bytes:
    import bundle_format.debug_table_codec as codec

    original = codec._order_problem
    codec._order_problem = lambda previous, handle: None  # type: ignore[assignment]
    try:
        return encode_debug_table(table)
    finally:
        codec._order_problem = original  # type: ignore[assignment]


@pytest.mark.parametrize("entries", [(_entry(2), _entry(1)), (_entry(1), _entry(1))], ids=["unsorted", "dup"])
def test_decode_rejects_unsorted(entries: tuple[DebugEntry, ...]) -> None:
    pattern = r"not sorted by unique handle: 1 follows \d \(at DebugTable.entries\[1\]"
    with pytest.raises(FormatError, match=pattern):
        decode_debug_table(_encode_unchecked(DebugTable(entries)))


def test_wrong_format_version_message() -> None:
    data = encode_debug_table(replace(TABLES["one"], format_version=DEBUG_TABLE_FORMAT_VERSION + 4))
    with pytest.raises(FormatError) as info:
        decode_debug_table(data)
    assert info.value.message.startswith(
        f"unsupported debug table format version {DEBUG_TABLE_FORMAT_VERSION + 4}; "
        f"this runtime reads version {DEBUG_TABLE_FORMAT_VERSION} (at DebugTable.format_version, byte ")


SMALL = encode_debug_table(TABLES["unicode"])


@pytest.mark.parametrize("data", [
    b"", b"abc", b"\x08\x00\x00\x00LXDP" + SMALL[8:], b"\xff\xff\xff\xffLXDT" + SMALL[8:], bytes(16),
], ids=["empty", "3_bytes", "wrong_identifier", "root_out_of_range", "zeros"])
def test_hostile_headers(data: bytes) -> None:
    with pytest.raises(FormatError):
        decode_debug_table(data)


@pytest.mark.parametrize("length", range(len(SMALL)))
def test_truncations(length: int) -> None:
    # cutting only the trailing alignment padding leaves a valid buffer; anything more must fail
    try:
        assert decode_debug_table(SMALL[:length]) == TABLES["unicode"]
    except FormatError:
        return
    assert length >= len(SMALL) - 7


def test_invalid_utf8() -> None:
    data = bytearray(SMALL)
    pos = data.index("☃".encode())
    data[pos] = 0xFF
    with pytest.raises(FormatError, match=r"not valid UTF-8 .*DebugTable.entries\[0\].frames\[0\].snippet"):
        decode_debug_table(bytes(data))


def test_random_bit_flips() -> None:
    rng = random.Random(7)
    data0 = encode_debug_table(TABLES["multi_frame"])
    errors = 0
    for _ in range(2000):
        data = bytearray(data0)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        try:
            assert isinstance(decode_debug_table(bytes(data)), DebugTable)
        except FormatError:
            errors += 1
    assert errors > 0
