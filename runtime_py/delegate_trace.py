"""A failing instruction's module hierarchy and traceback, in the words torch's lite interpreter
uses (torch/csrc/jit/mobile/debug_info.cpp), for delegated (lowered) modules too::

    Module hierarchy:top(C)::<unknown>.__loweredModule__(C)::forward.B0(B)::forward.A0(A)::forward.aten::add
    Traceback of TorchScript (most recent call last):
      File "<string>", line 3, in <unknown>
        ... (the LoweredWrapper's call of __loweredModule__.forward)
      File "<string>", line 5, in forward
        ... (the LoweredModule's call of the backend's execute)
      File "model.py", line 9, in <unknown>
        ... (the user's frames, outermost first)

Torch builds this from a stack of debug handles: the handle the backend's error carries, then
one per interpreter frame on the way out. Each handle adds its module levels
(``.<instance>(<type>)::<method>``) and its frames, each handle's first frame named
``<unknown>``; the node kind of the innermost ends the hierarchy. Debug tables read from torch's
own zip files (``bundle_format.zip_debug_info``) hold one such handle per entry; the tables
liteexport writes describe only the compiled program's nodes, so for a bundle whose root is
torch's ``LoweredWrapper`` the two wrapper frames torch's to_backend code generator writes are
rebuilt here from the method's signature, as torch's templates print them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bundle_format.debug_table import DebugEntry, SourceFrame
from bundle_format.source_range import format_frame, format_source_range

ROOT_FUNCTION = "<unknown>"
WRAPPER_ROOT_PREFIX = "torch.jit.LoweredWrapper."
_SOURCE = "<string>"  # what torch names the source of code it generates
_LEVEL = re.compile(r"\.([^.()]+)\(([^()]*)\)")
_MARKER = re.compile(r"^ *~+(?: <--- HERE)?$")


@dataclass(frozen=True)
class WrapperSignature:
    """A lowered method as torch's to_backend generated its wrapper: the arguments (name and
    annotation, ``self`` excluded) and how many Tensors it returns (``None``: one, not a tuple)."""

    method: str
    arguments: tuple[tuple[str, str], ...]
    tuple_outputs: int | None


def wrapper_frames(signature: WrapperSignature) -> list[str]:
    """The LoweredWrapper's and the LoweredModule's frames, as torch prints them."""
    method = signature.method
    defs = "".join(f", {name}: {annotation}" for name, annotation in signature.arguments)
    names = [name for name, _ in signature.arguments]
    wrapper = (f"\n            def {method}(self{defs}):\n"
               f"                return self.__loweredModule__.{method}({', '.join(names)})\n            ")
    outputs = [f"_{i}" for i in range(signature.tuple_outputs or 1)]
    refine = "".join(f"                  assert isinstance({out}, Tensor)\n" for out in outputs)
    lowered = (f"\n            def {method}(self{defs}):\n"
               f"                typed_inputs: List[Any] = [{''.join(n + ', ' for n in names)}]\n"
               "                if self.__backend.is_available() :\n"
               f"                  {', '.join(outputs)}, = self.__backend.execute(self.__handles[\"{method}\"], "
               "typed_inputs)\n"
               f"{refine}                  return {', '.join(outputs)}\n"
               "                else:\n"
               "                  raise Exception(\"Backend is not available.\")\n            ")
    call = f"self.__loweredModule__.{method}"
    execute = "self.__backend.execute"
    return [format_source_range(_SOURCE, wrapper, wrapper.index(call), wrapper.index(call) + len(call),
                                function=ROOT_FUNCTION),
            format_source_range(_SOURCE, lowered, lowered.index(execute), lowered.index(execute) + len(execute),
                                function=method)]


def _from_torch(entry: DebugEntry) -> bool:
    """Entries read from torch's debug info carry torch's levels (``::``); liteexport's compiler
    writes ``top(M).sub(Sub)``."""
    return "::" in entry.module_hierarchy or entry.method == ROOT_FUNCTION


def _top(entry: DebugEntry) -> str:
    return entry.module_hierarchy.split("::", 1)[0].split(".", 1)[0]


def _torch_levels(entry: DebugEntry) -> str:
    """``.<instance>(<type>)::<method>`` per level of a torch-read entry."""
    rest = entry.module_hierarchy.partition(f"::{ROOT_FUNCTION}")[2]
    return f"{rest}::{entry.method}" if rest else ""


def _highlighted(snippet: str) -> str:
    """The text a snippet underlines (its first underlined line)."""
    lines = snippet.split("\n")
    for i in range(1, len(lines)):
        if _MARKER.match(lines[i]):
            start = len(lines[i]) - len(lines[i].lstrip(" "))
            return lines[i - 1][start:start + lines[i].count("~")]
    return ""


def _compiler_levels(entry: DebugEntry) -> tuple[str, list[SourceFrame]]:
    """Levels and frames of an entry liteexport's compiler wrote, in torch's naming. Each frame
    but the last is a call site; its callee (the next frame's function) runs in a submodule (the
    next level of the hierarchy), in the same module (``self.<method>(...)``: torch's
    ``SELF(<type>)``) or in a free function (``UNKNOWN_INSTANCE(UNKNOWN_TYPE)``; a function
    calls no submodule, so those come once the levels are used up). The first frame is the
    root's, ``<unknown>``."""
    levels = _LEVEL.findall(entry.module_hierarchy[len(_top(entry)):])
    current_type = _top(entry)[len("top("):-1]
    frames = list(entry.frames)
    text, used = "", 0
    for caller, callee in zip(frames, frames[1:], strict=False):  # each call site and its callee
        if _highlighted(caller.snippet) == f"self.{callee.function}":
            text += f".SELF({current_type})::{callee.function}"
        elif used < len(levels):
            name, current_type = levels[used]
            used += 1
            text += f".{name}({current_type})::{callee.function}"
        else:
            text += f".UNKNOWN_INSTANCE(UNKNOWN_TYPE)::{callee.function}"
    text += "".join(f".{name}({type_name})::{entry.method}" for name, type_name in levels[used:])
    if frames:
        frames[0] = SourceFrame(ROOT_FUNCTION, frames[0].file, frames[0].line, frames[0].snippet)
    return text, frames


