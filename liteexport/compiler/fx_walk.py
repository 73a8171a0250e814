"""Walk an exported program's FX graph (Core ATen), evaluating every node abstractly through the
same op lowerings the TorchScript walk uses (``lowerings.LOWERINGS``, keyed by ATen name).

An FX graph of torch.export is flat and straight-line: no calls, no branches, no loops (torch
unrolled or refused them). So the walk is a loop over nodes: placeholders are bound by the
caller (weights as :class:`TensorConst`, user inputs as :class:`Sym`), ``getitem`` and the size
nodes (``sym_size``, ``operator.mul`` of sizes...) are evaluated here over Python values and
:class:`SymSize`, nodes whose tensors are all known at compile time run in torch now, and every
other ``call_function`` goes to its lowering with its arguments in schema order (``fx_forms``).

A node that cannot be compiled is reported, and its result stands in as a *blocked* value with
the shape and dtype torch recorded for it (``node.meta["val"]``), so the walk goes on and every
unsupported node is listed at once; reports reach the user only when a blocked value reaches an
output. Source frames come from ``node.meta["stack_trace"]`` and the module hierarchy from
``node.meta["nn_module_stack"]``, as the TorchScript walk takes them from its call stack.
"""

from __future__ import annotations

import linecache
import operator
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import torch
from torch import fx

from bundle_format.debug_table import SourceFrame
from bundle_format.source_range import format_source_range
from liteexport.compiler.dtypes import COMPILED_DTYPES
from liteexport.compiler.fx_forms import IDENTITY, as_torchscript_constant, kind_of, rewrite, schema_arguments
from liteexport.compiler.lowerings import LOWERINGS
from liteexport.compiler.ops import Emitter
from liteexport.compiler.reports import ReportLog
from liteexport.compiler.source import display_path
from liteexport.compiler.symbolic import SymSize, size_of
from liteexport.compiler.values import (
    NodeSite,
    OpNode,
    Poison,
    Sym,
    TensorConst,
    Unsupported,
    find_blocked,
    find_poison,
)

# Python-level nodes over sizes (``s0 * 768``): the scalar's own operators, which SymSize implements
# for what stays of the form scale * S + offset (and refuses, naming the size, for the rest).
_SIZE_OPERATORS: dict[Any, Callable[..., Any]] = {
    operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
    operator.floordiv: operator.floordiv, operator.neg: operator.neg, operator.pos: operator.pos,
}
# Run-time checks torch inserts for the dims it was given (``_assert_scalar(s0 <= 128)``): every
# engine checks the named dims' bounds at each call itself, from the program's symbolic dims.
CHECKS = {torch.ops.aten._assert_scalar.default, torch.ops.aten.sym_constrain_range_for_size.default,
           torch.ops.aten._assert_tensor_metadata.default, torch._assert}
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)\s*$')
_REPEAT = re.compile(r"@\d+$")  # nn_module_stack's suffix for the second call of one module
# the entry torch gives a node it made outside every module (a sym_size of an input): no module
NO_MODULE = "_empty_nn_module_stack"


