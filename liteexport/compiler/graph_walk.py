"""Walk a method's TorchScript graph, evaluating every node abstractly.

Instead of ``torch._C._jit_pass_inline`` (after which the Python bindings expose a node's
call stack only as a module-hierarchy string), the walk follows ``prim::CallMethod`` and
``prim::CallFunction`` into the callee graphs itself. That way it knows, for every node,
the module instance it runs in (``top(TinyCNN).features(Sequential).0(Conv2d)``) and the
source frame of every call on the way (outermost first). ``prim::If`` with a condition known
at compile time (``self.training``, ``bias is not None``) walks only the taken branch.

Tensor nodes are lowered through ``lowerings.LOWERINGS``; nodes over Python values fold through
``lowerings.SCALAR_FOLDS``. ``prim::Loop`` with a trip count and condition known at compile
time is unrolled; lists and dicts are Python objects shared by reference, so ``append``
and friends mutate them as TorchScript would. A node that cannot be compiled yields
:class:`Poison`; whether it is reported depends on whether the poison reaches a method
output — except for a node with a side effect (it writes to a list, a module attribute or
a tensor: see :mod:`liteexport.compiler.effects`), which is reported whenever it is reached,
so that no effect is ever dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from bundle_format.debug_table import SourceFrame
from liteexport.compiler.effects import CONTAINER_WRITES, IGNORED, mutates, returns_view, writes_first_argument
from liteexport.compiler.environment import ENVIRONMENT, answers
from liteexport.compiler.lowerings import INPLACE, LOWERINGS, SCALAR_FOLDS, SYMBOLIC_FACTORIES
from liteexport.compiler.ops import SHAPES_HINT, Emitter
from liteexport.compiler.reports import ReportLog
from liteexport.compiler.source import parse_torch_range
from liteexport.compiler.state_ops import StateBinding, state_binding
from liteexport.compiler.symbolic import SymSize, has_symbolic, size_of
from liteexport.compiler.torch_eval import constant_results, meta_results
from liteexport.compiler.trace_forms import normalize
from liteexport.compiler.values import (
    ModuleRef,
    NodeSite,
    OpNode,
    Poison,
    Sym,
    TensorConst,
    Unsupported,
    find_blocked,
    find_poison,
)

# Nodes that move values around without computing on them: a poisoned element of a list
# (say one dynamic entry of ``x.size()``) poisons only what later reads that element.
_STRUCTURAL = {
    "prim::ListConstruct", "prim::TupleConstruct", "prim::ListUnpack", "prim::TupleUnpack",
    "prim::TupleIndex", "aten::__getitem__", "aten::len", "prim::unchecked_cast",
    "aten::list_with_default", "prim::DictConstruct", "aten::dict", *CONTAINER_WRITES,
}
# Calls are walked whatever their arguments: a poisoned argument poisons only what the
# callee computes from it, and the callee's own unsupported nodes are reported too.
_CALLS = {"prim::CallMethod", "prim::CallFunction"}
# Kinds the walk itself evaluates (besides the lowering and folding tables).
_WALKED = _STRUCTURAL | _CALLS | {
    "prim::If", "prim::Loop", "prim::RaiseException", "prim::GetAttr", "prim::Uninitialized",
}
# Nodes reading a tensor's value as a Python number or bool: data-dependent, never static.
_TENSOR_READS = {"aten::Bool", "aten::Int", "aten::Float", "aten::item", "aten::ScalarImplicit",
                 "aten::is_nonzero"}
DATA_DEPENDENT = ("it reads a tensor's values at compile time (data-dependent control flow or sizes); "
                  "compute the decision outside the model, or use torch.where")
# In-place dropout: in eval mode the identity, so it writes nothing (Dropout(inplace=True)).
_INPLACE_DROPOUT = {f"aten::{name}_": f"aten::{name}"
                    for name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")}
_MAX_UNROLL = 4096  # loop iterations the walk unrolls, per loop


def is_known_kind(kind: str) -> bool:
    """Whether some input values could make a node of this kind compile."""
    return (kind in _WALKED or kind in LOWERINGS or kind in INPLACE or kind in _INPLACE_DROPOUT
            or kind in SCALAR_FOLDS or kind in ENVIRONMENT)


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
    if span is None:  # a traced node: its source is the Python stack it was traced at, kept as is
        text = source_range.rstrip("\n")
        return SourceFrame(function, "", 0, text) if text.strip() else None
    return span.frame(function)


class MethodWalk:
    """Evaluates one method; collects its instructions-to-be in ``nodes`` (program order).

    ``functions`` are the compilation units searched for ``prim::CallFunction`` targets
    (the scripting process's own, and a loaded archive's)."""

    def __init__(self, method: str, log: ReportLog, functions: Sequence[Any] = (),
                 progress: Callable[[int], None] | None = None, state_attributes: frozenset[str] = frozenset()) -> None:
        self.method = method
        # Module tensors written in place are program state (compiler/state_ops.py): the ones in
        # ``state_attributes`` (dotted names) are bound as state; one written in place that is not
        # is recorded in ``written_attributes``, and the module is walked again with it as state.
        self._state_attributes = state_attributes
        self.states: dict[str, StateBinding] = {}
        self.written_attributes: set[str] = set()
        # id() of a module tensor's TensorConst -> (its dotted name, the TensorConst, kept alive so ids stay unique)
        self._attribute_names: dict[int, tuple[str, TensorConst]] = {}
        self.log = log
        self.nodes: list[OpNode] = []
        self.visited = 0  # TorchScript nodes evaluated (callees included, untaken branches not)
        # in-place ops: the old value now reads as the new (tensors computed at run time, and
        # constants computed at compile time)
        self._replaced: dict[Sym | TensorConst, Sym | TensorConst] = {}
        self._views: set[Sym | TensorConst] = set()  # values sharing memory with another (a view, or viewed)
        self._functions = [torch.jit._state._python_cu, *functions]  # free functions, by qualname
        self._progress = progress
        self._maybe = 0  # > 0 inside the branches of an If whose condition is unknown
        self._state: set[int] = set()  # storages of module attributes (parameters, buffers)
        self._read_by_program: set[int] = set()  # storages of constants compiled instructions read
        # Lists and dicts held by module attributes, by (instance path, attribute): torch hands out
        # a fresh copy on every read, but in TorchScript every read is the same object, so a write
        # (a memo such as timm's attention-bias cache) must be seen by the reads after it.
        self._attributes: dict[tuple[tuple[tuple[str, str], ...], str], Any] = {}
        self._attribute_ids: set[int] = set()  # id() of those containers

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
        return [self.current(self._read(env, v)) for v in _inputs(graph.return_node())]

    def _walk(self, nodes: list[torch._C.Node], env: dict[int, Any], ctx: Context) -> None:
        for node in nodes:
            results = self._node(node, env, ctx)
            for value, result in zip(_outputs(node), results, strict=True):
                env[value.unique()] = result

    def _read(self, env: dict[int, Any], value: torch._C.Value) -> Any:
        result = env[value.unique()]
        while isinstance(result, (Sym, TensorConst)) and result in self._replaced:
            result = self._replaced[result]
        return result

    def current(self, value: Any) -> Any:
        """``value`` with every tensor inside it (lists, tuples) as last updated in place."""
        if not self._replaced:
            return value
        if isinstance(value, (Sym, TensorConst)):
            while value in self._replaced:
                value = self._replaced[value]
            return value
        if isinstance(value, (list, tuple)) and any(isinstance(v, (Sym, TensorConst, list, tuple)) for v in value):
            return type(value)(self.current(v) for v in value)
        return value

    def _site(self, node: torch._C.Node, ctx: Context) -> NodeSite:
        frame = node_frame(node, ctx.function)
        if frame is None and node.inputsSize():
            # Some nodes (prim::SetAttr of `self.n += 1`) carry no range; the value they
            # take comes from the same source line.
            frame = node_frame(node.inputsAt(node.inputsSize() - 1).node(), ctx.function)
        frames = ctx.frames if frame is None else (*ctx.frames, frame)
        return NodeSite(self.method, node.kind(), ctx.hierarchy, frames)

    # --- one node ------------------------------------------------------------------------------

    def _node(self, node: torch._C.Node, env: dict[int, Any], ctx: Context) -> list[Any]:
        kind = node.kind()
        n_out = node.outputsSize()
        self.visited += 1
        if self._progress is not None and self.visited % 1000 == 0:
            self._progress(self.visited)
        if kind == "prim::Constant":
            out = node.output()
            if out.type().kind() == "FunctionType":
                return [None]
            value = out.toIValue()
            # a tensor constant of the graph is shared by every call: state, never updated in place
            if isinstance(value, torch.Tensor):
                self._state.add(_storage(value))
                return [TensorConst(value.detach(), state=True)]
            return [value]
        args = [self._read(env, v) for v in _inputs(node)]
        if kind in IGNORED:
            return []
        kind, args = normalize(kind, args)
        # The node's site (its source frames) is built only where it is used, for a call, an
        # instruction or a report: formatting source snippets is most of a walk's time.
        poisoned = find_poison(args) if kind not in _STRUCTURAL and kind not in _CALLS else frozenset()
        if kind == "prim::If" and isinstance(args[0], Poison):
            poisoned = args[0].reports
        if poisoned:
            if kind == "prim::If" and not mutates(node):
                # Either branch may run: walk both, so that what they cannot compile is
                # reported too (with the condition's cause, when the result is used).
                self._maybe += 1
                try:
                    for block in node.blocks():
                        self._walk(_nodes(block.returnNode()), env, ctx)
                        poisoned |= find_poison([self._read(env, v) for v in _inputs(block.returnNode())])
                finally:
                    self._maybe -= 1
                return [Poison(poisoned)] * n_out
            if mutates(node):
                # Its effect is lost: what made it uncompilable is reported whatever happens next.
                self.log.force(poisoned)
                if not is_known_kind(kind):
                    poisoned |= {self.log.add(self._site(node, ctx), forced=True)}
            elif not is_known_kind(kind):
                # Unsupported whatever its inputs: report it too, not only the root cause.
                poisoned |= self.log.poison(self._site(node, ctx)).reports
            return [Poison(poisoned)] * n_out
        if kind in _STRUCTURAL and args and isinstance(args[0], Poison):
            if mutates(node):
                self.log.force(args[0].reports)
            return [args[0]] * n_out  # the container itself is poisoned
        try:
            if kind in ("prim::ListUnpack", "prim::TupleUnpack"):
                return _unpack(args[0], n_out)
            if kind == "prim::If":
                return self._if(node, args[0], env, ctx)
            if kind == "prim::Loop":
                return self._loop(node, args, env, ctx)
            if kind == "prim::CallMethod":
                return self._call_method(node, args, ctx)
            if kind == "prim::CallFunction":
                return self._call_function(node, args, ctx)
            if kind == "prim::RaiseException":
                if not self._maybe:  # reached unconditionally: the method would always raise
                    self.log.add(self._site(node, ctx), "the method always raises here", forced=True)
                return []
            result = self._evaluate(kind, node, args, ctx)
        except Unsupported as exc:
            report = frozenset({self.log.add(self._site(node, ctx), exc.reason, forced=mutates(node))})
            shaped = meta_results(node, args, report | find_blocked(args)) if _has_tensor(args) else None
            if shaped is None:
                return [Poison(report)] * n_out
            if isinstance(args[0], Sym) and shaped and isinstance(shaped[0], Sym) and writes_first_argument(node):
                self._replaced[args[0]] = shaped[0]  # an in-place op: later reads see the blocked value
            return shaped
        if n_out == 1:
            return [result]
        return list(result) if n_out else []

    def _if(self, node: torch._C.Node, cond: Any, env: dict[int, Any], ctx: Context) -> list[Any]:
        if not isinstance(cond, bool):
            raise Unsupported("the condition is not known at compile time; "
                              + (DATA_DEPENDENT if isinstance(cond, (Sym, TensorConst)) else SHAPES_HINT))
        blocks = node.blocks()  # then, else; read without exhausting the iterator (see _inputs)
        block = next(blocks)
        if not cond:
            block = next(blocks)
        self._walk(_nodes(block.returnNode()), env, ctx)
        return [self._read(env, v) for v in _inputs(block.returnNode())]

    def _loop(self, node: torch._C.Node, args: list[Any], env: dict[int, Any], ctx: Context) -> list[Any]:
        """``prim::Loop(trip_count, condition, *carried)``, unrolled: its body runs as many
        times as it would at run time, which must be known now."""
        trip, cond, carried = args[0], args[1], list(args[2:])
        block = next(node.blocks())
        params = _outputs(block.paramNode())
        returns = _inputs(block.returnNode())
        body = _nodes(block.returnNode())
        iteration = 0
        while True:
            if not isinstance(cond, bool) or not isinstance(trip, int):
                raise Unsupported("the number of iterations is not known at compile time; " + (
                    DATA_DEPENDENT if any(isinstance(v, (Sym, TensorConst)) for v in (cond, trip))
                    else SHAPES_HINT))
            if not cond or iteration >= trip:
                return carried
            if iteration == _MAX_UNROLL:
                raise Unsupported(f"more than {_MAX_UNROLL} iterations are not unrolled")
            for value, arg in zip(params, [iteration, *carried], strict=True):
                env[value.unique()] = arg
            self._walk(body, env, ctx)
            cond, *carried = [self._read(env, v) for v in returns]
            iteration += 1

    def _call_method(self, node: torch._C.Node, args: list[Any], ctx: Context) -> list[Any]:
        target = args[0]
        if not isinstance(target, ModuleRef):
            raise Unsupported("method calls on non-module objects are not compiled")
        name = node.s("name")
        graph = target.module._get_method(name).graph
        return self._call(graph, args, Context(name, target.hierarchy, self._site(node, ctx).frames))

    def _call_function(self, node: torch._C.Node, args: list[Any], ctx: Context) -> list[Any]:
        qualname = str(node.inputsAt(0).type())
        function = self._find_function(qualname)
        if function is None:
            raise Unsupported(f"the function {qualname} is not available")
        frames = self._site(node, ctx).frames
        return self._call(function.graph, args[1:], Context(function.name, ctx.hierarchy, frames))

    def _find_function(self, qualname: str) -> Any:
        for unit in self._functions:
            function = unit.find_function(qualname)
            if function is not None:
                return function
        return None

    def _evaluate(self, kind: str, node: torch._C.Node, args: list[Any], ctx: Context) -> Any:
        """A node that is neither control flow nor a call."""
        if kind == "prim::GetAttr":
            return self._get_attr(args[0], node.s("name"))
        if kind == "prim::SetAttr":
            raise Unsupported("writes to module attributes (state kept across calls) are not compiled")
        if kind == "prim::ListConstruct":
            return list(args)
        if kind == "prim::TupleConstruct":
            return tuple(args)
        if kind == "prim::DictConstruct":
            return dict(zip(args[0::2], args[1::2], strict=True))
        if kind == "aten::dict" and not args:  # an empty dict, filled by aten::_set_item (OrderedDict())
            return {}
        if kind in CONTAINER_WRITES and isinstance(args[0], (list, dict)):
            if id(args[0]) in self._attribute_ids:
                _check_memo(kind, args)
            return CONTAINER_WRITES[kind](*args)
        if kind in ("prim::TupleIndex", "aten::__getitem__") and isinstance(args[0], (list, tuple, dict)):
            if isinstance(args[1], Poison):
                return args[1]
            return args[0][args[1]]
        if kind == "aten::len":
            return _length(args[0])
        if kind == "prim::unchecked_cast":
            return args[0]
        if kind == "prim::Uninitialized":
            return None
        if answers(kind, args):
            return ENVIRONMENT[kind](*args)
        if kind in _TENSOR_READS and _has_tensor(args):
            if not (isinstance(args[0], TensorConst) and args[0].tensor.numel() == 1):
                raise Unsupported(DATA_DEPENDENT)
            # a constant's value is known now (a saved traced archive's int(tensor(8) + tensor(0)))
            args = [args[0].tensor.item(), *args[1:]]
        if _has_tensor(args) or kind in SYMBOLIC_FACTORIES and has_symbolic(args):
            folded = self._on_constants(node, self.current(args))
            if folded is not None:
                return folded[0] if len(folded) == 1 else folded
            return self._lower(kind, node, self.current(args), self._site(node, ctx))
        fold = SCALAR_FOLDS.get(kind)
        if fold is None:
            raise Unsupported()
        try:
            return fold(*args)
        except (TypeError, ValueError, ZeroDivisionError, IndexError, KeyError) as exc:
            raise Unsupported(f"cannot evaluate it at compile time: {exc}") from exc

    def _lower(self, kind: str, node: torch._C.Node, args: list[Any], site: NodeSite) -> Any:
        base = INPLACE.get(kind) or _INPLACE_DROPOUT.get(kind, kind)
        lowering = LOWERINGS.get(base)
        if lowering is None:
            # an op without an instruction on compile-time tensors only (T5's relative position
            # buckets: min of int64 positions): torch computes it now, with the node's own overload
            if base == kind and not node.isNondeterministic() and all(
                    isinstance(v, TensorConst) for v in _flat(args) if isinstance(v, (Sym, TensorConst))):
                folded = constant_results(node, args, lambda t: _storage(t) in self._state)
                if folded is not None and len(folded) == 1:
                    return folded[0]
            raise Unsupported()
        target = args[0]
        if kind in INPLACE and isinstance(target, TensorConst) and id(target) in self._attribute_names:
            self._check_inplace_target(target)  # a module tensor written in place: state, in the next walk
        emitter = Emitter(self.nodes, site, lambda reason: self.log.poison(site, reason))
        first_new = len(self.nodes)
        result = lowering(emitter, args)
        for op in self.nodes[first_new:]:
            self._read_by_program.update(_storage(v.tensor) for v in op.inputs if isinstance(v, TensorConst))
        if base != kind and result is not target:
            self._check_inplace_target(target)  # it changes the value (eval dropout_ does not)
        blocked = find_blocked(args)
        if blocked:
            for value in _new_tensors(result, target):
                if isinstance(value, Sym):
                    value.blocked |= blocked
        if base != kind and isinstance(result, (Sym, TensorConst)) and result is not target:
            self._replaced[target] = result
        elif isinstance(target, (Sym, TensorConst)) and _new_tensors(result, target) and returns_view(node):
            # Writing through either one later would have to change the other: see _check_inplace_target.
            self._views.add(target)
            self._views.update(_new_tensors(result, target))
        return result

    def _check_inplace_target(self, target: Any) -> None:
        """An in-place op is compiled as its out-of-place op plus "the old value now reads as
        the new one"; that is only right when no other value shares the target's memory."""
        if isinstance(target, TensorConst) and id(target) in self._attribute_names:
            self.written_attributes.add(self._attribute_names[id(target)][0])  # state, in the next walk
            raise Unsupported("in-place update of a module attribute that is not compiled as program state")
        if not isinstance(target, (Sym, TensorConst)) or (isinstance(target, TensorConst) and target.state):
            raise Unsupported("in-place update of a module attribute (module state) is not compiled")
        if isinstance(target, Sym) and target.input_index >= 0:
            raise Unsupported("in-place update of a method input (the caller's tensor) is not compiled")
        if target in self._views:
            raise Unsupported("in-place update of a tensor that shares memory with another (a view) "
                              "is not compiled")

    def _on_constants(self, node: torch._C.Node, args: list[Any]) -> list[Any] | None:
        """A view or in-place update of compile-time tensors, run by torch on the tensors
        themselves (so views alias as in torch); None for other nodes, which fold through
        their lowering."""
        if any(isinstance(v, Sym) for v in _flat(args)) or node.isNondeterministic():
            return None  # random ops (uniform_, dropout in training...) never fold
        if writes_first_argument(node):
            target = args[0]
            if not isinstance(target, TensorConst) or target.state or target in self._views:
                return None  # reported by _lower, as module state or a folded copy of a view
            if _storage(target.tensor) in self._read_by_program:
                raise Unsupported("in-place update of a constant that compiled instructions already read "
                                  "is not compiled")
        elif not returns_view(node):
            return None
        return constant_results(node, args, lambda t: _storage(t) in self._state)

    def _get_attr(self, owner: Any, name: str) -> Any:
        if not isinstance(owner, ModuleRef):
            raise Unsupported("attributes of non-module objects are not compiled")
        value = owner.module.getattr(name)
        if isinstance(value, torch._C.ScriptModule):
            return ModuleRef(value, (*owner.path, (name, module_type_name(value))))
        if isinstance(value, torch.Tensor):
            dotted = ".".join([*(part for part, _ in owner.path[1:]), name])
            if dotted in self._state_attributes:  # written in place by some method: program state
                if dotted not in self.states:
                    self.states[dotted] = state_binding(dotted, value.detach())
                return self.states[dotted].value
            self._state.add(_storage(value))
            attribute = TensorConst(value.detach(), state=True)
            self._attribute_names[id(attribute)] = (dotted, attribute)
            return attribute
        if isinstance(value, (list, dict)):
            key = (owner.path, name)
            if key not in self._attributes:
                self._attributes[key] = _as_walk_values(value, self._state)
                self._attribute_ids.add(id(self._attributes[key]))
            return self._attributes[key]
        return value


