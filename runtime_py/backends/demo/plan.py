"""Checks a demo Program once and prepares it for fast execution.

Everything that does not depend on the input values happens here: opcode lookup, arity and
attribute checks, binding attributes into kernels, def-before-use analysis of the slots,
and deciding which outputs must be copied so callers never receive a view of a weight.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from bundle_format._generated.demo_traits import ROW_SPLIT_OPS
from bundle_format.attribute_rules import attribute_problem
from bundle_format.dtype_rules import DTypeProblem, result_dtype
from bundle_format.error_codes import format_error
from bundle_format.program import (
    DTYPE_NAMES,
    READABLE_PROGRAM_VERSIONS,
    READABLE_VERSIONS_TEXT,
    DType,
    Instruction,
    OpCode,
    Program,
    SymbolicDim,
)
from runtime_py.backends.demo.arrays import NUMPY_DTYPES, Array, Kernel
from runtime_py.backends.demo.dims import DimCheck, dim_checks
from runtime_py.backends.demo.kernels import KERNELS, BufferedKernelSpec, KernelSpec
from runtime_py.backends.demo.memory import Bound, output_bound
from runtime_py.backends.demo.state import ModuleState
from runtime_py.errors import FormatError

PEAKS_KEPT = 64

# (instruction index, kernel, fetch, slot written): unpacked directly by the executor loop;
# fetch(slots) gives the kernel's arguments (an itemgetter: ~0.3 us less per step than a list
# comprehension over the slots read)
Step = tuple[int, Kernel, Callable[[list[object]], Sequence[object]], int]


@dataclass(frozen=True)
class InputCheck:
    """What input ``index`` must look like, and whom to blame when it does not."""

    index: int
    shape: tuple[int, ...] | None  # None: any rank; -1 entries: any size
    exact: bool  # the shape has no -1, so a tuple comparison decides
    reader: int | None  # the first instruction reading the input; None: the method is to blame
    dtype: np.dtype[Any] = np.dtype(np.float32)  # the input's numpy dtype (ValueInfo.dtype)


@dataclass(frozen=True)
class MethodPlan:
    """A validated program, ready to run: the handle ``DemoBackend.compile`` returns."""

    method: str
    num_slots: int  # slots in use (the program's own numbers are renumbered densely)
    input_checks: tuple[InputCheck, ...]
    constants: tuple[tuple[int, Array], ...]  # (slot, read-only weight)
    steps: tuple[Step, ...]
    bounds: tuple[Bound, ...]  # per step: what it may allocate, from its arguments (the memory budget)
    row_split: frozenset[int]  # steps (matrix products) run a block of rows at a time under a deadline
    instructions: tuple[Instruction, ...]  # for error messages (labels are made only when needed)
    outputs: tuple[tuple[int, bool], ...]  # (slot, copy it because it may view a weight)
    slot_template: list[object] = dataclasses.field(default_factory=list)  # constants in place; copied per call
    # (step position, spec, attributes, input count): kernels that keep buffers between calls,
    # rebound for every extra step list a concurrent (or reentrant) call needs
    buffered: tuple[tuple[int, BufferedKernelSpec, object, int], ...] = ()
    # step lists not in use: a call takes one and gives it back, so a kernel's buffers are
    # never shared by two calls in flight
    step_pool: list[tuple[Step, ...]] = dataclasses.field(default_factory=list)
    # the named input dims (--dim S=1..128) and their bounds, checked on every call
    dim_checks: tuple[DimCheck, ...] = ()
    symbolic_dims: tuple[SymbolicDim, ...] = ()
    # input shapes -> the most a checked run with them held alive (live + bound, at its peak): every
    # shape in a program follows from its inputs', so a later call with the same shapes under a
    # budget at least this large needs no per-step checks (at most PEAKS_KEPT entries)
    peaks: dict[tuple[tuple[int, ...], ...], int] = dataclasses.field(default_factory=dict)
    # bytes of results the program was planned to hold at once at its named dims' upper bounds
    # (Program.working_memory; 0: not planned): a call's budget must hold it (executor._steps)
    working_memory: int = 0
    # the loaded module's state this program reads and writes (shared with its other methods'
    # plans), its arrays by (dense) slot, and each state slot's name by the program's slot number
    module_state: ModuleState | None = None
    states: tuple[tuple[int, Array], ...] = ()
    state_names: dict[int, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.slot_template:
            template: list[object] = [None] * self.num_slots
            for slot, weight in (*self.constants, *self.states):
                template[slot] = weight
            object.__setattr__(self, "slot_template", template)
        if not self.step_pool:
            self.step_pool.append(self.steps)

    def label(self, index: int) -> str:
        """How errors name instruction ``index``."""
        return instruction_label(index, self.instructions[index])

    def blame(self, check: InputCheck) -> tuple[str, int]:
        """(label, debug handle) of the instruction to blame for a bad input (-1: none reads it)."""
        if check.reader is None:
            return f"method '{self.method}'", -1
        return self.label(check.reader), self.instructions[check.reader].debug_handle

    def fresh_steps(self) -> tuple[Step, ...]:
        """A copy of ``steps`` whose buffered kernels have buffers of their own."""
        steps = list(self.steps)
        for position, spec, attrs, n_inputs in self.buffered:
            index, _, fetch, write = steps[position]
            steps[position] = (index, spec.factory(attrs, n_inputs, reuse_output=True), fetch, write)
        return tuple(steps)


def instruction_label(index: int, instruction: Instruction) -> str:
    """``instruction #7 LINEAR (slots [3, 4, 5] -> [6])``: how errors name an instruction."""
    try:
        name = OpCode(instruction.op).name
    except ValueError:
        name = f"opcode {int(instruction.op)}"
    return f"instruction #{index} {name} (slots {list(instruction.inputs)} -> {list(instruction.outputs)})"


