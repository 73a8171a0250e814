"""The operator registry: schema + implementation, and the stack kernels bound from them.

An implementation is a plain Python function taking the schema's arguments positionally
and returning its result (a tuple when the schema returns several values). `bind` turns it
into a kernel for one call site: pop the serialized arguments (or the vararg count and
that many), fill the omitted trailing ones with the schema's defaults, call, push.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from runtime_py.errors import ExecutionError, InternalError, LiteExportError, is_value_failure
from runtime_py.operators.schema import Schema, argument_mismatch, parse_schema
from runtime_py.quantized_tensor import QuantizedTensor

Kernel = Callable[[list[Any]], None]


@dataclass(frozen=True)
class OperatorDef:
    schema: Schema
    impl: Callable[..., Any]
    # impl is a factory called once per call site, returning that site's implementation: for
    # kernels that keep state between calls (a conv's weight matrix and buffers, folded norms)
    per_site: bool = False


# "name.overload" (or "name" when the overload is empty) -> its definition
OPERATORS: dict[str, OperatorDef] = {}
# the operators outside quantized:: that take quantized tensors (aten::quantize_per_tensor's result,
# aten::dequantize, the shape and pooling operators with a quantized kernel)
QUANTIZED_AWARE: set[str] = set()


def op(*schemas: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the implementation of every schema given."""

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        for text in schemas:
            register_schema(text, impl)
        return impl

    return register


def register_schema(text: str, impl: Callable[..., Any], per_site: bool = False) -> None:
    schema = parse_schema(text)
    if schema.key in OPERATORS:
        raise ValueError(f"operator {schema.key} registered twice")
    OPERATORS[schema.key] = OperatorDef(schema, impl, per_site)


