"""The debug-handle -> source table, as plain frozen dataclasses (``schema/debug_table.fbs``)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

DEBUG_TABLE_FORMAT_VERSION = 1
DEBUG_TABLE_FILE_IDENTIFIER = b"LXDT"
DEBUG_TABLE_EXTRA_FILE = "liteexport/debug_table"
TORCH_SOURCE_PREFIX = "torch/"  # how the compiler names files of torch's own package


@dataclass(frozen=True)
class SourceFrame:
    """One frame of a TorchScript-style traceback; ``snippet`` is already formatted."""

    function: str
    file: str
    line: int
    snippet: str


@dataclass(frozen=True)
class DebugEntry:
    handle: int
    method: str
    node_kind: str  # e.g. "aten::conv2d"
    module_hierarchy: str  # e.g. "top(TinyCNN).features(Sequential).0(Conv2d)"
    frames: tuple[SourceFrame, ...]  # outermost first; the last is the node itself

    def user_frame(self) -> SourceFrame | None:
        """The innermost frame in the model's own code: frames inside torch (named
        ``torch/...`` by the compiler) show how torch implements a module, not the user's line."""
        for frame in reversed(self.frames):
            if not frame.file.startswith(TORCH_SOURCE_PREFIX):
                return frame
        return self.frames[-1] if self.frames else None


@dataclass(frozen=True)
class DebugTable:
    entries: tuple[DebugEntry, ...]  # sorted by handle
    format_version: int = DEBUG_TABLE_FORMAT_VERSION

    def lookup(self, handle: int) -> DebugEntry | None:
        """The entry for ``handle``, or None when the table has none (binary search: the
        entries must be sorted by handle, which the codec enforces both ways)."""
        i = bisect.bisect_left(self.entries, handle, key=lambda entry: entry.handle)
        if i < len(self.entries) and self.entries[i].handle == handle:
            return self.entries[i]
        return None
