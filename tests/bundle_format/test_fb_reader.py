"""fb_reader's shortcuts: a string read twice is checked once, and no shortcut carries over
from a good buffer to a malformed one."""

from __future__ import annotations

import struct

import flatbuffers
import pytest

from bundle_format import fb_reader as fr
from runtime_py.errors import FormatError

_PAIR = fr.layout(fr.TableSpec("Pair", (fr.Field("a", fr.Kind.STRING, 4), fr.Field("b", fr.Kind.STRING, 4),
                                        fr.Field("n", fr.Kind.SCALAR, 4))))


def _pair(shared: bool) -> tuple[bytes, int]:
    """A root table Pair{a, b, n=7} (a and b the same string object when ``shared``) and its position."""
    b = flatbuffers.Builder(64)
    first = b.CreateString("hello")
    second = first if shared else b.CreateString("hello")
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(0, first, 0)
    b.PrependUOffsetTRelativeSlot(1, second, 0)
    b.PrependInt32Slot(2, 7, 0)
    b.Finish(b.EndObject())
    data = bytes(b.Output())
    return data, struct.unpack_from("<I", data, 0)[0]


def _read(data: bytes, root: int) -> tuple[fr.TableReader, str | None, str | None]:
    r = fr.TableReader(data)
    a, b, _n = r.table(root, _PAIR, "Pair")
    return r, r.string(a, "Pair.a"), r.string(b, "Pair.b")


def test_a_shared_string_is_checked_and_charged_once() -> None:
    shared, root = _pair(shared=True)
    separate, other_root = _pair(shared=False)
    r_shared, a, b = _read(shared, root)
    assert a == b == "hello" and a is b
    r_separate, c, d = _read(separate, other_root)
    assert c == d == "hello"
    # one string's work less (5 bytes), once the budgets' different starts are set aside
    spent_shared = fr.DEFAULT_WORK_FACTOR * len(shared) + fr.WORK_SLACK - r_shared.work_left
    spent_separate = fr.DEFAULT_WORK_FACTOR * len(separate) + fr.WORK_SLACK - r_separate.work_left
    assert spent_separate - spent_shared == len("hello")


def test_a_vtable_seen_before_in_a_good_buffer_still_has_its_position_checked() -> None:
    data, root = _pair(shared=False)
    _read(data, root)
    # the table now claims a vtable 2 bytes before the end of the buffer
    moved = bytearray(data)
    struct.pack_into("<i", moved, root, root - len(data) + 2)
    with pytest.raises(FormatError, match="vtable header .* outside"):
        _read(bytes(moved), root)


def test_a_vtable_differing_from_one_seen_before_is_checked() -> None:
    data, root = _pair(shared=False)
    _read(data, root)
    vt = root - struct.unpack_from("<i", data, root)[0]
    bad = bytearray(data)
    struct.pack_into("<H", bad, vt + 4 + 2 * 2, 0xFFF0)  # field n far past the table's inline bytes
    with pytest.raises(FormatError, match="Pair.n"):
        _read(bytes(bad), root)
