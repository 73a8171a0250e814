"""The mutation harness shared by the deterministic corpus (tests/fuzz) and atheris (fuzz/).

``exercise(data, kind)`` does what a user of a hostile file would do: load it fully
(``runtime_py.module.Module(read_bundle_bytes(...))``, which runs load-time ``__setstate__``
code and the demo backend's program decoding), and when that succeeds describe it the way
``liteexport inspect`` does and run ``forward`` once on zeros. The only acceptable
failures are LiteExportError subclasses other than InternalError; anything else is a
crasher. ``Mutator`` turns one valid seed into reproducible mutants: truncation, bit flips,
byte overwrites, flatbuffer-aware corruption of uoffsets, vector/string lengths, scalar
fields (union tags, versions, indexes) and vector elements (tensor sizes...), zip-level
corruption of header fields and member names, and pickle-opcode corruption of the records
inside a zip (re-zipped with valid CRCs so the unpickler sees the corruption).
"""

from __future__ import annotations

import io
import os
import pickletools
import random
import re
import signal
import struct
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bundle_format.bundle_file import read_bundle_bytes
from bundle_format.debug_table_codec import decode_debug_table
from bundle_format.program_codec import decode_program
from runtime_py.errors import ExecutionError, FormatError, InputError, InternalError, LiteExportError
from runtime_py.module import Module
from tests.fuzz.format_structure import FbPoints, verify_structure

SEEDS = Path(__file__).parent / "seeds"
# a mutant's forward may loop forever: its bytecode runs under this budget (the seeds need < 100)
FORWARD_INSTRUCTIONS = 100_000
CRASHERS = Path(__file__).parent / "crashers"


class Crash(AssertionError):
    """A mutant made the loader raise something other than a LiteExportError (or InternalError)."""


def kind_of(name: str) -> str:
    """``lowered_mlp.ptmf.bin`` -> ``ptmf``."""
    return name.removesuffix(".bin").rsplit(".", 1)[-1]


def _describe(data: bytes) -> None:
    from liteexport.inspect_bundle import describe, format_description

    fd, path = tempfile.mkstemp(suffix=".ptl")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        format_description(describe(path))
    finally:
        os.unlink(path)


def _run_forward(module: Module, shapes: list[list[int]] | None) -> None:
    if "forward" not in module.method_names:
        return
    schema = module.method_schema("forward")
    if shapes is None:
        shapes = [[1]] * max(len(schema.arguments) - 1, 0)
    try:
        module.forward(*(np.zeros(s, dtype=np.float32) for s in shapes), max_instructions=FORWARD_INSTRUCTIONS)
    except (ExecutionError, InputError):
        pass  # a corrupted program may fail to run, or refuse these zeros; it must fail this way


def exercise(data: bytes, kind: str, shapes: list[list[int]] | None = None, describe: bool = True) -> str:
    """Load (and use) ``data`` as a ``kind`` file; return "ok" or the LiteExportError's class
    name. Raises Crash for any other exception (and for InternalError)."""
    error = failure(data, kind, shapes, describe)
    return "ok" if error is None else type(error).__name__


def failure(data: bytes, kind: str, shapes: list[list[int]] | None = None,
            describe: bool = True) -> LiteExportError | None:
    """What ``exercise`` does, returning the LiteExportError (None: it loaded and ran)."""
    try:
        if kind == "program":
            decode_program(data)
        elif kind == "debug":
            decode_debug_table(data)
        else:
            module = Module(read_bundle_bytes(data))
            if describe:
                _describe(data)
            _run_forward(module, shapes)
        return None
    except InternalError as exc:
        raise Crash(f"InternalError: {exc}") from exc
    except LiteExportError as exc:
        return exc
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise Crash(f"{type(exc).__name__}: {exc}"[:500]) from exc


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Hang


