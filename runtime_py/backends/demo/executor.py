"""Runs a prepared demo program: check the inputs, then one loop over the steps."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from bundle_format.error_codes import execution_error, input_error
from runtime_py.backends.demo.arrays import Array, Kernel, ignore_fp_errors, restore_fp_errors
from runtime_py.backends.demo.dims import check_dims
from runtime_py.backends.demo.memory import live_bytes, owned_bytes
from runtime_py.backends.demo.plan import PEAKS_KEPT, InputCheck, MethodPlan, Step
from runtime_py.backends.demo.state import StatePositionError
from runtime_py.budgets import PROGRAM_LIMITS, ProgramLimits, RunLimitExceeded
from runtime_py.errors import InputError, InternalError, LiteExportError, is_value_failure


def run(plan: MethodPlan, inputs: Sequence[object],
        observe: Callable[[int, object], None] | None = None) -> list[Array]:
    """Executes ``plan`` on ``inputs`` (arrays of the dtypes the program declares) and returns its outputs.

    ``observe(index, value)``, when given, sees every instruction's result as it is made
    (``liteexport verify`` compares them across engines to find where they diverge).

    Raises ``ExecutionError``: for inputs that do not match the program, attributed to the
    first instruction reading them; for a failing kernel, attributed to its instruction.
    Outputs never alias weights; an output that is an input is that same array.
    """
    if len(inputs) != len(plan.input_checks):
        raise input_error("INPUT_COUNT", method=plan.method, expected=len(plan.input_checks), got=len(inputs))
    for check, value in zip(plan.input_checks, inputs, strict=True):
        if not isinstance(value, np.ndarray) or (value.dtype is not check.dtype and value.dtype != check.dtype):
            raise _input_error(plan, check, value)
        shape = check.shape
        if shape is not None and value.shape != shape and (check.exact or not _fits(value.shape, shape)):
            raise _input_error(plan, check, value)
    if plan.dim_checks:
        check_dims(plan.dim_checks, plan.symbolic_dims, [getattr(x, "shape", ()) for x in inputs],
                   lambda index: plan.blame(plan.input_checks[index]))

    # a fresh copy of the slot list with every constant already in place
    slots: list[object] = plan.slot_template.copy()
    slots[: len(inputs)] = inputs
    # float errors (overflow in exp, division by zero) give inf/NaN silently, as in torch
    token = ignore_fp_errors()
    try:
        if plan.module_state is None:
            _steps(plan, slots, observe)
        else:  # the call's state writes are undone if it fails
            with plan.module_state.call():
                _steps(plan, slots, observe)
    finally:
        restore_fp_errors(token)
    # np.asarray: numpy returns 0-d results as scalars; np.array copies views of weights
    return [np.array(slots[slot]) if copy else np.asarray(slots[slot]) for slot, copy in plan.outputs]


def _steps(plan: MethodPlan, slots: list[object], observe: Callable[[int, object], None] | None) -> None:
    """Runs the steps under the call's ProgramLimits (see _checked_steps), or without a check when
    neither a deadline is set nor the budget is below what a run with these input shapes needed."""
    limits = PROGRAM_LIMITS.get()
    if plan.working_memory > limits.max_memory:
        # a budget that holds a short input but not the longest the program was compiled for fails
        # every call, not just the long ones: found in testing, not in the field
        raise limits.below_plan(plan.method, plan.working_memory, ", ".join(str(d) for d in plan.symbolic_dims))
    key = tuple([getattr(x, "shape", ()) for x in slots[: len(plan.input_checks)]])
    peak = plan.peaks.get(key)
    index = 0
    pool = plan.step_pool
    try:
        steps = pool.pop()
    except IndexError:  # another call is running this plan: use kernels with buffers of their own
        steps = plan.fresh_steps()
    try:
        if peak is not None and peak <= limits.max_memory and limits.deadline is None:
            for index, kernel, fetch, write in steps:  # noqa: B007 (index names the failing step)
                slots[write] = kernel(*fetch(slots))
                if observe is not None:
                    observe(index, slots[write])
        else:
            reached = 0
            for index, reached in _checked_steps(plan, steps, slots, observe, limits):  # noqa: B007
                pass
            if len(plan.peaks) < PEAKS_KEPT:
                plan.peaks[key] = reached
    except (RunLimitExceeded, InternalError):
        raise
    # The rule, as at the operator table's call sites (runtime_py/operators/registry.fail): a
    # kernel's complaint about the values it was given - a LiteExportError of its own, a ValueError
    # (shapes), an ArithmeticError, numpy's dtype refusals (errors.is_value_failure), running out
    # of memory - is the bundle's
    # (KERNEL_FAILED, exit 7). The plan checked every step's operands when the program was loaded
    # (their count and kinds), so anything else a kernel raises is a bug of ours: InternalError.
    except StatePositionError as exc:  # a cache position the inputs gave: the caller's (exit 6)
        instruction = plan.instructions[index]
        raise input_error("STATE_POSITION", debug_handle=instruction.debug_handle, instruction=plan.label(index),
                          position=exc.position, state=plan.state_names.get(instruction.inputs[0], "?"),
                          size=exc.size, axis=exc.axis) from None
    except Exception as exc:
        if not isinstance(exc, LiteExportError | MemoryError) and not is_value_failure(exc):
            raise InternalError(f"demo kernel of {plan.label(index)} failed: {type(exc).__name__}: {exc}") from exc
        reason = str(exc) or type(exc).__name__
        handle = plan.instructions[index].debug_handle
        unfit = _undeclared_input_reaching(plan, index)
        if unfit is not None:  # the first check of an input whose shape the program does not declare
            # (its slot may hold another value by now: ``key`` kept the inputs' shapes; dtypes were checked)
            got = f"{plan.input_checks[unfit].dtype} of shape {_format_shape(key[unfit])}"
            raise input_error("INPUT_UNFIT", debug_handle=handle, instruction=plan.label(index), index=unfit,
                              got=got, reason=reason) from exc
        raise execution_error("KERNEL_FAILED", debug_handle=handle, instruction=plan.label(index),
                              reason=reason) from exc
    finally:
        pool.append(steps)


def _checked_steps(plan: MethodPlan, steps: tuple[Step, ...], slots: list[object],
                   observe: Callable[[int, object], None] | None,
                   limits: ProgramLimits) -> Iterator[tuple[int, int]]:
    """Runs ``steps``, yielding (index of the step about to run, peak so far): before each one, what
    it may allocate (from its arguments' shapes) plus what is live must fit the memory budget, and
    the deadline must not have passed. ``live`` sums each slot's buffer (a view counts its whole
    base): never less than what the slots keep alive, and recounted exactly (each buffer once)
    before it is called too much."""
    max_memory, deadline, bounds = limits.max_memory, limits.deadline, plan.bounds
    live = live_bytes(slots)
    peak = live
    for index, kernel, fetch, write in steps:
        yield index, peak
        args = fetch(slots)
        need = bounds[index](args)
        if live + need > max_memory:
            live = live_bytes(slots)
            if live + need > max_memory:
                raise limits.out_of_memory(plan.label(index), need, live, plan.instructions[index].debug_handle)
        peak = max(peak, live + need)
        if deadline is not None:
            if time.monotonic() > deadline:
                raise limits.timed_out(plan.label(index), plan.instructions[index].debug_handle)
            result = _split_rows(kernel, args, limits, plan, index) if index in plan.row_split else kernel(*args)
        else:
            result = kernel(*args)
        live += owned_bytes(result) - owned_bytes(slots[write])
        slots[write] = result
        if observe is not None:
            observe(index, result)
    yield -1, peak


SPLIT_MACS = 1 << 26  # multiply-adds between two looks at the clock (tens of ms in numpy)


def _split_rows(kernel: Kernel, args: Sequence[object], limits: ProgramLimits, plan: MethodPlan, index: int) -> object:
    """A matrix product under a deadline, a block of its rows at a time with a look at the clock
    between blocks: an 8192x8192 product takes a minute in one piece. Rows of ``x @ w`` depend
    only on the same rows of x, so the blocks put together are the whole product."""
    x = args[0]
    if not isinstance(x, np.ndarray) or x.ndim < 2 or x.shape[-2] < 2 or \
            (isinstance(args[1], np.ndarray) and args[1].ndim < 2):
        return kernel(*args)
    macs = plan.bounds[index](args) // 4 * x.shape[-1]
    blocks = -(-macs // SPLIT_MACS)
    if blocks <= 1:
        return kernel(*args)
    step = max(1, -(-x.shape[-2] // blocks))
    parts = []
    for start in range(0, x.shape[-2], step):
        if limits.past_deadline():
            raise limits.timed_out(plan.label(index), plan.instructions[index].debug_handle)
        parts.append(kernel(x[..., start:start + step, :], *args[1:]))
    return np.concatenate(parts, axis=-2)


def _fits(shape: tuple[int, ...], expected: tuple[int, ...]) -> bool:
    """Whether ``shape`` matches ``expected``, where -1 matches any size."""
    return len(shape) == len(expected) and all(
        want in (-1, got) for want, got in zip(expected, shape, strict=True)
    )


def _input_error(plan: MethodPlan, check: InputCheck, value: object) -> InputError:
    expected = str(check.dtype) if check.shape is None else f"{check.dtype} of shape {_format_shape(check.shape)}"
    if isinstance(value, np.ndarray):
        got = f"{value.dtype} of shape {_format_shape(value.shape)}"
    else:
        got = f"{type(value).__name__} (not an ndarray)"
    blame, handle = plan.blame(check)
    return input_error("INPUT_MISMATCH", debug_handle=handle, instruction=blame, index=check.index,
                       expected=expected, got=got)


def _undeclared_input_reaching(plan: MethodPlan, index: int) -> int | None:
    """The one input whose shape the program does not declare (a bundle exported without
    --input-shape) that instruction ``index`` depends on, or None (none, or several: inputs that
    misfit each other are the call's failure, KERNEL_FAILED, as torch's lite interpreter says).
    Such a program cannot check its inputs before it runs (the native core and the torch backend
    decide the same way): every shape in it follows from those inputs' and the weights', so an
    instruction that fails on values reached from one of them alone is that input's check, and its
    failure the caller's (exit 6)."""
    undeclared = [check.index for check in plan.input_checks if check.shape is None]
    if not undeclared:
        return None
    # slot -> the undeclared inputs its current value depends on, in program order (slots are
    # reused: a write replaces what the slot depended on); input i is slot i
    reaches: dict[int, frozenset[int]] = {i: frozenset((i,)) for i in undeclared}
    for position, instruction in enumerate(plan.instructions[: index + 1]):
        depends = frozenset().union(*(reaches.get(slot, frozenset()) for slot in instruction.inputs))
        if position == index:
            # one input alone: its shape misfits; several meeting (x + h): the call's failure (as torch)
            return next(iter(depends)) if len(depends) == 1 else None
        for slot in instruction.outputs:
            reaches[slot] = depends
    return None


def _format_shape(shape: tuple[int, ...]) -> str:
    """``(1, 3, ?, ?)``: -1 (a size known only at run time) shows as ``?``."""
    sizes = ["?" if size == -1 else str(size) for size in shape]
    return f"({sizes[0]},)" if len(sizes) == 1 else f"({', '.join(sizes)})"
