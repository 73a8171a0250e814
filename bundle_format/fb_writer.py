"""The helpers the codecs share for writing FlatBuffers (with flatc's generated builders)."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from flatbuffers import Builder as Builder  # re-exported: the codecs build with it

from bundle_format.errors import InternalError


def write_scalars(builder: Builder, start: Callable[[Builder, int], object],
                  prepend: Callable[[int], None], values: Sequence[int]) -> int:
    """Write a vector of scalars with a generated ``XStartYVector`` and a builder ``PrependZ``."""
    start(builder, len(values))
    for value in reversed(values):
        prepend(value)
    return int(builder.EndVector())


def write_offsets(builder: Builder, start: Callable[[Builder, int], object], offsets: Sequence[int]) -> int:
    """Write a vector of already-built tables or strings (their builder offsets, in order)."""
    start(builder, len(offsets))
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return int(builder.EndVector())


def finish(builder: Builder, root: int, identifier: bytes) -> bytes:
    """Finish the buffer with its file identifier and return its bytes."""
    builder.Finish(root, file_identifier=identifier)
    return bytes(builder.Output())


@contextmanager
def encoding(what: str) -> Iterator[None]:
    """Report a value the schema cannot hold (a negative uint, a lone surrogate...) as our bug."""
    try:
        yield
    except (TypeError, ValueError, OverflowError, struct.error) as e:
        raise InternalError(f"cannot encode {what}: {type(e).__name__}: {e}") from e