def build_plan(program: Program, weights: Sequence[object], module_state: ModuleState | None = None) -> MethodPlan:
    """Validates ``program`` against ``weights`` and prepares its steps. ``module_state``: the
    loaded module's state, shared by its methods' plans (default: one of this plan's own).

    Raises ``FormatError`` naming the method, the instruction and what is wrong.
    """
    where = f"demo program of method '{program.method}'"
    if program.format_version not in READABLE_PROGRAM_VERSIONS:
        raise format_error("UNSUPPORTED_VERSION", where=where, found=program.format_version,
                           supported=READABLE_VERSIONS_TEXT)
    num_slots = program.num_slots
    if len(program.inputs) > num_slots:
        raise format_error("INPUTS_EXCEED_SLOTS", where=where, inputs=len(program.inputs), num_slots=num_slots)
    if program.slot_dtypes and len(program.slot_dtypes) != num_slots:
        raise format_error("SLOT_DTYPES_LENGTH", where=where, found=len(program.slot_dtypes), num_slots=num_slots)
    # decoded programs hold DTypes already; a Program built in Python may hold any number
    for value in (*program.slot_dtypes, *(info.dtype for info in program.inputs)):
        if value not in _KNOWN_DTYPES:
            raise format_error("UNKNOWN_ENUM", where=where, enum="DType", value=int(value))
    for index, info in enumerate(program.inputs):
        if info.dtype != program.slot_dtype(index):
            raise format_error("INPUT_DTYPE", where=where, index=index, dtype=DTYPE_NAMES[info.dtype],
                               expected=DTYPE_NAMES[program.slot_dtype(index)])
    named_dims = dim_checks(program, where)

    defined = set(range(len(program.inputs)))
    constants = _prepare_constants(program, weights, defined, where)
    state_slots: dict[int, Array] = {}
    if program.states:
        module_state = module_state if module_state is not None else ModuleState()
        state_slots = module_state.declare(program, weights)
    defined.update(state_slots)
    # a method output must not alias a weight (read-only, shared) or a state (changed by the next call)
    views_of_weights = {slot for slot, _ in constants} | set(state_slots)
    # The slot list holds one entry per slot the program uses, not per declared slot: num_slots
    # is a uint32 from the file (150M empty slots are 1.2 GB). Input i stays slot i; the other
    # slots are numbered densely in order of first use (messages keep the file's numbers), as in
    # the Android native core's plan.
    dense = {slot: slot for slot in range(len(program.inputs))}
    for slot in (*(slot for slot, _ in constants), *state_slots):
        dense[slot] = len(dense)

    steps: list[Step] = []
    # input slot -> index of the first instruction reading the input (None: rewritten unread)
    first_reader: dict[int, int | None] = {}
    producer: dict[int, int] = {}  # slot -> step that wrote its current value
    alias_of: dict[int, int] = {}  # step -> step whose result it may view
    bindings: list[tuple[KernelSpec, object]] = []
    bounds: list[Bound] = []
    for index, instruction in enumerate(program.instructions):
        spec = _lookup(instruction, where, index)
        kernel = _bind(spec, instruction, where, index)
        for slot in (*instruction.inputs, *instruction.outputs):
            if not 0 <= slot < num_slots:
                raise format_error("SLOT_RANGE", where=_at(where, index, instruction), slot=slot, num_slots=num_slots)
        for slot in instruction.inputs:
            if slot not in defined:
                raise format_error("READ_BEFORE_WRITE", where=_at(where, index, instruction), slot=slot)
            first_reader.setdefault(slot, index)
        (output,) = instruction.outputs
        _check_dtypes(program, instruction, _at(where, index, instruction))
        if spec.may_alias_input and instruction.inputs and instruction.inputs[0] in producer:
            alias_of[index] = producer[instruction.inputs[0]]
        producer[output] = index
        bindings.append((spec, instruction.attributes if instruction.attributes is not None else spec.default_attrs))
        bounds.append(output_bound(instruction.op, bindings[-1][1]))
        defined.add(output)
        first_reader.setdefault(output, None)  # later reads of a rewritten input slot see another value
        # a slot holds a view of a weight if a view-returning op read one (slots can be rewritten)
        if spec.may_alias_input and views_of_weights.intersection(instruction.inputs):
            views_of_weights.add(output)
        else:
            views_of_weights.discard(output)
        steps.append((index, kernel, _fetch([dense[slot] for slot in instruction.inputs]),
                      dense.setdefault(output, len(dense))))

    outputs = _prepare_outputs(program, defined, views_of_weights, where)
    outputs = tuple((dense[slot], copy) for slot, copy in outputs)
    # memory plan: a result that cannot reach a method output (directly or through views) is
    # written into a buffer its kernel keeps between calls
    escaping: set[int] = set()
    for slot in program.outputs:
        step = producer.get(slot)
        while step is not None and step not in escaping:
            escaping.add(step)
            step = alias_of.get(step)
    buffered: list[tuple[int, BufferedKernelSpec, object, int]] = []
    for index, (spec, attrs) in enumerate(bindings):
        if isinstance(spec, BufferedKernelSpec) and index not in escaping:
            n_inputs = len(program.instructions[index].inputs)
            buffered.append((index, spec, attrs, n_inputs))
            _, _, fetch, write = steps[index]
            steps[index] = (index, spec.factory(attrs, n_inputs, reuse_output=True), fetch, write)
    input_checks = tuple(
        InputCheck(index, None if info.shape is None else tuple(info.shape),
                   info.shape is not None and -1 not in info.shape, first_reader.get(index),
                   NUMPY_DTYPES[info.dtype])
        for index, info in enumerate(program.inputs)
    )
    return MethodPlan(
        method=program.method,
        num_slots=len(dense),
        input_checks=input_checks,
        dim_checks=named_dims,
        symbolic_dims=program.symbolic_dims,
        working_memory=program.working_memory,
        constants=tuple((dense[slot], weight) for slot, weight in constants),
        steps=tuple(steps),
        bounds=tuple(bounds),
        row_split=frozenset(i for i, ins in enumerate(program.instructions) if ins.op in ROW_SPLIT_OPS),
        instructions=tuple(program.instructions),
        outputs=outputs,
        buffered=tuple(buffered),
        module_state=module_state if state_slots else None,
        states=tuple((dense[slot], array) for slot, array in state_slots.items()),
        state_names={state.slot: state.name for state in program.states},
    )


