"""Walk a method's TorchScript graph, evaluating every node abstractly.

Instead of ``torch._C._jit_pass_inline`` (after which the Python bindings expose a node's
call stack only as a module-hierarchy string), the walk follows ``prim::CallMethod`` and
``prim::CallFunction`` into the callee graphs itself. That way it knows, for every node,
the module instance it runs in (``top(TinyCNN).features(Sequential).0(Conv2d)``) and the
source frame of every call on the way (outermost first). ``prim::If`` with a condition known
at compile time (``self.training``, ``bias is not None``) walks only the taken branch.

Tensor nodes are lowered through ``ops.LOWERINGS``; nodes over Python values fold through
``scalars.SCALAR_FOLDS``. A node that cannot be compiled yields :class:`Poison`; whether it is
reported depends on whether the poison reaches a method output.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from liteexport.compiler.ops import INPLACE, LOWERINGS, Emitter
from liteexport.compiler.reports import ReportLog
from liteexport.compiler.scalars import SCALAR_FOLDS
from liteexport.compiler.source import parse_torch_range
from liteexport.compiler.values import (
    ModuleRef,
    NodeSite,
    OpNode,
    Poison,
    Sym,
    TensorConst,
    Unsupported,
    find_poison,
)
from runtime_py.format.debug_table import SourceFrame

# Nodes that move values around without computing on them: a poisoned element of a list
# (say one dynamic entry of ``x.size()``) poisons only what later reads that element.
_STRUCTURAL = {
    "prim::ListConstruct", "prim::TupleConstruct", "prim::ListUnpack", "prim::TupleUnpack",
    "prim::TupleIndex", "aten::__getitem__", "aten::len", "prim::unchecked_cast",
    "aten::list_with_default",
}
# Nodes without results whose effect we may drop (warnings, prints).
_IGNORED = {"aten::warn", "prim::Print"}
# Kinds the walk itself evaluates (besides the lowering and folding tables).
_WALKED = _STRUCTURAL | {
    "prim::If", "prim::CallMethod", "prim::CallFunction", "prim::RaiseException",
    "prim::GetAttr", "prim::Uninitialized",
}


def is_known_kind(kind: str) -> bool:
    """Whether some input values could make a node of this kind compile."""
    return kind in _WALKED or kind in LOWERINGS or kind in INPLACE or kind in SCALAR_FOLDS


@dataclass(frozen=True)
class Context:
    """The function activation a node runs in."""

    function: str  # name of the TorchScript function/method holding the node
    hierarchy: str  # module instance path of `self`
    frames: tuple[SourceFrame, ...]  # call sites leading here, outermost first


def module_type_name(module: Any) -> str:
    """``__torch__.torch.nn.modules.conv.___torch_mangle_0.Conv2d`` -> ``Conv2d``."""
    return str(module._type().qualified_name()).rsplit(".", 1)[-1]


def node_frame(node: torch._C.Node, function: str) -> SourceFrame | None:
    return _frame(node.sourceRange(), function)


@lru_cache(maxsize=4096)
def _frame(source_range: str, function: str) -> SourceFrame | None:
    """Formatting the snippet is the costly part; every instance of a module class (and every
    call of a function) shares its nodes' ranges."""
    span = parse_torch_range(source_range)
    return None if span is None else span.frame(function)


