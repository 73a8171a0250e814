"""A loaded bundle, ready to run: ``runtime_py.load(path).forward(x)``, and its other methods
as attributes (``m.embed(x)``) or by name (``m.run_method("embed", x)``)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_bytes, read_file
from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE, DebugTable
from bundle_format.debug_table_codec import decode_debug_table
from runtime_py.budgets import DEFAULT_MAX_MEMORY, PROGRAM_LIMITS, ProgramLimits, RunBudget
from runtime_py.delegate_trace import WRAPPER_ROOT_PREFIX, WrapperSignature, torch_style_trace
from runtime_py.errors import ExecutionError, InputError
from runtime_py.loader import LoadedModule
from runtime_py.values import ScriptObject

# Functions of the root type that are plumbing, not methods a user calls.
_HIDDEN_METHODS = {"__setstate__", "__getstate__"}


def source_mapped_message(error: ExecutionError, table: DebugTable | None, method: str,
                          wrapper: WrapperSignature | None = None) -> str:
    """``error``'s message followed by the module hierarchy and TorchScript-style traceback of
    the instruction that failed, found through its debug handle and those of the frames it
    passed through, in torch's words (``runtime_py.delegate_trace``). ``wrapper``: the lowered
    method, when the bundle's root is torch's LoweredWrapper."""
    innermost = table.lookup(error.debug_handle) if table is not None and error.debug_handle >= 0 else None
    if table is None or innermost is None:
        return f"{method}: {error.message}"
    outer = [table.lookup(handle) for handle in reversed(error.outer_handles) if handle >= 0]
    entries = [entry for entry in outer if entry is not None] + [innermost]
    return "\n".join([error.message, *torch_style_trace(entries, wrapper)])


class Module:
    """A bundle loaded by runtime_py. Weights are used in place, in the bytes read from the file."""

    def __init__(self, module: ptmf.Module, name: str = "bundle", *, max_instructions: int | None = None,
                 timeout: float | None = None, max_memory: int = DEFAULT_MAX_MEMORY) -> None:
        self.name = name
        self.ptmf = module
        _check_limits(max_instructions, timeout, max_memory)
        # run-time limits of every method call (None: unlimited); see run_method
        self.max_instructions = max_instructions
        self.timeout = timeout
        self.max_memory = max_memory
        self._loaded = LoadedModule(module)
        root_type = self._loaded.root.type_name
        self._schemas = {fn.qn[len(root_type) + 1:]: fn.schema for index in module.methods
                         if isinstance(fn := module.ivalues[index], ptmf.Function)
                         and fn.qn.startswith(root_type + ".")}
        self._method_names = tuple(name for name in self._schemas if name not in _HIDDEN_METHODS)

    @cached_property
    def debug_table(self) -> DebugTable | None:
        """The debug-handle -> source table, decoded (and checked: FormatError if malformed) when
        first needed, mapping an error or describing the bundle: running needs none of it."""
        raw_table = self.ptmf.extra_file(DEBUG_TABLE_EXTRA_FILE)
        return decode_debug_table(raw_table) if raw_table is not None else None

    @property
    def extra_files(self) -> dict[str, bytes]:
        """The files stored beside the model (``liteexport export --extra-file``, torch's
        ``_extra_files``): labels, normalization constants...; liteexport's own (``liteexport/...``:
        debug table, test vectors) are left out."""
        return {e.name: bytes(e.content) for e in self.ptmf.extra_files if not e.name.startswith("liteexport/")}

    @property
    def method_names(self) -> tuple[str, ...]:
        return self._method_names

    def method_schema(self, name: str) -> ptmf.Schema:
        self._check_method(name)
        schema = self._schemas[name]
        return schema if schema is not None else ptmf.Schema((), ())

    def _check_method(self, name: str) -> None:
        if name not in self._method_names:
            raise InputError(f"{self.name} has no method '{name}'; its methods: "
                             + ", ".join(self.method_names))

    def run_method(self, name: str, *inputs: np.ndarray, max_instructions: int | None = None,
                   timeout: float | None = None, max_memory: int | None = None) -> Any:
        """Run method ``name``; a failure inside a compiled program is reported with the
        module hierarchy and the Python source line that produced the failing instruction.

        ``max_instructions`` and ``timeout`` (seconds) bound the bytecode the call interprets
        (default: the module's own, from ``runtime_py.load``): a hostile bundle can loop forever.
        Exceeding one raises RunLimitExceeded (an ExecutionError). Compiled (lowered) programs
        have no loops and are not counted, but the timeout holds inside them too.

        ``max_memory`` (bytes; default the module's, DEFAULT_MAX_MEMORY = 2 GiB) bounds what a
        compiled program holds alive: inputs and results, weights not. Each instruction's
        allocation is checked from its inputs' shapes before it runs (RunLimitExceeded), and a
        value the bytecode builds may be no larger under run limits."""
        self._check_method(name)
        _check_limits(max_instructions, timeout, max_memory)
        limits = (max_instructions if max_instructions is not None else self.max_instructions,
                  timeout if timeout is not None else self.timeout)
        memory = max_memory if max_memory is not None else self.max_memory
        budget = RunBudget(*limits, max_memory=memory) if limits != (None, None) else None
        args = self.with_defaults(name, list(inputs))
        program_limits = ProgramLimits(memory, budget.deadline if budget is not None else None, limits[1])
        token = PROGRAM_LIMITS.set(program_limits)
        try:
            return self._loaded.call_limited(self._loaded.root, name, args, budget)
        except InputError as exc:  # one line first, then the module that reads the input (no traceback)
            entry = self.debug_table.lookup(exc.debug_handle) if exc.debug_handle >= 0 and self.debug_table else None
            if entry is None:
                raise
            mapped_input = InputError(f"{name}: {exc.message}\nModule hierarchy: {entry.module_hierarchy}")
            mapped_input.code, mapped_input.fields, mapped_input.debug_handle = exc.code, exc.fields, exc.debug_handle
            raise mapped_input from None
        except ExecutionError as exc:
            if exc.debug_handle < 0:
                raise
            message = source_mapped_message(exc, self.debug_table, name, self._wrapper_signature(name))
            mapped = type(exc)(message,  # same kind (RunLimitExceeded...)
                               debug_handle=exc.debug_handle)
            mapped.code, mapped.fields = exc.code, exc.fields
            raise mapped from None
        finally:
            PROGRAM_LIMITS.reset(token)

    def _wrapper_signature(self, name: str) -> WrapperSignature | None:
        """Method ``name`` as torch's to_backend wraps it, when the root is a LoweredWrapper."""
        schema = self._schemas.get(name)
        if not self._loaded.root.type_name.startswith(WRAPPER_ROOT_PREFIX) or schema is None:
            return None
        returns = schema.returns[0].type if schema.returns else "Tensor"
        outputs = returns.count("Tensor") if returns.startswith("Tuple[") else None
        return WrapperSignature(name, tuple((arg.name, arg.type) for arg in schema.arguments[1:]), outputs)

    def with_defaults(self, name: str, inputs: list[Any]) -> list[Any]:
        """``inputs`` completed with the schema's default values for trailing arguments left out
        (like torch's checkAndNormalizeInputs). Index 0 (None) is also what an argument without
        a default holds, so None is filled in only where the type allows it."""
        schema = self._schemas[name]
        if schema is None or len(inputs) == len(schema.arguments) - 1:  # the usual call: nothing to do
            return inputs
        params = schema.arguments[1:]
        expected = ", ".join(arg.name for arg in params)
        if len(inputs) > len(params):
            raise InputError(f"{name}({expected}) takes {len(params)} input(s), got {len(inputs)}")
        for arg in params[len(inputs):]:
            if arg.default_value == 0 and not arg.type.startswith("Optional["):
                raise InputError(f"{name}({expected}) takes {len(params)} input(s), got {len(inputs)}; "
                                 f"'{arg.name}' has no default value")
            inputs.append(self._loaded.value(arg.default_value))
        return inputs

    @cached_property
    def _module_states(self) -> tuple[Any, ...]:
        """The state of each compiled module in the bundle (runtime_py/backends/demo/state.py), found
        once in the loaded object graph: a backend's method handles carry it."""
        found: dict[int, Any] = {}
        seen: set[int] = set()
        stack: list[Any] = [self._loaded.root]
        while stack:
            value = stack.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, ScriptObject):
                stack.extend(value.slots)
            elif isinstance(value, dict):
                stack.extend(value.values())
            elif isinstance(value, list | tuple):
                stack.extend(value)
            elif (state := getattr(value, "module_state", None)) is not None:
                found[id(state)] = state
        return tuple(found.values())

    @property
    def state(self) -> dict[str, np.ndarray]:
        """The tensors the bundle keeps across calls (a KV cache), by name, as read-only views:
        empty for a bundle without state. Each loaded module has its own."""
        views: dict[str, np.ndarray] = {}
        for state in self._module_states:
            for name, array in state.arrays.items():
                view = array.view()
                view.flags.writeable = False
                views[name] = view
        return views

    def reset_state(self) -> None:
        """Every state tensor back to its initial value (the start of a new conversation)."""
        for state in self._module_states:
            state.reset()

    def forward(self, *inputs: np.ndarray, max_instructions: int | None = None, timeout: float | None = None,
                max_memory: int | None = None) -> Any:
        return self.run_method("forward", *inputs, max_instructions=max_instructions, timeout=timeout,
                               max_memory=max_memory)

    def __getattr__(self, name: str) -> Any:
        """A bundle method as an attribute: ``m.embed(x)`` is ``m.run_method("embed", x)`` (forward
        has its own). Called only for names the class and instance lack, so a method named like one
        of ours (``run_method``, ``name``...) is reached through ``run_method`` only."""
        methods = self.__dict__.get("_method_names", ())
        if name in methods:
            def call(*inputs: np.ndarray, max_instructions: int | None = None, timeout: float | None = None,
                     max_memory: int | None = None) -> Any:
                return self.run_method(name, *inputs, max_instructions=max_instructions, timeout=timeout,
                                       max_memory=max_memory)

            call.__name__ = call.__qualname__ = name
            call.__doc__ = f"Run the bundle's method '{name}' (see Module.run_method)."
            return call
        raise AttributeError(f"{type(self).__name__} {self.__dict__.get('name', '')!r} has no attribute "
                             f"{name!r}; its bundle's methods: {', '.join(methods) or '(none)'}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__.get("_method_names", ())))


def _check_limits(max_instructions: int | None, timeout: float | None, max_memory: int | None = None) -> None:
    if max_memory is not None and (not isinstance(max_memory, int) or max_memory < 1):
        raise ValueError(f"max_memory must be a positive number of bytes, got {max_memory!r}")
    if max_instructions is not None and (not isinstance(max_instructions, int) or max_instructions < 1):
        raise ValueError(f"max_instructions must be a positive int, got {max_instructions!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")


def load(path: str | Path, *, max_instructions: int | None = None, timeout: float | None = None,
         max_memory: int | None = None) -> Module:
    """Read, verify and load the bundle at ``path`` (read into memory once: a later change to the
    file does not change the loaded module). ``max_instructions`` and ``timeout``
    (seconds) and ``max_memory`` (bytes) limit each method call (see Module.run_method); loading has
    its own limits."""
    return Module(read_bundle_bytes(read_file(path), str(path)), name=str(path), max_instructions=max_instructions,
                  timeout=timeout, max_memory=max_memory if max_memory is not None else DEFAULT_MAX_MEMORY)