_DTYPES_OF_NUMPY = {dtype: d for d, dtype in NUMPY_DTYPES.items()}
_KNOWN_DTYPES = frozenset(int(d) for d in DType)


def _check_dtypes(program: Program, instruction: Instruction, where: str) -> None:
    """The op spec's dtype rule on one instruction: its operands' slots hold dtypes it takes and
    its result has the dtype of the slot it writes (so every slot holds one dtype)."""
    op = OpCode(instruction.op)
    try:
        result = result_dtype(op, [program.slot_dtype(s) for s in instruction.inputs], instruction.attributes)
    except DTypeProblem as problem:
        raise format_error(problem.code, where=where, **problem.fields) from None
    (output,) = instruction.outputs
    if result != program.slot_dtype(output):
        raise format_error("RESULT_DTYPE", where=where, result=DTYPE_NAMES[result], slot=output,
                           expected=DTYPE_NAMES[program.slot_dtype(output)])


def _fetch(reads: Sequence[int]) -> Callable[[list[object]], Sequence[object]]:
    """The arguments of a kernel reading slots ``reads``, as a sequence (an itemgetter of one
    index would give the value itself, so one read is a slice)."""
    if len(reads) == 1:
        return itemgetter(slice(reads[0], reads[0] + 1))
    return itemgetter(*reads) if reads else lambda slots: ()