class FxWalk:
    """Evaluates one exported method; collects its instructions-to-be in ``nodes`` (program order)."""

    def __init__(self, method: str, log: ReportLog, root_type: str) -> None:
        self.method = method
        self.log = log
        self.nodes: list[OpNode] = []
        self.visited = 0
        self._root = f"top({root_type})"

    def run(self, graph: fx.Graph, bound: Mapping[fx.Node, Any],
            progress: Callable[[int], None] | None = None) -> list[Any]:
        """The values of the graph's output node's arguments (flat, in order), every placeholder
        bound by ``bound``."""
        env: dict[fx.Node, Any] = dict(bound)
        for node in graph.nodes:
            self.visited += 1
            if progress is not None and self.visited % 1000 == 0:
                progress(self.visited)
            if node.op == "placeholder":
                if node not in env:
                    raise KeyError(f"placeholder {node.name} is not bound")  # a bug in the caller
            elif node.op == "output":
                (results,) = node.args
                return [_read(env, r) for r in results]
            elif node.op == "call_function":
                env[node] = self._call(node, env)
            else:  # get_attr / call_module / call_method do not appear in an exported program
                env[node] = self._blocked(node, f"FX {node.op} nodes are not compiled")
        raise ValueError("the exported graph has no output node")

    # --- one node ------------------------------------------------------------------------------

    def _call(self, node: fx.Node, env: dict[fx.Node, Any]) -> Any:
        target = node.target
        if target in CHECKS:
            return None
        args = [_read(env, a) for a in node.args]
        if target is operator.getitem:
            container, index = args
            if isinstance(container, Poison):
                return container
            return container[index]
        if target is torch.ops.aten.sym_size.int:
            return self._size(node, args)
        if target in _SIZE_OPERATORS:
            return self._size_arithmetic(node, args)
        if not isinstance(target, torch._ops.OpOverload):
            return self._blocked(node, f"{_target_name(target)} is not an ATen op")
        kind = kind_of(target)
        values = [_read(env, a) for a in schema_arguments(target, node.args, node.kwargs)]
        poisoned = find_poison(values)
        if poisoned:
            if kind not in LOWERINGS:  # unsupported whatever its inputs: report it too
                poisoned |= {self.log.add(self.site(node))}
            return _shaped(node, frozenset(poisoned)) or Poison(frozenset(poisoned))
        if _all_known(values) and not _random(target):
            # torch runs it, layouts and all: a clone of a constant's permuted view is contiguous
            # again, and a later view of it must see that (swin's relative position index)
            try:
                return _on_constants(target, node, env)
            except (RuntimeError, TypeError, ValueError, IndexError) as exc:
                return self._blocked(node, f"torch cannot evaluate it on its constants: {exc}")
        if kind in IDENTITY:  # a run-time value has no layout: a copy reads as its source
            return values[0]
        kind, values, wrap = rewrite(kind, values)
        lowering = LOWERINGS.get(kind)
        blocked = find_blocked(values)
        if lowering is None:
            return self._blocked(node, "", blocked)
        site = self.site(node, kind)
        emitter = Emitter(self.nodes, site, lambda reason: self.log.poison(site, reason))
        try:
            result = wrap(lowering(emitter, values))
        except Unsupported as exc:
            return self._blocked(node, exc.reason, blocked)
        if blocked:
            for value in _flat(result):
                if isinstance(value, Sym) and not any(value is v for v in _flat(values)):
                    value.blocked |= blocked
        return result

    def _size(self, node: fx.Node, args: list[Any]) -> Any:
        value, axis = args
        if isinstance(value, Poison):
            return value
        size = size_of(value, axis) if isinstance(value, (Sym, TensorConst)) else None
        if size is None:
            return self._blocked(node, "the size is known only at run time and is not a named dim's")
        return size

    def _size_arithmetic(self, node: fx.Node, args: list[Any]) -> Any:
        poisoned = find_poison(args)
        if poisoned:
            return Poison(poisoned)
        try:
            return _SIZE_OPERATORS[node.target](*args)
        except (TypeError, Unsupported) as exc:
            return self._blocked(node, f"cannot evaluate it at compile time: {exc}")

    def _blocked(self, node: fx.Node, reason: str = "", inputs: frozenset[int] = frozenset()) -> Any:
        """Report ``node``; its stand-in: a value of torch's recorded shape that blocks what it
        reaches (so later nodes are walked, and reported, too), or Poison. ``inputs``: the reports
        its inputs were blocked by already, which stay live wherever the stand-in goes."""
        report = frozenset({self.log.add(self.site(node), reason)}) | inputs
        return _shaped(node, report) or Poison(report)

    # --- where a node is -----------------------------------------------------------------------

    def site(self, node: fx.Node, kind: str | None = None) -> NodeSite:
        """The node's debug-table entry: its kind, module hierarchy and source frames."""
        if kind is None:
            kind = kind_of(node.target) if isinstance(node.target, torch._ops.OpOverload) \
                else _target_name(node.target)
        stack = node.meta.get("nn_module_stack") or {}
        return NodeSite(self.method, kind, _hierarchy(self._root, tuple(stack.values())),
                        stack_frames(node.meta.get("stack_trace") or ""))


def _read(env: Mapping[fx.Node, Any], arg: Any) -> Any:
    """An FX argument as a walk value: nodes looked up, containers rebuilt, dtypes as numbers."""
    if isinstance(arg, fx.Node):
        return env[arg]
    if isinstance(arg, (list, tuple)):
        return type(arg)(_read(env, a) for a in arg)
    return as_torchscript_constant(arg)


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [item for v in value for item in _flat(v)]
    return [value]


