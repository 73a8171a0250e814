"""Structure-aware attacks (issue 13): reproducible hostile files of the kinds a red team found,
each varied by a seeded random generator. ``attack(i)`` is always the same file.

- ``pickle_build``: BUILD on a shared stand-in (a storage type, a torch helper, a class) slipped
  into a valid pickle of a zip model (must be refused, and poison nothing for later loads);
- ``pickle_shared_tuples``: tuples holding the previous one twice (memo), 20..80 levels, as an
  attribute, a list item or a dict key of data.pkl (hashing/comparing would take 2**depth);
- ``zip_declared_size``: a record whose declared size or CRC lies, deflated and padded to inflate
  to megabytes;
- ``program_slots``: the lowered seed's compiled program with num_slots up to 2**32-1 and its slots
  renumbered far apart (must load and give the seed's own outputs);
- ``setstate_code`` / ``forward_code``: load-time or run-time bytecode that loops forever (JMP to
  itself, LOOP of 2**62), sets a huge attribute slot, or builds shared tuples and hashes them;
- ``program_bomb`` (not in ATTACKS: it needs a run with a memory budget): a compiled program
  broadcasting, multiplying, pooling or concatenating one input element to gigabytes;
- ``shared_ivalues``: PTMF tuples holding the previous one twice, as a dict key, a value or a
  list item; dict keys that are long tuples.

Cross-load: ``tests/fuzz/test_structured_attacks.py`` loads a valid seed after each attack and
compares its outputs with those computed before any attack.
"""

from __future__ import annotations

import random
import sys
import zlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import crafted  # noqa: E402
import harness  # noqa: E402

from bundle_format import ptmf  # noqa: E402
from bundle_format.program import Program  # noqa: E402
from bundle_format.ptmf import BytecodeOp as Op  # noqa: E402
from bundle_format.ptmf import Instruction
from bundle_format.ptmf_writer import encode_module  # noqa: E402
from bundle_format.restricted_unpickler import STORAGE_TYPES  # noqa: E402

ZIP_SEEDS = ("torch_linear.zip.bin", "torch_stateful.zip.bin", "torch_linear_debug.zip.bin")
_STAND_INS = [("torch", name) for name in STORAGE_TYPES] + [
    ("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_tensor"), ("collections", "OrderedDict"),
    ("torch.jit._pickle", "build_intlist"), ("torch", "device"), ("builtins", "complex"), ("__torch__", "M")]
_ATTRIBUTES = ("scalar_type", "__defaults__", "__kwdefaults__", "fn", "name", "type_name", "__code__", "__class__")


def _pickle_string(text: str) -> bytes:
    encoded = text.encode()
    return b"X" + len(encoded).to_bytes(4, "little") + encoded


def _pickle_value(rng: random.Random) -> bytes:
    return rng.choice([b"N", b"K\x05", b"J\xff\xff\xff\x7f", _pickle_string("float16"), b"\x89", b")"])


def _zip_with_pickle(rng: random.Random, change: Callable[[bytes, random.Random], bytes]) -> bytes:
    data = harness.load_seeds()[rng.choice(ZIP_SEEDS)]
    members = harness.zip_members(data)
    pickles = [i for i, (info, _) in enumerate(members) if info.filename.endswith(".pkl")]
    target = rng.choice(pickles)
    return harness.rezip([(info.filename, change(content, rng) if i == target else content)
                          for i, (info, content) in enumerate(members)])


def pickle_build(rng: random.Random) -> bytes:
    """GLOBAL <stand-in>, a state (dict, or (dict, slot dict)), BUILD, POP: inserted at an opcode
    boundary of a valid pickle, so the rest of it loads as before."""
    def change(payload: bytes, rng: random.Random) -> bytes:
        module, name = rng.choice(_STAND_INS)
        state = b"}" + _pickle_string(rng.choice(_ATTRIBUTES)) + _pickle_value(rng) + b"s"
        if rng.random() < 0.5:
            state = b"N" + state + b"\x86"  # (None, {attr: value}): setattr on the stand-in
        attack = f"c{module}\n{name}\n".encode() + (b")\x81" if module == "__torch__" and rng.random() < 0.3
                                                      else b"") + state + b"b0"
        boundaries = [pos for pos, _, _ in harness.pickle_ops(payload)][1:] or [len(payload)]
        at = rng.choice(boundaries)
        return payload[:at] + attack + payload[at:]
    return _zip_with_pickle(rng, change)