class MethodWalk:
    """Evaluates one method; collects its instructions-to-be in ``nodes`` (program order)."""

    def __init__(self, method: str, log: ReportLog) -> None:
        self.method = method
        self.log = log
        self.nodes: list[OpNode] = []
        self.visited = 0  # TorchScript nodes evaluated (callees included, untaken branches not)
        self._replaced: dict[Sym, Sym] = {}  # in-place ops: the old value now reads as the new
        self._functions = torch.jit._state._python_cu  # compiled free functions, by qualname

    # --- entry ---------------------------------------------------------------------------------

    def run(self, root: ModuleRef, inputs: list[Sym]) -> list[Any]:
        graph = root.module._get_method(self.method).graph
        ctx = Context(function=self.method, hierarchy=root.hierarchy, frames=())
        return self._call(graph, [root, *inputs], ctx)

    # --- graph traversal -----------------------------------------------------------------------

    def _call(self, graph: torch._C.Graph, args: list[Any], ctx: Context) -> list[Any]:
        env: dict[int, Any] = {}
        for value, arg in zip(_outputs(graph.param_node()), args, strict=True):
            env[value.unique()] = arg
        self._walk(_nodes(graph.return_node()), env, ctx)
        return [self._read(env, v) for v in _inputs(graph.return_node())]

    def _walk(self, nodes: list[torch._C.Node], env: dict[int, Any], ctx: Context) -> None:
        for node in nodes:
            results = self._node(node, env, ctx)
            for value, result in zip(_outputs(node), results, strict=True):
                env[value.unique()] = result

    def _read(self, env: dict[int, Any], value: torch._C.Value) -> Any:
        result = env[value.unique()]
        while isinstance(result, Sym) and result in self._replaced:
            result = self._replaced[result]
        return result

    def _site(self, node: torch._C.Node, ctx: Context) -> NodeSite:
        frame = node_frame(node, ctx.function)
        frames = ctx.frames if frame is None else (*ctx.frames, frame)
        return NodeSite(self.method, node.kind(), ctx.hierarchy, frames)

    # --- one node ------------------------------------------------------------------------------

    def _node(self, node: torch._C.Node, env: dict[int, Any], ctx: Context) -> list[Any]:
        kind = node.kind()
        n_out = node.outputsSize()
        self.visited += 1
        if kind == "prim::Constant":
            out = node.output()
            return [None if out.type().kind() == "FunctionType" else out.toIValue()]
        args = [self._read(env, v) for v in _inputs(node)]
        if kind in _IGNORED:
            return []
        # The node's site (its source frames) is built only where it is used, for a call, an
        # instruction or a report: formatting source snippets is most of a walk's time.
        poisoned = find_poison(args) if kind not in _STRUCTURAL else frozenset()
        if kind == "prim::If" and isinstance(args[0], Poison):
            poisoned = args[0].reports
        if poisoned:
            if not is_known_kind(kind):
                # Unsupported whatever its inputs: report it too, not only the root cause.
                poisoned |= self.log.poison(self._site(node, ctx)).reports
            return [Poison(poisoned)] * n_out
        if kind in _STRUCTURAL and args and isinstance(args[0], Poison):
            return [args[0]] * n_out  # the container itself is poisoned
        try:
            if kind in ("prim::ListUnpack", "prim::TupleUnpack"):
                return _unpack(args[0], n_out)
            if kind == "prim::If":
                return self._if(node, args[0], env, ctx)
            if kind == "prim::CallMethod":
                return self._call_method(node, args, ctx)
            if kind == "prim::CallFunction":
                return self._call_function(node, args, ctx)
            if kind == "prim::RaiseException":
                # Reached unconditionally: the method would always raise.
                self.log.add(self._site(node, ctx), "the method always raises here", forced=True)
                return []
            result = self._evaluate(kind, node, args, ctx)
        except Unsupported as exc:
            return [self.log.poison(self._site(node, ctx), exc.reason)] * n_out
        if n_out == 1:
            return [result]
        return list(result) if n_out else []

    def _if(self, node: torch._C.Node, cond: Any, env: dict[int, Any], ctx: Context) -> list[Any]:
        if not isinstance(cond, bool):
            raise Unsupported("the condition is not known at compile time")
        blocks = node.blocks()  # then, else; read without exhausting the iterator (see _inputs)
        block = next(blocks)
        if not cond:
            block = next(blocks)
        self._walk(_nodes(block.returnNode()), env, ctx)
        return [self._read(env, v) for v in _inputs(block.returnNode())]

    def _call_method(self, node: torch._C.Node, args: list[Any], ctx: Context) -> list[Any]:
        target = args[0]
        if not isinstance(target, ModuleRef):
            raise Unsupported("method calls on non-module objects are not compiled")
        name = node.s("name")
        graph = target.module._get_method(name).graph
        return self._call(graph, args, Context(name, target.hierarchy, self._site(node, ctx).frames))

    def _call_function(self, node: torch._C.Node, args: list[Any], ctx: Context) -> list[Any]:
        qualname = str(node.inputsAt(0).type())
        function = self._functions.find_function(qualname)
        if function is None:
            raise Unsupported(f"the function {qualname} is not available")
        frames = self._site(node, ctx).frames
        return self._call(function.graph, args[1:], Context(function.name, ctx.hierarchy, frames))

    def _evaluate(self, kind: str, node: torch._C.Node, args: list[Any], ctx: Context) -> Any:
        """A node that is neither control flow nor a call."""
        if kind == "prim::GetAttr":
            return self._get_attr(args[0], node.s("name"))
        if kind == "prim::ListConstruct":
            return list(args)
        if kind == "prim::TupleConstruct":
            return tuple(args)
        if kind in ("prim::TupleIndex", "aten::__getitem__") and isinstance(args[0], (list, tuple)):
            if isinstance(args[1], Poison):
                return args[1]
            return args[0][args[1]]
        if kind == "prim::unchecked_cast":
            return args[0]
        if kind == "prim::Uninitialized":
            return None
        if _has_tensor(args):
            return self._lower(kind, args, self._site(node, ctx))
        fold = SCALAR_FOLDS.get(kind)
        if fold is None:
            raise Unsupported()
        try:
            return fold(*args)
        except (TypeError, ValueError, ZeroDivisionError, IndexError) as exc:
            raise Unsupported(f"cannot evaluate it at compile time: {exc}") from exc

    def _lower(self, kind: str, args: list[Any], site: NodeSite) -> Any:
        base = INPLACE.get(kind, kind)
        lowering = LOWERINGS.get(base)
        if lowering is None:
            raise Unsupported()
        if base != kind and not isinstance(args[0], Sym):
            raise Unsupported("in-place update of a module attribute")
        emitter = Emitter(self.nodes, site, lambda reason: self.log.poison(site, reason))
        result = lowering(emitter, args)
        if base != kind and isinstance(result, Sym) and result is not args[0]:
            self._replaced[args[0]] = result
        return result

    @staticmethod
    def _get_attr(owner: Any, name: str) -> Any:
        if not isinstance(owner, ModuleRef):
            raise Unsupported("attributes of non-module objects are not compiled")
        value = owner.module.getattr(name)
        if isinstance(value, torch._C.ScriptModule):
            return ModuleRef(value, (*owner.path, (name, module_type_name(value))))
        if isinstance(value, torch.Tensor):
            return TensorConst(value.detach())
        return value


# Exhausting one of torch's IR iterators (Node.inputs(), Graph.outputs()...) ends in a C++
# exception that costs ~10 us, more than the rest of a node's walk; indexed access does not.
def _inputs(node: torch._C.Node) -> list[torch._C.Value]:
    return [node.inputsAt(i) for i in range(node.inputsSize())]


def _outputs(node: torch._C.Node) -> list[torch._C.Value]:
    return [node.outputsAt(i) for i in range(node.outputsSize())]


def _nodes(return_node: torch._C.Node) -> list[torch._C.Node]:
    """The nodes of a graph or block, in order, found from its return node back to its
    parameter node (``Node.prev``; there is no ``next``) rather than through the iterator."""
    nodes = []
    node = return_node.prev()
    while node.kind() != "prim::Param":
        nodes.append(node)
        node = node.prev()
    nodes.reverse()
    return nodes


def _has_tensor(value: Any) -> bool:
    if isinstance(value, (Sym, TensorConst)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_tensor(item) for item in value)
    return False


def _unpack(value: Any, count: int) -> list[Any]:
    if not isinstance(value, (list, tuple)) or len(value) != count:
        raise Unsupported("cannot unpack this value at compile time")
    return list(value)
