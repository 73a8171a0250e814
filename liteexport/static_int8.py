"""``--quantize int8``: static post-training quantization of a compiled float program, as a pass
on the program (not through torch.ao).

1. Calibrate: run the float program in runtime_py on the calibration inputs and keep each value's
   min and max (per tensor).
2. Weights of CONV2D and LINEAR (and of MATMUL by a 2-d constant) become per-output-channel
   symmetric qint8 QuantizedTensors (zero point 0, -127..127: liteexport.weight_precision), read
   by nothing else; their engines widen them at load.
3. Activations become asymmetric int8 (qint8, -128..127 with a zero point: XNNPACK's qs8), per
   tensor, by FAKE_QUANTIZE steps whose grid comes from the observed range widened to hold 0 (as
   torch's MinMaxObserver makes one: scale = (max - min) / 255, zero point -128 - round(min / scale)).

The shape of the result is a contract with the native core's int8 kernels, which recognize it
(XNNPACKQuantizer's patterns); keep to it:

- a quantized CONV2D/LINEAR reads its input from a FAKE_QUANTIZE with an 8-bit range (one is
  inserted when the producer is anything else: the model's input, a float op, or a pool/flatten/
  reshape that kept its input's grid, which then gets that same grid);
- its weight is a symmetric int8 QuantizedTensor (per channel here; per tensor also accepted);
- its only reader, directly or through one RELU/CLAMP (fused ReLU, relu6) that is its only reader,
  is a FAKE_QUANTIZE whose range is observed after that activation;
- an ADD (alpha 1, two tensors) whose operands are both on a grid (a residual joining quantized
  branches) reads both from FAKE_QUANTIZE steps and is followed by one, directly or through its
  only reader RELU/CLAMP, like a conv;
- pools, flatten, reshape, relu and clamp keep their input's grid: no range of their own.

So conv -> relu -> conv becomes FQ, CONV2D(relu), FQ, CONV2D, FQ. What no rule reaches stays float.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from bundle_format._generated.demo_traits import INT8_KEEPS_GRID
from bundle_format.program import BinaryAttrs, DType, Instruction, OpCode, Program, QuantizeAttrs
from liteexport.held_out import Split
from liteexport.lowered import CompiledModule
from liteexport.slot_plan import plan_slots
from liteexport.weight_precision import int8_weights, weight_axes
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.backend import widened
from runtime_py.backends.demo.plan import build_plan
from runtime_py.errors import InputError, InternalError, LiteExportError

QMIN, QMAX = -128, 127
# The self-check's tolerance against the float model, as a fraction of the output's range (max -
# min over an input set). Each int8 grid rounds to within half a step, 1/510 of the range it
# observed; the steps of every layer add up through the network (measured on torchvision's
# resnet18 and mobilenet_v2 with random weights: see docs/reference.md), while a wrong program
# (a lost bias, a wrong zero point, a grid that clips) is off by a large part of the range.
TOLERANCE = 0.1
# torch's MinMaxObserver's smallest scale (float32 eps): a value that is always 0 still gets a grid
_MIN_SCALE = float(np.finfo(np.float32).eps)
_WEIGHTED = (OpCode.CONV2D, OpCode.LINEAR, OpCode.MATMUL)
_ACTIVATIONS = (OpCode.RELU, OpCode.CLAMP)

Inputs = Sequence[np.ndarray]
Key = Hashable  # a value: ("input", i), ("constant", slot), an instruction's index, or ("fq", n)


@dataclasses.dataclass(frozen=True)
class Grid:
    scale: float
    zero_point: int

    @classmethod
    def of_range(cls, low: float, high: float) -> Grid:
        """The asymmetric int8 grid of [low, high] widened to hold 0."""
        low, high = min(low, 0.0), max(high, 0.0)
        scale = float(np.float32(max((high - low) / (QMAX - QMIN), _MIN_SCALE)))
        return cls(scale, int(np.clip(QMIN - np.rint(low / scale), QMIN, QMAX)))

    def attrs(self) -> QuantizeAttrs:
        return QuantizeAttrs(scale=self.scale, zero_point=self.zero_point, quant_min=QMIN, quant_max=QMAX)


def quantize_int8(compiled: CompiledModule, calibration: Mapping[str, Split],
                  sources: Mapping[str, Sequence[str]] | None = None) -> tuple[CompiledModule, list[str]]:
    """``compiled`` quantized statically on ``calibration`` (method -> its calibration sets, split:
    the grids are observed on the ``fit`` ones, liteexport.held_out; ``sources`` names each set
    given, in order, for errors), and notes saying what was quantized. InputError (exit 6) when a
    calibration input set does not fit its method, held-out ones included."""
    def axis(op: OpCode, position: int, ndim: int) -> int | None:
        if position != 1 or ndim != {OpCode.CONV2D: 4, OpCode.LINEAR: 2, OpCode.MATMUL: 2}.get(op):
            return None
        return 1 if op == OpCode.MATMUL else 0  # MATMUL's constant is [in, out]

    axes = weight_axes(compiled, axis, ndims=(2, 4))
    quantized, count = int8_weights(compiled, axes)
    programs, notes = [], []
    for program in compiled.programs:
        split = calibration.get(program.method)
        if split is None:
            programs.append(program)
            notes.append(f"{program.method} has no calibration inputs: its activations stay float")
            continue
        given = split.fit if split.drawn else split.fit + split.held_out  # drawn sets fit: they are the set's shape
        ranges = observe_ranges(program, compiled, given, (sources or {}).get(program.method, ()), len(split.fit))
        int8_slots = {c.slot for c in program.constants if c.weight in axes}
        rewritten = insert_fake_quantize(program, ranges, int8_slots)
        fq = sum(ins.op == OpCode.FAKE_QUANTIZE for ins in rewritten.instructions)
        layers = sum(ins.op in _WEIGHTED and len(ins.inputs) > 1 and ins.inputs[1] in int8_slots
                     for ins in program.instructions)
        notes.append(f"{program.method}: {layers} conv/linear layers with int8 weights (per output channel, symmetric) "
                     f"and {fq} int8 activation grids (per tensor), observed on {split.fit_label}")
        programs.append(rewritten)
    notes.insert(0, f"{count} of {len(compiled.weights)} weights stored as int8")
    return dataclasses.replace(quantized, programs=tuple(programs)), notes


def observe_ranges(program: Program, compiled: CompiledModule, sets: Sequence[Inputs],
                   sources: Sequence[str] = (), observed: int | None = None) -> dict[Key, tuple[float, float]]:
    """The smallest and largest finite value of each input (``("input", i)``) and each
    instruction's result (its index) over the first ``observed`` of ``sets`` (default: all), run
    by runtime_py on the float program; the others are run only to check that they fit."""
    plan = build_plan(program, widened(compiled.weights))
    ranges: dict[Key, tuple[float, float]] = {}

    def see(key: Key, value: object) -> None:
        array = np.asarray(value)
        if array.dtype.kind != "f" or not array.size:
            return
        finite = array[np.isfinite(array)]
        if finite.size:
            low, high = float(finite.min()), float(finite.max())
            old = ranges.get(key, (low, high))
            ranges[key] = (min(old[0], low), max(old[1], high))

    for n, inputs in enumerate(sets):
        where = sources[n] if n < len(sources) else f"calibration input set {n}"
        observing = observed is None or n < observed
        for i, x in enumerate(inputs if observing else ()):
            see(("input", i), x)
        try:
            executor.run(plan, list(inputs), see if observing else None)
        except LiteExportError as exc:
            raise InputError(f"--calibration-inputs {where} does not fit {program.method}: {exc.message}") from exc
    return ranges


def program_values(program: Program) -> tuple[list[tuple[Key, ...]], list[Key]]:
    """Each instruction's operands and the program's outputs as values rather than slots (slots
    are reused: a value is the instruction that wrote it, an input or a constant)."""
    current: dict[int, Key] = {i: ("input", i) for i in range(len(program.inputs))}  # inputs: slots 0..n-1
    current.update({c.slot: ("constant", c.slot) for c in program.constants})
    reads: list[tuple[Key, ...]] = []
    for index, ins in enumerate(program.instructions):
        reads.append(tuple(current[slot] for slot in ins.inputs))
        if len(ins.outputs) != 1:
            raise InternalError(f"instruction #{index} of {program.method} writes {len(ins.outputs)} values")
        current[ins.outputs[0]] = index
    return reads, [current[slot] for slot in program.outputs]


def insert_fake_quantize(program: Program, ranges: Mapping[Key, tuple[float, float]],
                         int8_slots: set[int]) -> Program:
    """``program`` with FAKE_QUANTIZE steps placed as the module docstring's contract says;
    ``int8_slots``: the constants' slots whose weights are stored as int8."""
    reads, outputs = program_values(program)
    readers: dict[Key, list[int]] = {}
    for index, operands in enumerate(reads):
        for key in dict.fromkeys(operands):
            readers.setdefault(key, []).append(index)
    for key in outputs:
        readers.setdefault(key, []).append(-1)  # a program output: read by the caller

    def weighted(index: int) -> bool:
        ins = program.instructions[index]
        return ins.op in _WEIGHTED and len(ins.inputs) > 1 and ins.inputs[1] in int8_slots and \
            not _kind(reads[index][0], "constant")

    def tail(index: int) -> int:
        """Where a quantized result's grid goes: after its only reader when that is a RELU/CLAMP."""
        after = readers.get(index, [])
        if len(after) == 1 and after[0] >= 0 and program.instructions[after[0]].op in _ACTIVATIONS:
            return after[0]
        return index

    steps: list[tuple[OpCode, tuple[Key, ...], Key, object, int]] = []  # (op, reads, result, attrs, handle)
    grid: dict[Key, Grid] = {}
    rename: dict[Key, Key] = {}  # a value -> its FAKE_QUANTIZE'd self, which every later reader reads
    fq_of: dict[Key, Key] = {}  # a value -> the FAKE_QUANTIZE inserted in front of quantized readers
    pending: dict[int, int] = {}  # instruction whose result gets a grid after it -> the quantized op

    def fake_quantize(value: Key, on: Grid, handle: int) -> Key:
        key: Key = ("fq", len(steps))
        steps.append((OpCode.FAKE_QUANTIZE, (value,), key, on.attrs(), handle))
        grid[key] = on
        return key

    def from_fake_quantize(value: Key, original: Key, handle: int) -> Key:
        """``value`` as a quantized op reads it: a FAKE_QUANTIZE's result."""
        if _kind(value, "fq"):
            return value
        if value not in fq_of:
            low, high = ranges.get(original, (0.0, 0.0))
            fq_of[value] = fake_quantize(value, grid.get(value) or Grid.of_range(low, high), handle)
        return fq_of[value]

    for index, ins in enumerate(program.instructions):
        operands = tuple(rename.get(key, key) for key in reads[index])
        if weighted(index):
            operands = (from_fake_quantize(operands[0], reads[index][0], ins.debug_handle), *operands[1:])
            pending[tail(index)] = index
        elif ins.op == OpCode.ADD and len(operands) == 2 and _plain_add(ins) and all(o in grid for o in operands):
            operands = tuple(from_fake_quantize(o, o, ins.debug_handle) for o in operands)
            pending[tail(index)] = index
        steps.append((ins.op, operands, index, ins.attributes, ins.debug_handle))
        if ins.op in INT8_KEEPS_GRID and operands and operands[0] in grid:
            grid[index] = grid[operands[0]]
        if index in pending:
            low, high = ranges.get(index, (0.0, 0.0))
            rename[index] = fake_quantize(index, Grid.of_range(low, high), ins.debug_handle)
    return _program(program, steps, [rename.get(key, key) for key in outputs])