def pickle_shared_tuples(rng: random.Random) -> bytes:
    """data.pkl: the model object with attribute x holding 20..80 levels of shared tuples (as the
    value, in a list, or as a dict key)."""
    depth = rng.randint(20, 80)
    levels = b"h\x00h\x00\x86q\x000" * depth  # memo[0] = (memo[0], memo[0]); pop
    where = rng.choice([b"h\x00", b"]h\x00a", b"}h\x00K\x01s", b"}K\x01h\x00s"])
    payload = b"\x80\x02c__torch__\nM\n)\x81K\x01q\x000" + levels + b"}X\x01\x00\x00\x00x" + where + b"sb."
    return crafted._zip_with("data.pkl", payload)


def zip_declared_size(rng: random.Random) -> bytes:
    """One record deflated, padded with zeros (up to 4 MiB) and declared with a lying size and/or CRC."""
    data = harness.load_seeds()[rng.choice(ZIP_SEEDS)]
    members = harness.zip_members(data)
    target = rng.randrange(len(members))
    out = []
    for i, (info, content) in enumerate(members):
        if i != target:
            out.append((info.filename, content, 0, zlib.crc32(content), len(content)))
            continue
        real = content + bytes(rng.choice([0, 1 << 10, 1 << 20, 4 << 20]))
        deflater = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        deflated = deflater.compress(real) + deflater.flush()
        declared = rng.choice([0, 1, 40, len(content), len(real) - 1, len(real), len(real) + 1, 2 * len(real)])
        crc = zlib.crc32(real[:declared]) if rng.random() < 0.8 else rng.getrandbits(32)
        out.append((info.filename, deflated, 8, crc, declared))
    return crafted._raw_zip(out)


def program_slots(rng: random.Random) -> bytes:
    """The lowered MLP's program with num_slots huge and every non-input slot moved far apart."""
    num_slots = rng.choice([2 ** 32 - 1, 2 ** 31 - 1, 150_000_000, rng.randrange(1000, 2 ** 32)])

    def spread(p: Program) -> Program:
        used = sorted({s for i in p.instructions for s in (*i.inputs, *i.outputs)}
                      | {c.slot for c in p.constants} | set(p.outputs))
        movable = [s for s in used if s >= len(p.inputs)]
        far = rng.sample(range(len(p.inputs), num_slots), len(movable))
        moved = dict(zip(movable, far, strict=True)) | {s: s for s in range(len(p.inputs))}
        return replace(p, num_slots=num_slots,
                       constants=tuple(replace(c, slot=moved[c.slot]) for c in p.constants),
                       instructions=tuple(replace(i, inputs=tuple(moved[s] for s in i.inputs),
                                                  outputs=tuple(moved[s] for s in i.outputs))
                                          for i in p.instructions),
                       outputs=tuple(moved[s] for s in p.outputs))
    return crafted._with_program(spread)


Code = tuple[tuple[Instruction, ...], tuple[ptmf.IValue, ...], tuple[str, ...]]  # instructions, constants, types


def _endless_code(rng: random.Random) -> Code:
    kind = rng.randrange(4)
    if kind == 3:  # a tuple holding the previous one twice, 30..70 levels, hashed as a dict key
        return crafted._shared_tuple_code(rng.randint(30, 70)), (ptmf.IntValue(1),), ("Dict[Any, int]",)
    if kind == 0:  # JMP to itself, maybe after a few harmless instructions
        return (Instruction(Op.STOREN, 1, 2),) + (Instruction(Op.LOAD, 1, 0), Instruction(Op.DROP, 0, 0)) \
            * rng.randrange(3) + (Instruction(Op.JMP, 0, 0),), (), ()
    if kind == 1:  # a LOOP of 2**62 (or 2**31) iterations
        count = rng.choice([2 ** 62, 2 ** 31, 2 ** 63 - 1])
        return (Instruction(Op.STOREN, 1, 2), Instruction(Op.LOADC, 0, 0), Instruction(Op.LOADC, 1, 0),
                Instruction(Op.LOADC, 2, 0), Instruction(Op.LOOP, 4, 2), Instruction(Op.DROP, 0, 0),
                Instruction(Op.LOADC, 2, 0), Instruction(Op.JMP, -3, 0), Instruction(Op.LOADC, 0, 0),
                Instruction(Op.RET, 0, 0)), (ptmf.IntValue(0), ptmf.IntValue(count), ptmf.BoolValue(True)), ()
    slot = rng.choice([65536, 70000, 2 ** 31 - 1, 150_000_000])  # SET_ATTR of a huge slot on self
    return (Instruction(Op.STOREN, 1, 2), Instruction(Op.LOAD, 1, 0), Instruction(Op.LOAD, 2, 0),
            Instruction(Op.SET_ATTR, slot, 0), Instruction(Op.LOAD, 2, 0),
            Instruction(Op.RET, 0, 0)), (), ()


