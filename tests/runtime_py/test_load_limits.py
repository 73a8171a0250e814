"""Load-time limits against hostile bundles: each crafted bundle (tests/fuzz/crafted.py) fails
with the FormatError meant for it, without hanging, and loading allocates at most a small multiple of
the file's size (measured with tracemalloc)."""

from __future__ import annotations

import re
import sys
import tracemalloc
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
import crafted  # noqa: E402
import harness  # noqa: E402

from bundle_format.bundle_file import read_bundle_bytes  # noqa: E402
from runtime_py.errors import FormatError  # noqa: E402
from runtime_py.module import Module  # noqa: E402
from tests.watchdog import watchdog  # noqa: E402

MEMORY_FACTOR = 10  # PTMF: every value is read from at least a few bytes of the file
# A zip model's pickles make a Python object of about 60 bytes from each 1..6-byte opcode
# (a legitimate bytecode.pkl already needs ~11x); the factor bounds it, it cannot be 10.
ZIP_MEMORY_FACTOR = 64
MEMORY_SLACK = 4 << 20  # interpreter and numpy bookkeeping


HANG_SECONDS = 60  # a watchdog for loops, far above any real load: not a speed check


def _load(data: bytes) -> Module:
    return Module(read_bundle_bytes(data))


def _fails_if_it_hangs() -> AbstractContextManager[None]:
    return watchdog(HANG_SECONDS, "a loop the load budget missed")


@pytest.mark.parametrize("name", sorted(crafted.CRAFTED))
def test_crafted_bundle_fails_as_meant(name: str) -> None:
    build, message = crafted.CRAFTED[name]
    data = build()
    with _fails_if_it_hangs():
        if not message:  # legal, just deep: must load without recursion
            _load(data)
        else:
            with pytest.raises(FormatError, match=re.escape(message)):
                _load(data)


@pytest.mark.parametrize("name", sorted(crafted.CRAFTED) + ["seed:" + n for n in sorted(harness.load_seeds())])
def test_peak_memory_is_a_small_multiple_of_the_file(name: str) -> None:
    data = crafted.CRAFTED[name][0]() if not name.startswith("seed:") else harness.load_seeds()[name[5:]]
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        try:
            _load(data)
        except FormatError:
            pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    factor = ZIP_MEMORY_FACTOR if data[:2] == b"PK" else MEMORY_FACTOR
    assert peak < factor * len(data) + MEMORY_SLACK, f"peak {peak} for a {len(data)}-byte file"


def test_load_budget_is_released_after_loading() -> None:
    module = _load(harness.load_seeds()["torch_stateful.ptmf.bin"])
    assert module._loaded._budget is None  # run time is not limited by the load budget