def bounded_failure(data: bytes, kind: str, shapes: list[list[int]] | None, describe: bool,
                    seconds: float) -> LiteExportError | None:
    """``failure`` under a watchdog of ``seconds`` (a loop the budgets missed: far above any real
    load, not a speed check). AssertionError for a crash, a hang, or a FormatError that does not
    say where (table, field, record or byte)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        error = failure(data, kind, shapes, describe)
    except Crash as exc:
        if isinstance(exc.__cause__, _Hang):
            raise AssertionError("hang: no result within the watchdog's time") from None
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if isinstance(error, FormatError):
        assert error.where, f"FormatError without where: {error}"
    return error


# --- flatbuffer-aware mutation points -------------------------------------------------------------

def flatbuffer_points(data: bytes, kind: str) -> FbPoints:
    return verify_structure(data, kind)


# --- zip-aware mutation points --------------------------------------------------------------------

def zip_members(data: bytes) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(info, z.read(info)) for info in z.infolist()]


def rezip(members: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, payload in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, payload)
    return out.getvalue()


def pickle_ops(payload: bytes) -> list[tuple[int, str, object]]:
    """(position, opcode name, argument) of each pickle opcode."""
    try:
        return [(pos, op.name, arg) for op, arg, pos in pickletools.genops(payload)]
    except Exception:
        return []


PickleOp = tuple[int, str, object]

_INTERESTING_32 = (0, 1, 2, 3, 4, 7, 8, 0x7F, 0xFF, 0x7FFF, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
                   0xFFFFFFFE, 0xFFFFFFFF, 0x40000000)
_INTERESTING_64 = (0, 1, 2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1, 2 ** 64 - 1, 2 ** 63, 2 ** 40 + 1, 2 ** 16 + 1)


class Mutator:
    """Reproducible mutants of one seed: ``mutant(i)`` is always the same bytes."""

    def __init__(self, data: bytes, kind: str) -> None:
        self.data = data
        self.kind = kind
        self.fb: FbPoints | None = None
        self.members: list[tuple[zipfile.ZipInfo, bytes]] = []
        if kind == "zip":
            self.members = zip_members(data)
            self.cd_entries = _positions(data, b"PK\x01\x02")
            self.local_headers = _positions(data, b"PK\x03\x04")
            self.eocd = data.rfind(b"PK\x05\x06")
            self.pickles = [(i, info.filename) for i, (info, _) in enumerate(self.members)
                            if info.filename.endswith((".pkl", ".debug_pkl"))]
            self.strategies: list[Callable[[random.Random], bytes]] = [
                self.truncate, self.bit_flips, self.overwrite, self.zip_header, self.zip_header,
                self.member_name, self.pickle_op, self.pickle_op, self.pickle_op, self.pickle_int,
                self.pickle_int, self.pickle_splice]
        else:
            self.fb = flatbuffer_points(data, kind)
            self.strategies = [
                self.truncate, self.bit_flips, self.overwrite, self.fb_offset, self.fb_offset, self.fb_length,
                self.fb_length, self.fb_scalar, self.fb_scalar, self.fb_scalar, self.fb_element, self.fb_element,
                self.fb_table]

    def mutant(self, seed: int) -> bytes:
        rng = random.Random(seed)
        out = rng.choice(self.strategies)(rng)
        if rng.random() < 0.15:  # sometimes stack a second mutation
            out = bytearray(out)
            if out:
                out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
            out = bytes(out)
        return out

    # --- generic ---
    def truncate(self, rng: random.Random) -> bytes:
        return self.data[:rng.randrange(len(self.data))]

    def bit_flips(self, rng: random.Random) -> bytes:
        out = bytearray(self.data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        return bytes(out)

    def overwrite(self, rng: random.Random) -> bytes:
        out = bytearray(self.data)
        pos = rng.randrange(len(out))
        chunk = rng.choice([b"\xff" * 4, b"\x00" * 4, b"\x7f\xff\xff\xff", b"\x80", bytes([rng.randrange(256)])])
        out[pos:pos + len(chunk)] = chunk
        return bytes(out[:len(self.data)])

    # --- flatbuffers ---
    def _put(self, pos: int, size: int, value: int) -> bytes:
        out = bytearray(self.data)
        if pos + size <= len(out):
            out[pos:pos + size] = (value % (1 << (8 * size))).to_bytes(size, "little")
        return bytes(out)

    def _u32_value(self, rng: random.Random, pos: int) -> int:
        current = struct.unpack_from("<I", self.data, pos)[0]
        n = len(self.data)
        return rng.choice([*_INTERESTING_32, n, n - pos, n - pos - 4, n - pos - 3, current + 4, current - 4,
                           current + 1, current * 2, current + rng.randint(-64, 64), rng.randrange(n)])

    def fb_offset(self, rng: random.Random) -> bytes:
        assert self.fb is not None
        pos = rng.choice(sorted(self.fb.offsets))
        return self._put(pos, 4, self._u32_value(rng, pos))

    def fb_length(self, rng: random.Random) -> bytes:
        assert self.fb is not None
        pos = rng.choice(sorted(self.fb.lengths))
        return self._put(pos, 4, self._u32_value(rng, pos))

    def fb_table(self, rng: random.Random) -> bytes:  # the soffset to the vtable, or a vtable entry
        assert self.fb is not None
        pos = rng.choice(sorted(self.fb.tables))
        if rng.random() < 0.5:
            return self._put(pos, 4, rng.choice([0, 1, -4, 4, 2 ** 31 - 1, -(2 ** 31), rng.randint(-64, 64)]))
        vt = pos - struct.unpack_from("<i", self.data, pos)[0]
        if not 0 <= vt <= len(self.data) - 4:
            return self.data
        vt_size = struct.unpack_from("<H", self.data, vt)[0]
        entry = vt + 2 * rng.randrange(max(vt_size // 2, 1))
        return self._put(entry, 2, rng.choice([0, 1, 2, 3, 4, 0xFFFF, 0xFFFE, rng.randrange(64)]))

    def fb_scalar(self, rng: random.Random) -> bytes:  # union tags, versions, indexes, counts
        assert self.fb is not None
        pos, size = rng.choice(sorted(self.fb.scalars))
        return self._put(pos, size, self._scalar_value(rng, pos, size))

    def fb_element(self, rng: random.Random) -> bytes:  # tensor sizes/strides, list items, instructions
        assert self.fb is not None
        if not self.fb.elements:
            return self.bit_flips(rng)
        pos, size = rng.choice(sorted(self.fb.elements))
        return self._put(pos, size, self._scalar_value(rng, pos, size))

    def _scalar_value(self, rng: random.Random, pos: int, size: int) -> int:
        current = int.from_bytes(self.data[pos:pos + size], "little")
        if size == 8:
            return rng.choice([*_INTERESTING_64, current + 1, current - 1, -1, -current])
        if size == 1:
            return rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 127, 128, 255,
                               current + 1, current - 1])
        return rng.choice([*_INTERESTING_32, current + 1, current - 1, current + 2, -1, -current,
                           rng.randint(0, 40)])

    # --- zip ---
    def zip_header(self, rng: random.Random) -> bytes:
        out = bytearray(self.data)
        choices: list[tuple[int, int]] = []  # (position, size) of a numeric header field
        for cd in self.cd_entries:
            choices += [(cd + 10, 2), (cd + 16, 4), (cd + 20, 4), (cd + 24, 4), (cd + 28, 2), (cd + 30, 2),
                        (cd + 42, 4)]
        for lh in self.local_headers:
            choices += [(lh + 8, 2), (lh + 18, 4), (lh + 22, 4), (lh + 26, 2), (lh + 28, 2)]
        if self.eocd >= 0:
            e = self.eocd
            choices += [(e + 8, 2), (e + 10, 2), (e + 12, 4), (e + 16, 4), (e + 20, 2)]
        pos, size = rng.choice(choices)
        value = rng.choice([0, 1, 8, 0xFFFF, 0xFFFFFFFF, 0x7FFFFFFF, len(self.data), len(self.data) * 1000,
                            rng.randrange(len(self.data))])
        if pos + size <= len(out):
            out[pos:pos + size] = (value % (1 << (8 * size))).to_bytes(size, "little")
        return bytes(out)

    def member_name(self, rng: random.Random) -> bytes:
        members = [(info.filename, payload) for info, payload in self.members]
        i = rng.randrange(len(members))
        name, payload = members[i]
        new = rng.choice([name + "x", name.replace("/", "//"), "../" + name, name.upper(), "a/" + name,
                          name[:-1], name.split("/", 1)[-1], members[rng.randrange(len(members))][0]])
        if rng.random() < 0.3:
            del members[i]
        else:
            members[i] = (new, payload)
        return rezip(members)

    def _with_pickle(self, rng: random.Random, change: Callable[[bytes, list[PickleOp]], bytes]) -> bytes:
        if not self.pickles:
            return self.bit_flips(rng)
        i, _ = rng.choice(self.pickles)
        members = [(info.filename, payload) for info, payload in self.members]
        name, payload = members[i]
        members[i] = (name, change(payload, pickle_ops(payload)))
        return rezip(members)

    def pickle_op(self, rng: random.Random) -> bytes:
        def change(payload: bytes, ops: list[tuple[int, str, object]]) -> bytes:
            out = bytearray(payload)
            if not ops:
                return bytes(out)
            pos = rng.choice(ops)[0]
            action = rng.randrange(3)
            if action == 0:  # another opcode byte
                out[pos] = rng.choice(b"()]}aeltsuRbcdhjqrK\x80\x85\x86\x87\x88\x89\x8a\x8c\x94\x95NJMG.0012")
            elif action == 1:  # drop the opcode byte
                del out[pos]
            else:  # duplicate a stretch
                end = min(len(out), pos + rng.randint(1, 16))
                out[pos:pos] = out[pos:end]
            return bytes(out)
        return self._with_pickle(rng, change)

    def pickle_int(self, rng: random.Random) -> bytes:
        """Replace one small int of the pickle with a huge, negative or off-by-one one."""
        def change(payload: bytes, ops: list[tuple[int, str, object]]) -> bytes:
            ints = [(pos, name, arg) for pos, name, arg in ops if name in ("BININT1", "BININT2", "BININT")]
            if not ints:
                return payload
            pos, name, arg = rng.choice(ints)
            width = {"BININT1": 1, "BININT2": 2, "BININT": 4}[name]
            value = rng.choice([0, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 62, 10 ** 12, int(arg) + 1, int(arg) - 1,  # type: ignore[call-overload]
                                int(arg) * 1000, 255, 65535])  # type: ignore[call-overload]
            if value >= 2 ** 31 or value < -(2 ** 31):
                new = b"\x8a\x08" + value.to_bytes(8, "little", signed=True)  # LONG1
            else:
                new = b"J" + value.to_bytes(4, "little", signed=True)  # BININT
            return payload[:pos] + new + payload[pos + 1 + width:]
        return self._with_pickle(rng, change)

    def pickle_splice(self, rng: random.Random) -> bytes:
        """Insert a deep or large structure at an opcode boundary."""
        def change(payload: bytes, ops: list[tuple[int, str, object]]) -> bytes:
            if not ops:
                return payload
            pos = rng.choice(ops)[0]
            depth = rng.choice([10, 1000, 100000])
            chunk = rng.choice([b"(" * depth + b"t" * depth, b"]" * depth, b"J\xff\xff\xff\x7f" * 4,
                                b"X\xff\xff\xff\x7f"])
            return payload[:pos] + chunk + payload[pos:]
        return self._with_pickle(rng, change)


def _positions(data: bytes, needle: bytes) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(needle), data)]


def load_seeds() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(SEEDS.glob("*.bin"))}


def seed_shapes() -> dict[str, list[list[int]]]:
    import json

    path = SEEDS / "inputs.json"
    return json.loads(path.read_text()) if path.exists() else {}