def _as_walk_values(value: Any, state: set[int]) -> Any:
    """A container attribute's contents as the walk's values (its tensors module state)."""
    if isinstance(value, torch.Tensor):
        state.add(_storage(value))
        return TensorConst(value.detach(), state=True)
    if isinstance(value, dict):
        return {k: _as_walk_values(v, state) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_as_walk_values(v, state) for v in value)
    return value


def _check_memo(kind: str, args: list[Any]) -> None:
    """A write to a dict held by a module attribute compiles when it is a memo: a value known at
    compile time (computed from parameters and constants) stored under a key known at compile
    time, as ``cache[str(device)] = self.biases[:, self.idxs]`` in eval mode. Every call then
    writes the same entry, so the program computing it on each call returns what torch returns
    from the cache. Anything else is state kept across calls, which a compiled program has not."""
    if kind == "aten::_set_item" and isinstance(args[0], dict) and not _has_run_time_value(args[1:]):
        return
    raise Unsupported("writes to a list or dict held by a module attribute (state kept across calls) are "
                      "not compiled, except a dict entry set to a value known at compile time (a memo)")


def _has_run_time_value(value: Any) -> bool:
    if isinstance(value, (Sym, Poison)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_run_time_value(v) for v in value)
    if isinstance(value, dict):
        return any(_has_run_time_value(v) for v in value.values())
    return False


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


def _storage(tensor: torch.Tensor) -> int:
    return int(tensor.untyped_storage().data_ptr())


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [item for v in value for item in _flat(v)]
    return [value]


def _new_tensors(result: Any, source: Any) -> list[Sym | TensorConst]:
    items = result if isinstance(result, (list, tuple)) else [result]
    return [v for v in items if isinstance(v, (Sym, TensorConst)) and v is not source]


def _length(value: Any) -> int | SymSize:
    """``len`` of a container, or of a tensor (its first dimension: static, or a named dim's SymSize)."""
    if isinstance(value, (list, tuple, dict, str)):
        return len(value)
    if isinstance(value, TensorConst):
        return len(value.tensor)
    if isinstance(value, Sym) and value.shape and (first := size_of(value, 0)) is not None:
        return first  # static, or a SymSize
    raise Unsupported(f"the length of this tensor is not static; {SHAPES_HINT}")


def _unpack(value: Any, count: int) -> list[Any]:
    if not isinstance(value, (list, tuple)) or len(value) != count:
        raise Unsupported("cannot unpack this value at compile time")
    return list(value)