def _all_known(values: list[Any]) -> bool:
    """Whether every argument is known now: constants, Python values (a factory's static sizes)."""
    return not any(isinstance(v, (Sym, SymSize)) for v in _flat(values))


def _random(op: torch._ops.OpOverload) -> bool:
    return torch.Tag.nondeterministic_seeded in op.tags


def _on_constants(op: torch._ops.OpOverload, node: fx.Node, env: Mapping[fx.Node, Any]) -> Any:
    """The node run by torch on the constants it reads (a lifted constant's arithmetic, a weight's
    transpose): its result is a constant too."""
    def real(arg: Any) -> Any:
        if isinstance(arg, fx.Node):
            value = env[arg]
            return _real(value)
        if isinstance(arg, (list, tuple)):
            return type(arg)(real(a) for a in arg)
        return arg

    with torch.no_grad():
        result = op(*[real(a) for a in node.args], **{k: real(v) for k, v in node.kwargs.items()})
    return _wrap(result)


def _real(value: Any) -> Any:
    if isinstance(value, TensorConst):
        return value.tensor
    if isinstance(value, (list, tuple)):
        return type(value)(_real(v) for v in value)
    return value


def _wrap(result: Any) -> Any:
    if isinstance(result, torch.Tensor):
        return TensorConst(result.detach())
    if isinstance(result, (list, tuple)):
        return type(result)(_wrap(r) for r in result)
    return result


def _shaped(node: fx.Node, blocked: frozenset[int]) -> Any:
    """Stand-ins of torch's recorded result (``meta["val"]``) that block what reads them, or None."""
    def stand_in(val: Any) -> Any:
        if isinstance(val, torch.Tensor) and val.dtype in COMPILED_DTYPES:
            shape = tuple(d if isinstance(d, int) else -1 for d in val.shape)
            return Sym(shape, blocked=blocked, dtype=COMPILED_DTYPES[val.dtype])
        if isinstance(val, (list, tuple)):
            items = [stand_in(v) for v in val]
            return None if any(i is None for i in items) else type(val)(items)
        return None

    return stand_in(node.meta.get("val"))


def _target_name(target: Any) -> str:
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or str(target)
    return f"{module}.{name}" if module and module != "builtins" else name


@lru_cache(maxsize=4096)
def _hierarchy(root: str, stack: tuple[tuple[str, Any], ...]) -> str:
    """nn_module_stack ``(("", "m.Net"), ("features", ...Sequential), ("features.0", ...Conv2d))``
    as the TorchScript walk names instances: ``top(Net).features(Sequential).0(Conv2d)``."""
    parts = [root]
    parent = ""
    for path, module_type in stack:
        path = _REPEAT.sub("", str(path))
        if not path or path.startswith(NO_MODULE):
            continue
        name = path[len(parent) + 1:] if parent and path.startswith(parent + ".") else path
        type_name = (module_type if isinstance(module_type, str) else getattr(module_type, "__name__", "?"))
        parts.append(f"{name}({type_name.rsplit('.', 1)[-1]})")
        parent = path
    return ".".join(parts)


@lru_cache(maxsize=4096)
def stack_frames(stack_trace: str) -> tuple[SourceFrame, ...]:
    """A node's ``stack_trace`` (Python's traceback text, outermost first) as the debug table's
    frames, each snippet the frame's line underlined, in the one source-range format."""
    frames: list[SourceFrame] = []
    lines = stack_trace.splitlines()
    for index, line in enumerate(lines):
        match = _FRAME.match(line)
        if match is None:
            continue
        file, number, function = match.group("file"), int(match.group("line")), match.group("function")
        text = linecache.getline(file, number).rstrip("\n")
        if not text.strip() and index + 1 < len(lines) and not _FRAME.match(lines[index + 1]):
            text = lines[index + 1]  # the file is gone: the traceback's own copy of the line
        shown = display_path(file)
        start = len(text) - len(text.lstrip())
        snippet = format_source_range(shown, text + "\n", start, len(text.rstrip()), line_offset=number - 1) \
            if text.strip() else f'  File "{shown}", line {number}'
        frames.append(SourceFrame(function, shown, number, snippet))
    return tuple(frames)