def in_call_context(call: DebugEntry, node: DebugEntry) -> DebugEntry:
    """``node`` (a node of a lowered module, as liteexport's compiler wrote it) reached through
    ``call`` (torch's entry for the bytecode's ``execute`` call into that module, read from
    torch's own debug info), as one entry in torch's naming: the call's levels and frames, then
    the node's, as torch's lite interpreter composes a delegate's handle with its caller's. A
    mixed bundle's table holds these, so the outer hierarchy needs no handle of the outer
    bytecode (torch's flatbuffer writer numbers those afresh on every save)."""
    levels, frames = _compiler_levels(node)
    if levels:  # ".AA0(AA)::forward": its last function is the node's method
        head, _, method = levels.rpartition("::")
        hierarchy = f"{call.module_hierarchy}::{call.method}{head}"
    else:
        hierarchy, method = call.module_hierarchy, call.method
    return DebugEntry(node.handle, method, node.node_kind, hierarchy, (*call.frames, *frames))


def torch_style_trace(entries: Sequence[DebugEntry], wrapper: WrapperSignature | None) -> list[str]:
    """The ``Module hierarchy:`` line and the traceback for the stack of ``entries`` (outermost
    first; the last is the failing node). ``wrapper``: the lowered method the root wraps, when the
    bundle is a LoweredWrapper and the entries are the compiler's own."""
    innermost = entries[-1]
    hierarchy = f"{_top(entries[0])}::{ROOT_FUNCTION}"
    rendered: list[str] = []
    if wrapper is not None and not _from_torch(innermost):
        type_name = _top(innermost)[len("top("):-1]
        hierarchy += f".__loweredModule__({type_name})::{wrapper.method}"
        rendered += wrapper_frames(wrapper)
    for entry in entries:
        if _from_torch(entry):
            hierarchy += _torch_levels(entry)
            frames = list(entry.frames)
        else:
            levels, frames = _compiler_levels(entry)
            hierarchy += levels
        rendered += [format_frame(frame.function, frame.snippet) for frame in frames]
    return [f"Module hierarchy:{hierarchy}.{innermost.node_kind}",
            "Traceback of TorchScript (most recent call last):", *rendered]


__all__ = ["ROOT_FUNCTION", "WRAPPER_ROOT_PREFIX", "WrapperSignature", "in_call_context", "torch_style_trace",
           "wrapper_frames"]