def setstate_code(rng: random.Random) -> bytes:
    """Load-time code (Holder.__setstate__) that never ends or grows an object huge."""
    code, constants, types = _endless_code(rng)
    m = crafted._stateful()
    fn = m.ivalues[crafted.SETSTATE_FN]
    assert isinstance(fn, ptmf.Function)
    n = len(m.ivalues)
    fn = replace(fn, instructions=code, debug_handles=None, register_size=2,
                 constants=tuple(range(n, n + len(constants))), type_annotations=types)
    ivalues = m.ivalues[:crafted.SETSTATE_FN] + (fn,) + m.ivalues[crafted.SETSTATE_FN + 1:] + constants
    return encode_module(replace(m, ivalues=ivalues))


def forward_code(rng: random.Random) -> bytes:
    """Run-time code (forward) that never ends or grows an object huge."""
    return crafted._with_forward(*_endless_code(rng))


def shared_ivalues(rng: random.Random) -> bytes:
    """PTMF: 20..70 levels of shared tuples as a dict key, a value or a list item; or a long tuple key."""
    base = len(crafted._stateful().ivalues)
    if rng.random() < 0.25:  # a flat tuple key longer than MAX_KEY_TUPLE
        length = rng.choice([17, 100, 5000])
        return crafted._with_root_attr((ptmf.IntValue(1), ptmf.TupleValue((base,) * length),
                                        ptmf.DictValue((base + 1,), (base,), "")))
    depth = rng.randint(20, 70)
    chain = crafted._shared_tuples(base, depth)
    top = base + depth
    holder = rng.choice([(ptmf.DictValue((top,), (base,), ""),), (ptmf.ListValue((top, base), ""),),
                         (ptmf.DictValue((base,), (top,), ""),), ()])
    return crafted._with_root_attr((*chain, *holder))


def program_bomb(rng: random.Random) -> bytes:
    """A compiled program that makes a huge value from one input element (issue 18): a broadcast
    of (a, 1) with (1, b), an outer product, an adaptive pool to a huge size, or a cat of many
    copies. Run under a memory budget it must stop before allocating past it."""
    from bundle_format import program as prog

    big = rng.choice([1 << 15, 1 << 16, 3 << 14])
    kind = rng.randrange(4)

    def tail(h: int) -> tuple[prog.Instruction, ...]:
        column = prog.Instruction(prog.OpCode.EXPAND, (2,), (3,), prog.ShapeAttrs((big, 1)), h)
        row = prog.Instruction(prog.OpCode.EXPAND, (2,), (4,), prog.ShapeAttrs((1, big)), h + 1)
        if kind == 0:
            op = rng.choice([prog.OpCode.ADD, prog.OpCode.MUL, prog.OpCode.SUB, prog.OpCode.DIV, prog.OpCode.POW])
            return column, row, prog.Instruction(op, (3, 4), (5,), prog.BinaryAttrs(), h + 2)
        if kind == 1:
            return column, row, prog.Instruction(prog.OpCode.MATMUL, (3, 4), (5,), None, h + 2)
        if kind == 2:
            cube = prog.Instruction(prog.OpCode.EXPAND, (2,), (3,), prog.ShapeAttrs((1, 1, 1, 1)), h)
            return cube, row, prog.Instruction(prog.OpCode.ADAPTIVE_AVG_POOL2D, (3,), (5,),
                                               prog.ShapeAttrs((big, big)), h + 2)
        copies = rng.randint(1000, 3000)  # of a (big, 1) column of at least 128 KiB
        return column, row, prog.Instruction(prog.OpCode.CAT, (3,) * copies, (5,), prog.AxisAttrs(0), h + 2)

    return crafted._program_from_one_element(tail, 5)


ATTACKS: dict[str, tuple[Callable[[random.Random], bytes], str]] = {  # name -> (builder, kind)
    "pickle_build": (pickle_build, "zip"),
    "pickle_shared_tuples": (pickle_shared_tuples, "zip"),
    "zip_declared_size": (zip_declared_size, "zip"),
    "program_slots": (program_slots, "ptmf"),
    "setstate_code": (setstate_code, "ptmf"),
    "forward_code": (forward_code, "ptmf"),
    "shared_ivalues": (shared_ivalues, "ptmf"),
}


def attack(name: str, i: int) -> bytes:
    """Attack ``i`` of kind ``name``: always the same bytes."""
    return ATTACKS[name][0](random.Random(f"{name}/{i}"))
