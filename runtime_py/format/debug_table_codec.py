"""DebugTable <-> bytes (``schema/debug_table.fbs``): the one adapter to its generated code.

Encoding is deterministic. Decoding treats the bytes as hostile (bounds-checked by
:mod:`fb_verify`, strings checked as UTF-8), checks the format version, and requires the
entries to be sorted by handle with no duplicates (what makes :meth:`DebugTable.lookup` a
binary search). Any violation is a :class:`FormatError`.
"""

from __future__ import annotations

from runtime_py.errors import FormatError, InternalError
from runtime_py.format import fb_verify as fv
from runtime_py.format._generated import debug_table_generated as g
from runtime_py.format.debug_table import (
    DEBUG_TABLE_FILE_IDENTIFIER,
    DEBUG_TABLE_FORMAT_VERSION,
    DebugEntry,
    DebugTable,
    SourceFrame,
)
from runtime_py.format.fb_verify import Buffer, Builder, CheckedTable, Verifier

__all__ = ["encode_debug_table", "decode_debug_table"]

# --- the tables' layouts: flatc's reading of schema/debug_table.fbs (_generated/layouts.py) ---
_SOURCE_FRAME, _DEBUG_ENTRY, _DEBUG_TABLE = (
    fv.spec("debug_table", name) for name in ("SourceFrame", "DebugEntry", "DebugTable"))


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
    with fv.encoding("debug table"):
        b = Builder(1024)
        for previous, entry in zip(table.entries, table.entries[1:], strict=False):
            problem = _order_problem(previous.handle, entry.handle)
            if problem is not None:
                raise InternalError(f"cannot encode debug table: {problem}")
        written = [_write_entry(b, e) for e in table.entries]
        entries = fv.write_offsets(b, g.DebugTableStartEntriesVector, written)
        g.DebugTableStart(b)
        g.DebugTableAddFormatVersion(b, table.format_version)
        g.DebugTableAddEntries(b, entries)
        return fv.finish(b, int(g.DebugTableEnd(b)), DEBUG_TABLE_FILE_IDENTIFIER)


def _write_entry(b: Builder, entry: DebugEntry) -> int:
    method = b.CreateString(entry.method)
    node_kind = b.CreateString(entry.node_kind)
    hierarchy = b.CreateString(entry.module_hierarchy)
    frames = fv.write_offsets(b, g.DebugEntryStartFramesVector, [_write_frame(b, f) for f in entry.frames])
    g.DebugEntryStart(b)
    g.DebugEntryAddHandle(b, entry.handle)
    g.DebugEntryAddMethod(b, method)
    g.DebugEntryAddNodeKind(b, node_kind)
    g.DebugEntryAddModuleHierarchy(b, hierarchy)
    g.DebugEntryAddFrames(b, frames)
    return int(g.DebugEntryEnd(b))


def _write_frame(b: Builder, frame: SourceFrame) -> int:
    function = b.CreateString(frame.function)
    file = b.CreateString(frame.file)
    snippet = b.CreateString(frame.snippet)
    g.SourceFrameStart(b)
    g.SourceFrameAddFunction(b, function)
    g.SourceFrameAddFile(b, file)
    g.SourceFrameAddLine(b, frame.line)
    g.SourceFrameAddSnippet(b, snippet)
    return int(g.SourceFrameEnd(b))


# --- decoding ---

def decode_debug_table(buf: Buffer) -> DebugTable:
    """The DebugTable in ``buf``; raises :class:`FormatError` for anything malformed, nothing else."""
    with fv.hostile_input("debug table"):
        return _read_table(Verifier(buf))


def _read_table(v: Verifier) -> DebugTable:
    t = v.table(v.root(DEBUG_TABLE_FILE_IDENTIFIER, "DebugTable"), _DEBUG_TABLE, "DebugTable")
    r = g.DebugTable()
    r.Init(v.buf, t.pos)
    version = r.FormatVersion()
    fv.check_version(version, DEBUG_TABLE_FORMAT_VERSION, "debug table", t.loc("format_version"))
    entries: list[DebugEntry] = []
    for child in v.children(t, "entries", _DEBUG_ENTRY):
        entry = _read_entry(v, child)
        if entries and (problem := _order_problem(entries[-1].handle, entry.handle)) is not None:
            raise FormatError(problem, where=child.loc("handle"))
        entries.append(entry)
    return DebugTable(entries=tuple(entries), format_version=version)


def _read_entry(v: Verifier, t: CheckedTable) -> DebugEntry:
    r = g.DebugEntry()
    r.Init(v.buf, t.pos)
    return DebugEntry(
        handle=r.Handle(),
        method=fv.required_str(r.Method(), t, "method"),
        node_kind=fv.required_str(r.NodeKind(), t, "node_kind"),
        module_hierarchy=fv.required_str(r.ModuleHierarchy(), t, "module_hierarchy"),
        frames=tuple(_read_frame(v.buf, c) for c in v.children(t, "frames", _SOURCE_FRAME)),
    )


def _read_frame(buf: memoryview, t: CheckedTable) -> SourceFrame:
    r = g.SourceFrame()
    r.Init(buf, t.pos)
    return SourceFrame(
        function=fv.required_str(r.Function(), t, "function"),
        file=fv.required_str(r.File(), t, "file"),
        line=r.Line(),
        snippet=fv.required_str(r.Snippet(), t, "snippet"),
    )