def quantized_kernel(key: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as operator ``key``'s kernel for a quantized first argument
    (torch dispatches a quantized tensor to its QuantizedCPU kernel): the operator's definition
    becomes one that calls ``qimpl(float_impl, *args)`` when that argument is a QuantizedTensor
    (``float_impl``: the operator's own implementation at that call site, for the kernels that
    run it on the integers), and the float implementation otherwise."""

    def register(qimpl: Callable[..., Any]) -> Callable[..., Any]:
        QUANTIZED_AWARE.add(key)
        old = OPERATORS[key]
        if old.per_site:
            OPERATORS[key] = OperatorDef(old.schema, lambda: _dispatching(old.impl(), qimpl), True)
        else:
            OPERATORS[key] = OperatorDef(old.schema, _dispatching(old.impl, qimpl))
        return qimpl

    return register


def _dispatching(impl: Callable[..., Any], qimpl: Callable[..., Any]) -> Callable[..., Any]:
    def dispatch(*args: Any) -> Any:
        return qimpl(impl, *args) if type(args[0]) is QuantizedTensor else impl(*args)

    return dispatch


def _holds_quantized(args: Sequence[Any]) -> bool:
    """Whether an argument, or an item of a list argument (Tensor[]), is a quantized tensor."""
    return any(type(a) is QuantizedTensor or (type(a) is list and any(type(v) is QuantizedTensor for v in a))
               for a in args)


def as_tensor(value: Any) -> Any:
    """An operator's Tensor result as pushed: an ndarray (numpy scalars become 0-d arrays) or a
    QuantizedTensor as it is."""
    return value if type(value) is QuantizedTensor else np.asarray(value)


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def wrap_int64(value: int) -> int:
    """``value`` as TorchScript's int64 holds it: two's complement wrap-around, as torch's C++
    arithmetic gives. Every int an operator pushes is wrapped, so no int grows past 64 bits and each
    operator costs O(1) (a bundle squaring a number 40 times would otherwise run for ever, in C)."""
    return value if INT64_MIN <= value <= INT64_MAX else ((value + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def _to_value(value: Any, type_str: str) -> Any:
    """numpy scalars never leave a kernel: a 0-dim array for a Tensor, a Python number otherwise;
    an int result is an int64."""
    if isinstance(value, np.generic):
        return np.asarray(value) if type_str.startswith("Tensor") else value.item()
    if type(value) is int and (type_str == "int" or type_str == "Scalar"):
        return wrap_int64(value)
    return value


def fail(name: str, exc: BaseException, schema: Schema, args: Sequence[Any]) -> BaseException:
    """What operator ``name``'s implementation raising ``exc`` on ``args`` becomes (``exc`` itself:
    re-raise it as it is). The rule:

    - our own errors stay what they are (an ExecutionError is prefixed with the operator's name),
      and so do MemoryError and RecursionError (the interpreter reports them where they happened);
    - errors.is_value_failure (ValueError, ArithmeticError, numpy's dtype refusals) is about the
      values: ExecutionError;
    - anything else (TypeError, AttributeError, KeyError, IndexError, NameError, AssertionError...)
      is the bundle's only when an argument does not have its schema's type - the bytecode that
      pushed it was never type-checked - and an ExecutionError naming that argument; with
      arguments of the schema's types it is a bug in the implementation: InternalError (exit 70).
    """
    if isinstance(exc, ExecutionError):
        return exc if str(exc).startswith(name) else ExecutionError(f"{name}: {exc}")
    if isinstance(exc, LiteExportError | MemoryError | RecursionError):
        return exc
    if _holds_quantized(args) and not schema.name.startswith("quantized::") and schema.key not in QUANTIZED_AWARE:
        return ExecutionError(f"{name} is not supported on quantized tensors by runtime_py (it runs the quantized "
                              "operators of torch's qnnpack engine; dequantize first)")
    if is_value_failure(exc):
        message = str(exc)
        if isinstance(exc, ValueError) and "read-only" in message:
            message = ("cannot write into a tensor loaded from the bundle: the bundle's tensors are "
                       "read-only (clone() it first)")
        return ExecutionError(f"{name}: {message}")
    mismatch = argument_mismatch(schema, args)
    if mismatch is not None:
        return ExecutionError(f"{name}: {mismatch}")
    return InternalError(f"{name} failed on arguments of its schema's types: {type(exc).__name__}: {exc}")


def reraise(name: str, exc: Exception, schema: Schema, args: Sequence[Any]) -> NoReturn:
    """Raise what ``fail`` makes of ``exc`` (``exc`` itself, as it was, or a new error caused by it)."""
    failure = fail(name, exc, schema, args)
    if failure is exc:
        raise exc
    raise failure from exc


def _pusher(schema: Schema) -> Callable[[list[Any], Any], None]:
    """How a call site pushes the implementation's result, chosen once per site."""
    returns = schema.returns
    if schema.varret:
        return list.extend
    if returns == ("Tensor",):
        def push_tensor(stack: list[Any], result: Any) -> None:
            stack.append(result if type(result) is np.ndarray else as_tensor(result))

        return push_tensor
    if len(returns) == 1:
        return lambda stack, result: stack.append(_to_value(result, returns[0]))
    if returns:
        return lambda stack, result: stack.extend(_to_value(v, t) for v, t in zip(result, returns, strict=True))
    return lambda stack, result: None


def bind(definition: OperatorDef, num_args: int) -> Kernel:
    """The kernel for a call site that pushes ``num_args`` arguments (-1: all of them).

    Everything a call needs is settled here, once per site: the argument count, the defaults
    to append, how the result is pushed. numpy's floating-point warnings are switched off by
    the interpreter around a whole run (inf/nan follow IEEE as in torch), not per call."""
    schema, impl = definition.schema, definition.impl
    if definition.per_site:
        impl = impl()
    name = schema.key
    n_schema = len(schema.arguments)
    push = _pusher(schema)

    if schema.varargs:
        def vararg_kernel(stack: list[Any]) -> None:
            count = stack.pop()
            args = stack[len(stack) - count:]
            del stack[len(stack) - count:]
            try:
                result = impl(*args)
            except Exception as exc:
                reraise(name, exc, schema, args)
            push(stack, result)

        return vararg_kernel

    given = n_schema if num_args < 0 else num_args
    if given > n_schema:
        raise ExecutionError(f"{name}: called with {given} arguments, its schema takes {n_schema}")
    missing = [a for a in schema.arguments[given:] if not a.has_default]
    if missing:
        raise ExecutionError(f"{name}: called with {given} arguments, argument '{missing[0].name}' "
                             "has no default")
    defaults = tuple(a.default for a in schema.arguments[given:])
    mutable = any(isinstance(d, list) for d in defaults)

    def kernel(stack: list[Any]) -> None:
        if given:
            args = stack[-given:]
            del stack[-given:]
        else:
            args = []
        if defaults:
            args.extend(copy.deepcopy(defaults) if mutable else defaults)
        try:
            result = impl(*args)
        except Exception as exc:
            reraise(name, exc, schema, args)
        push(stack, result)

    if schema.returns == ("Tensor",) and not schema.varret and not mutable:
        kernel.__dict__[DIRECT] = DirectCall(impl, given, defaults, name, schema,
                                             definition.impl if definition.per_site else None)
    return kernel


DIRECT = "direct_call"  # the kernel attribute holding its DirectCall, when it has one


@dataclass(frozen=True)
class DirectCall:
    """A kernel that returns one tensor, as compiled blocks call it when its ``arity`` arguments
    are at hand: ``impl(*arguments, *defaults)``, a failure goes through ``reraise(name, exc,
    schema, arguments)`` and a result that is not an ndarray goes through np.asarray, as in the
    kernel, without the trip through the stack (the block inlines these steps: no wrapper call)."""

    impl: Callable[..., Any]
    arity: int
    defaults: tuple[Any, ...]  # immutable (no list): shared by every call
    name: str
    schema: Schema
    # for an implementation that keeps state per call site (OperatorDef.per_site), its factory: a
    # block gives each of its instructions an implementation of its own, where the kernel serves
    # every instruction calling this operator (a function's linear layers share one operator entry)
    site: Callable[[], Callable[..., Any]] | None = None