def _prepare_constants(
    program: Program, weights: Sequence[object], defined: set[int], where: str
) -> tuple[tuple[int, Array], ...]:
    constants: list[tuple[int, Array]] = []
    for constant in program.constants:
        what = {"slot": constant.slot, "weight": constant.weight}
        if not 0 <= constant.slot < program.num_slots:
            raise format_error("CONSTANT_SLOT_RANGE", where=where, **what, num_slots=program.num_slots)
        if constant.slot in defined:
            raise format_error("CONSTANT_SLOT_TAKEN", where=where, **what)
        if not 0 <= constant.weight < len(weights):
            raise format_error("WEIGHT_INDEX_RANGE", where=where, **what, weights=len(weights))
        weight = weights[constant.weight]
        if not isinstance(weight, np.ndarray) or weight.dtype not in _DTYPES_OF_NUMPY:
            got = weight.dtype if isinstance(weight, np.ndarray) else type(weight).__name__
            raise format_error("WEIGHT_TYPE", where=where, **what, got=got)
        if _DTYPES_OF_NUMPY[weight.dtype] != program.slot_dtype(constant.slot):
            raise format_error("WEIGHT_DTYPE", where=where, **what, got=weight.dtype,
                               expected=DTYPE_NAMES[program.slot_dtype(constant.slot)])
        # read-only: a kernel bug that writes into its input fails instead of corrupting a weight
        # (weights viewing a mapped bundle already are)
        frozen = weight
        if weight.flags.writeable:
            frozen = weight.view()
            frozen.flags.writeable = False
        constants.append((constant.slot, frozen))
        defined.add(constant.slot)
    return tuple(constants)


def _lookup(instruction: Instruction, where: str, index: int) -> KernelSpec:
    spec = KERNELS.get(instruction.op)  # decoded programs hold OpCodes already: no conversion
    if spec is not None:
        return spec
    try:
        op = OpCode(instruction.op)
    except ValueError:
        raise format_error("UNKNOWN_ENUM", where=f"{where}, instruction #{index}", enum="OpCode",
                           value=int(instruction.op)) from None
    return KERNELS[op]


def _at(where: str, index: int, instruction: Instruction) -> str:
    return f"{where}, {instruction_label(index, instruction)}"


def _bind(spec: KernelSpec, instruction: Instruction, method_where: str, index: int) -> Kernel:
    """Checks arity and attribute type, then binds the attributes into the kernel."""
    n_inputs = len(instruction.inputs)

    def fail(code: str, **fields: object) -> FormatError:  # the label is made only for an error
        return format_error(code, where=_at(method_where, index, instruction), **fields)

    if n_inputs < spec.min_inputs or (spec.max_inputs is not None and n_inputs > spec.max_inputs):
        if spec.max_inputs is None:
            expected = f"at least {_count(spec.min_inputs, 'input')}"
        elif spec.min_inputs == spec.max_inputs:
            expected = _count(spec.min_inputs, "input")
        else:
            expected = f"{spec.min_inputs} to {spec.max_inputs} inputs"
        raise fail("ARITY", expected=expected, got=n_inputs)
    if len(instruction.outputs) != 1:
        raise fail("OUTPUT_COUNT", got=len(instruction.outputs))
    attrs: object = instruction.attributes
    if attrs is None and spec.default_attrs is not None:
        attrs = spec.default_attrs
    if (attrs is not None or spec.attrs_type is not None) and (
            spec.attrs_type is None or not isinstance(attrs, spec.attrs_type)):
        expected = "no attributes" if spec.attrs_type is None else spec.attrs_type.__name__
        found = "none" if attrs is None else type(attrs).__name__
        raise fail("ATTRIBUTE_TYPE", op=OpCode(instruction.op).name, expected=expected, found=found)
    problem = attribute_problem(OpCode(instruction.op).name, attrs, n_inputs)  # schema/demo_ops.toml's rules
    if problem is not None:
        raise fail("INVALID_ATTRIBUTES", problem=problem)
    try:
        return spec.factory(attrs, n_inputs)
    except ValueError as exc:
        raise fail("INVALID_ATTRIBUTES", problem=exc) from None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _prepare_outputs(
    program: Program, defined: set[int], views_of_weights: set[int], where: str
) -> tuple[tuple[int, bool], ...]:
    if len(program.output_debug_handles) != len(program.outputs):
        raise format_error("OUTPUT_HANDLES", where=where, outputs=len(program.outputs),
                           handles=len(program.output_debug_handles))
    for position, slot in enumerate(program.outputs):
        if not 0 <= slot < program.num_slots:
            raise format_error("OUTPUT_SLOT_RANGE", where=where, position=position, slot=slot)
        if slot not in defined:
            raise format_error("OUTPUT_NEVER_WRITTEN", where=where, position=position, slot=slot)
    return tuple((slot, slot in views_of_weights) for slot in program.outputs)
