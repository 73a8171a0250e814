"""DebugTable <-> bytes (``schema/debug_table.fbs``): the one adapter to its generated code.

Encoding is deterministic. Decoding treats the bytes as hostile (read in one pass by
:mod:`fb_reader`: every offset, vector and string bounds-checked, strings checked as UTF-8),
checks the format version, and requires the entries to be sorted by handle with no
duplicates (what makes :meth:`DebugTable.lookup` a binary search). Any violation is a :class:`FormatError`.
"""

from __future__ import annotations

from bundle_format import fb_reader as fr
from bundle_format import fb_writer as fw
from bundle_format._generated import debug_table_generated as g
from bundle_format.debug_table import (
    DEBUG_TABLE_FILE_IDENTIFIER,
    DEBUG_TABLE_FORMAT_VERSION,
    DebugEntry,
    DebugTable,
    SourceFrame,
)
from bundle_format.errors import FormatError, InternalError
from bundle_format.fb_reader import Buffer, TableReader
from bundle_format.fb_writer import Builder

__all__ = ["encode_debug_table", "decode_debug_table"]

# --- the tables' layouts: flatc's reading of schema/debug_table.fbs (_generated/layouts.py) ---
_SOURCE_FRAME, _DEBUG_ENTRY, _DEBUG_TABLE = (
    fr.spec("debug_table", name) for name in ("SourceFrame", "DebugEntry", "DebugTable"))


def _order_problem(previous: int, handle: int) -> str | None:
    """Entries must be strictly increasing by handle."""
    if handle > previous:
        return None
    return f"entries not sorted by unique handle: {handle} follows {previous}"


# --- encoding ---

def encode_debug_table(table: DebugTable) -> bytes:
    """The flatbuffer of ``table`` (identifier ``LXDT``); the same table gives the same bytes.

    Unsorted or duplicate handles, or values the schema cannot hold, are :class:`InternalError`.
    """
    with fw.encoding("debug table"):
        b = Builder(1024)
        for previous, entry in zip(table.entries, table.entries[1:], strict=False):
            problem = _order_problem(previous.handle, entry.handle)
            if problem is not None:
                raise InternalError(f"cannot encode debug table: {problem}")
        written = [_write_entry(b, e) for e in table.entries]
        entries = fw.write_offsets(b, g.DebugTableStartEntriesVector, written)
        g.DebugTableStart(b)
        g.DebugTableAddFormatVersion(b, table.format_version)
        g.DebugTableAddEntries(b, entries)
        return fw.finish(b, int(g.DebugTableEnd(b)), DEBUG_TABLE_FILE_IDENTIFIER)


# Strings are shared (written once, referenced from every entry and frame holding them): the
# frames of a model's nodes repeat the same few source snippets (mobilenet_v2's 100 entries: 242 kB
# written once each, 35 kB shared), as large as an int8 model's weights are small.
def _write_entry(b: Builder, entry: DebugEntry) -> int:
    method = b.CreateSharedString(entry.method)
    node_kind = b.CreateSharedString(entry.node_kind)
    hierarchy = b.CreateSharedString(entry.module_hierarchy)
    frames = fw.write_offsets(b, g.DebugEntryStartFramesVector, [_write_frame(b, f) for f in entry.frames])
    g.DebugEntryStart(b)
    g.DebugEntryAddHandle(b, entry.handle)
    g.DebugEntryAddMethod(b, method)
    g.DebugEntryAddNodeKind(b, node_kind)
    g.DebugEntryAddModuleHierarchy(b, hierarchy)
    g.DebugEntryAddFrames(b, frames)
    return int(g.DebugEntryEnd(b))


def _write_frame(b: Builder, frame: SourceFrame) -> int:
    function = b.CreateSharedString(frame.function)
    file = b.CreateSharedString(frame.file)
    snippet = b.CreateSharedString(frame.snippet)
    g.SourceFrameStart(b)
    g.SourceFrameAddFunction(b, function)
    g.SourceFrameAddFile(b, file)
    g.SourceFrameAddLine(b, frame.line)
    g.SourceFrameAddSnippet(b, snippet)
    return int(g.SourceFrameEnd(b))


# --- decoding ---

_SOURCE_FRAME_L, _DEBUG_ENTRY_L, _DEBUG_TABLE_L = map(fr.layout, (_SOURCE_FRAME, _DEBUG_ENTRY, _DEBUG_TABLE))


def decode_debug_table(buf: Buffer) -> DebugTable:
    """The DebugTable in ``buf``; raises :class:`FormatError` for anything malformed, nothing else."""
    with fr.hostile_input("debug table"):
        return _read_table(TableReader(buf))


def _read_table(r: TableReader) -> DebugTable:
    pos = r.root(DEBUG_TABLE_FILE_IDENTIFIER, "DebugTable")
    version_at, entries_at = r.table(pos, _DEBUG_TABLE_L, "DebugTable")
    version: int = r.scalar(fr.U32, version_at, 0)  # type: ignore[assignment]
    fr.check_version(version, DEBUG_TABLE_FORMAT_VERSION, "debug table",
                     fr.location("DebugTable.format_version", version_at or pos))
    entries = r.each(entries_at, "DebugTable.entries", _read_entry)
    for previous, (path, handle_at, entry) in zip(entries, entries[1:], strict=False):
        if (problem := _order_problem(previous[2].handle, entry.handle)) is not None:
            raise FormatError(problem, where=fr.location(path + ".handle", handle_at))
    return DebugTable(entries=tuple(e for _, _, e in entries), format_version=version)


def _read_entry(r: TableReader, pos: int, path: str) -> tuple[str, int, DebugEntry]:
    """The entry at ``pos``, with its path and the position of its handle (for order errors)."""
    handle, method, node_kind, hierarchy, frames = r.table(pos, _DEBUG_ENTRY_L, path)
    entry = DebugEntry(
        handle=r.scalar(fr.I64, handle, 0),  # type: ignore[arg-type]
        method=r.required_string(method, path + ".method", pos),
        node_kind=r.required_string(node_kind, path + ".node_kind", pos),
        module_hierarchy=r.required_string(hierarchy, path + ".module_hierarchy", pos),
        frames=r.each(frames, path + ".frames", _read_frame),
    )
    return path, handle or pos, entry


def _read_frame(r: TableReader, pos: int, path: str) -> SourceFrame:
    function, file, line, snippet = r.table(pos, _SOURCE_FRAME_L, path)
    return SourceFrame(
        function=r.required_string(function, path + ".function", pos),
        file=r.required_string(file, path + ".file", pos),
        line=r.scalar(fr.U32, line, 0),  # type: ignore[arg-type]
        snippet=r.required_string(snippet, path + ".snippet", pos),
    )