def _kind(key: Key, kind: str) -> bool:
    return isinstance(key, tuple) and key[0] == kind


def _plain_add(ins: Instruction) -> bool:
    attrs = ins.attributes
    return attrs is None or isinstance(attrs, BinaryAttrs) and attrs.alpha == 1.0 and not attrs.reverse


def _program(program: Program, steps: Sequence[tuple[OpCode, tuple[Key, ...], Key, object, int]],
             outputs: Sequence[Key]) -> Program:
    """The Program of ``steps`` (values), its slots planned again; inputs and constants keep theirs."""
    placed: dict[Key, int] = {("input", i): i for i in range(len(program.inputs))}
    placed.update({("constant", c.slot): c.slot for c in program.constants})
    slot_dtypes = [program.slot_dtype(slot) for slot in range(max(placed.values(), default=-1) + 1)]
    dtypes: dict[Key, DType] = {index: program.slot_dtype(ins.outputs[0])
                                for index, ins in enumerate(program.instructions)}
    planned = plan_slots(slot_dtypes, placed, [(operands, result, dtypes.get(result, DType.FLOAT32))
                                               for _, operands, result, _, _ in steps], outputs, program.method)
    instructions = tuple(Instruction(op, reads, (out,), attrs, handle)  # type: ignore[arg-type]
                         for (op, _, _, attrs, handle), (reads, out) in zip(steps, planned, strict=True))
    handle_of = {result: handle for _, _, result, _, handle in steps}
    return dataclasses.replace(
        program, num_slots=len(slot_dtypes), slot_dtypes=tuple(slot_dtypes), instructions=instructions,
        outputs=tuple(placed[key] for key in outputs),
        output_debug_handles=tuple(handle_of.get(key, old) for key, old in zip(outputs, program.output_debug_handles,
                                                                                strict=True)))

