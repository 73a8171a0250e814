"""Hand-crafted hostile bundles (each targets one load-time limit), built from the stored seeds.

``python tests/fuzz/crafted.py`` writes them to tests/fuzz/crashers/ (the regression corpus);
tests/runtime_py/test_load_limits.py checks each one's exact error and peak memory.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import harness  # noqa: E402
import numpy as np  # noqa: E402

from bundle_format import program as prog  # noqa: E402
from bundle_format import ptmf  # noqa: E402
from bundle_format.bundle_file import read_bundle_bytes  # noqa: E402
from bundle_format.program import Program  # noqa: E402
from bundle_format.program_codec import decode_program, encode_program  # noqa: E402
from bundle_format.ptmf import BytecodeOp as Op  # noqa: E402
from bundle_format.ptmf import Instruction
from bundle_format.ptmf_writer import encode_module  # noqa: E402

SETSTATE_FN = 7  # torch_stateful.ptmf: ivalue index of Holder.__setstate__


def _stateful() -> ptmf.Module:
    return read_bundle_bytes(harness.load_seeds()["torch_stateful.ptmf.bin"])


def _with_setstate(code: tuple[Instruction, ...], **changes: object) -> bytes:
    m = _stateful()
    fn = m.ivalues[SETSTATE_FN]
    assert isinstance(fn, ptmf.Function) and fn.qn.endswith("__setstate__")
    fn = replace(fn, instructions=code, debug_handles=None, **changes)  # type: ignore[arg-type]
    return encode_module(replace(m, ivalues=m.ivalues[:SETSTATE_FN] + (fn,) + m.ivalues[SETSTATE_FN + 1:]))


def setstate_jmp_loop() -> bytes:
    """__setstate__ = JMP to itself: must exceed the load-time instruction budget, not hang."""
    return _with_setstate((Instruction(Op.JMP, 0, 0),))


def setstate_recursion() -> bytes:
    """__setstate__ calls __setstate__ on its argument forever (INTERFACE_CALL): the call-depth limit."""
    m = _stateful()
    fn = m.ivalues[SETSTATE_FN]
    assert isinstance(fn, ptmf.Function)
    name = len(m.ivalues)  # a new string constant "__setstate__"
    code = (Instruction(Op.STOREN, 1, 2), Instruction(Op.LOAD, 1, 0), Instruction(Op.LOAD, 2, 0),
            Instruction(Op.INTERFACE_CALL, len(fn.constants), 2), Instruction(Op.RET, 0, 0))
    fn = replace(fn, instructions=code, debug_handles=None, constants=fn.constants + (name,), register_size=2)
    ivalues = m.ivalues[:SETSTATE_FN] + (fn,) + m.ivalues[SETSTATE_FN + 1:] + (ptmf.StringValue("__setstate__"),)
    return encode_module(replace(m, ivalues=ivalues))


def setstate_huge_list() -> bytes:
    """__setstate__ builds a list of 2**26 items from a small one (aten::mul.left_t, list * int)
    in a loop of doublings: the value-size cap stops it long before memory runs out."""
    m = _stateful()
    fn = m.ivalues[SETSTATE_FN]
    assert isinstance(fn, ptmf.Function)
    n = len(m.ivalues)
    consts = fn.constants + (n, n + 1)  # 2, [0]
    ops = (ptmf.Operator("aten::mul", "left_t", 2),)
    c2, clist = len(fn.constants), len(fn.constants) + 1
    body = [Instruction(Op.LOADC, clist, 0)]
    for _ in range(40):  # list = list * 2, forty times: 2**40 items if nothing stopped it
        body += [Instruction(Op.LOADC, c2, 0), Instruction(Op.OP, 0, 0)]
    body += [Instruction(Op.RET, 0, 0)]
    fn = replace(fn, instructions=tuple(body), debug_handles=None, constants=consts, operators=ops, register_size=0)
    ivalues = (m.ivalues[:SETSTATE_FN] + (fn,) + m.ivalues[SETSTATE_FN + 1:]
               + (ptmf.IntValue(2), ptmf.IntListValue((0,) * 64)))
    return encode_module(replace(m, ivalues=ivalues))


def _big_int_code(first_constant: int) -> tuple[tuple[Instruction, ...], tuple[ptmf.Operator, ...],
                                                 tuple[ptmf.IValue, ...]]:
    """Bytecode (after STOREN 1 2) whose ints would grow for ever as exact Python ints: 10 ** 2**40
    (pow.int_to_int), 1 << 2**40, then 3 squared forty times (aten::mul.int); returns the last. As
    int64, as torch computes them, each costs O(1). Constants are numbered from ``first_constant``."""
    ops = (ptmf.Operator("aten::pow", "int_to_int", 2), ptmf.Operator("aten::__lshift__", "int", 2),
           ptmf.Operator("aten::mul", "int", 2))
    c10, c2_40, c3, c1 = (first_constant + i for i in range(4))
    code = [Instruction(Op.STOREN, 1, 2),
            Instruction(Op.LOADC, c10, 0), Instruction(Op.LOADC, c2_40, 0), Instruction(Op.OP, 0, 0),
            Instruction(Op.DROP, 0, 0),
            Instruction(Op.LOADC, c1, 0), Instruction(Op.LOADC, c2_40, 0), Instruction(Op.OP, 1, 0),
            Instruction(Op.DROP, 0, 0), Instruction(Op.LOADC, c3, 0)]
    for _ in range(40):
        code += [Instruction(Op.STORE, 2, 0), Instruction(Op.LOAD, 2, 0), Instruction(Op.LOAD, 2, 0),
                 Instruction(Op.OP, 2, 0)]
    constants = (ptmf.IntValue(10), ptmf.IntValue(2 ** 40), ptmf.IntValue(3), ptmf.IntValue(1))
    return (*code, Instruction(Op.RET, 0, 0)), ops, constants


def _with_big_int_code(m: ptmf.Module, index: int) -> bytes:
    """``m`` with function ``index`` running _big_int_code, its constants appended to the ivalues."""
    fn = m.ivalues[index]
    assert isinstance(fn, ptmf.Function)
    n = len(m.ivalues)
    code, ops, constants = _big_int_code(0)
    fn = replace(fn, instructions=code, debug_handles=None, register_size=2, operators=ops,
                 constants=tuple(range(n, n + len(constants))), type_annotations=())
    return encode_module(replace(m, ivalues=m.ivalues[:index] + (fn,) + m.ivalues[index + 1:] + constants))


def setstate_big_int_arithmetic() -> bytes:
    """__setstate__ raises 10 to 2**40 and squares 3 forty times (once a hang inside CPython's C)."""
    return _with_big_int_code(_stateful(), SETSTATE_FN)


def forward_big_int_arithmetic() -> bytes:
    """The same in forward, which returns 3 squared forty times (as an int64)."""
    m = read_bundle_bytes(harness.load_seeds()["torch_linear.ptmf.bin"])
    return _with_big_int_code(m, next(i for i, v in enumerate(m.ivalues)
                                      if isinstance(v, ptmf.Function) and v.qn.endswith(".forward")))


def register_size_huge() -> bytes:
    """register_size 2**30: every call would allocate a 8 GiB register file (found by the corpus)."""
    return _with_setstate(_stateful().ivalues[SETSTATE_FN].instructions, register_size=2 ** 30)  # type: ignore[union-attr]


def deep_nested_lists() -> bytes:
    """A list in a list in ... 5000 deep: loading must not recurse (RecursionError)."""
    m = _stateful()
    base = len(m.ivalues)
    chain = tuple(ptmf.ListValue((base + i + 1,) if i < 4999 else (), "") for i in range(5000))
    root = m.ivalues[m.state_obj]
    assert isinstance(root, ptmf.ObjectValue)
    root = replace(root, attrs=root.attrs[:-1] + (base,))
    ivalues = m.ivalues[:m.state_obj] + (root,) + m.ivalues[m.state_obj + 1:] + chain
    return encode_module(replace(m, ivalues=ivalues))


def _with_root_attr(extra: tuple[ptmf.IValue, ...]) -> bytes:
    """The stateful seed with ``extra`` appended to its ivalues and the last one as the root's last attribute."""
    m = _stateful()
    root = m.ivalues[m.state_obj]
    assert isinstance(root, ptmf.ObjectValue)
    root = replace(root, attrs=root.attrs[:-1] + (len(m.ivalues) + len(extra) - 1,))
    return encode_module(replace(m, ivalues=m.ivalues[:m.state_obj] + (root,) + m.ivalues[m.state_obj + 1:] + extra))


def _shared_tuples(base: int, levels: int) -> tuple[ptmf.IValue, ...]:
    """Tuple k holds tuple k-1 twice (tuple 0 holds an int): walking the last takes 2**levels steps."""
    return (ptmf.IntValue(1), *(ptmf.TupleValue((base + k, base + k)) for k in range(levels)))


def shared_tuple_key() -> bytes:
    """A dict whose key is 60 levels of tuples, each holding the next twice (hashing it: 2**60 steps)."""
    base = len(_stateful().ivalues)
    chain = _shared_tuples(base, 60)
    return _with_root_attr((*chain, ptmf.DictValue((base + 60,), (base,), "")))


def shared_tuple_value() -> bytes:
    """The same 60 levels of shared tuples as a plain attribute (comparing or printing it: 2**60 steps)."""
    return _with_root_attr(_shared_tuples(len(_stateful().ivalues), 60))


def _with_forward(code: tuple[Instruction, ...], constants: tuple[ptmf.IValue, ...] = (),
                  types: tuple[str, ...] = ()) -> bytes:
    """The torch_linear seed whose forward runs ``code`` (constants[i] is constant i, types[i] type i)."""
    m = read_bundle_bytes(harness.load_seeds()["torch_linear.ptmf.bin"])
    index = next(i for i, v in enumerate(m.ivalues) if isinstance(v, ptmf.Function) and v.qn.endswith(".forward"))
    fn = m.ivalues[index]
    assert isinstance(fn, ptmf.Function)
    n = len(m.ivalues)
    fn = replace(fn, instructions=code, debug_handles=None, register_size=2,
                 constants=tuple(range(n, n + len(constants))), type_annotations=types)
    return encode_module(replace(m, ivalues=m.ivalues[:index] + (fn,) + m.ivalues[index + 1:] + constants))


def forward_jmp_self() -> bytes:
    """forward = JMP to itself: runs forever unless the call has an instruction budget or timeout."""
    return _with_forward((Instruction(Op.STOREN, 1, 2), Instruction(Op.JMP, 0, 0)))


def forward_loop_2_62() -> bytes:
    """forward = a LOOP of 2**62 iterations (trip count, max trip count, condition on the stack)."""
    return _with_forward((
        Instruction(Op.STOREN, 1, 2),
        Instruction(Op.LOADC, 0, 0), Instruction(Op.LOADC, 1, 0), Instruction(Op.LOADC, 2, 0),
        Instruction(Op.LOOP, 4, 2),  # exit: to the LOADC after the body
        Instruction(Op.DROP, 0, 0), Instruction(Op.LOADC, 2, 0), Instruction(Op.JMP, -3, 0),
        Instruction(Op.LOADC, 0, 0), Instruction(Op.RET, 0, 0),
    ), (ptmf.IntValue(0), ptmf.IntValue(2 ** 62), ptmf.BoolValue(True)))


def _shared_tuple_code(levels: int) -> tuple[Instruction, ...]:
    """Bytecode (after STOREN 1 2) that builds ``levels`` tuples each holding the previous one twice
    and uses the last as a dict key (DICT_CONSTRUCT hashes it: 2**levels steps), then returns it."""
    code = [Instruction(Op.STOREN, 1, 2), Instruction(Op.LOADC, 0, 0)]
    for _ in range(levels):
        code += [Instruction(Op.STORE, 2, 0), Instruction(Op.LOAD, 2, 0), Instruction(Op.LOAD, 2, 0),
                 Instruction(Op.TUPLE_CONSTRUCT, 2, 0)]
    return (*code, Instruction(Op.LOADC, 0, 0), Instruction(Op.DICT_CONSTRUCT, 0, 2),
            Instruction(Op.RET, 0, 0))


def forward_shared_tuple_key() -> bytes:
    """forward builds a 60-level shared tuple and hashes it as a dict key (in C: no timeout reaches it)."""
    return _with_forward(_shared_tuple_code(60), (ptmf.IntValue(1),), ("Dict[Any, int]",))


def setstate_shared_tuple_key() -> bytes:
    """The same in __setstate__, at load."""
    m = _stateful()
    fn = m.ivalues[SETSTATE_FN]
    assert isinstance(fn, ptmf.Function)
    n = len(m.ivalues)
    fn = replace(fn, instructions=_shared_tuple_code(60), debug_handles=None, register_size=2, constants=(n,),
                 type_annotations=("Dict[Any, int]",))
    ivalues = m.ivalues[:SETSTATE_FN] + (fn,) + m.ivalues[SETSTATE_FN + 1:] + (ptmf.IntValue(1),)
    return encode_module(replace(m, ivalues=ivalues))


def tensor_huge_sizes(sizes: tuple[int, ...], strides: tuple[int, ...]) -> Callable[[], bytes]:
    def build() -> bytes:
        m = _stateful()
        index = next(i for i, v in enumerate(m.ivalues) if isinstance(v, ptmf.TensorMetadata))
        t = m.ivalues[index]
        assert isinstance(t, ptmf.TensorMetadata)
        t = replace(t, sizes=sizes, strides=strides, storage_offset=0)
        return encode_module(replace(m, ivalues=m.ivalues[:index] + (t,) + m.ivalues[index + 1:]))
    build.__doc__ = f"a tensor of sizes {sizes}, strides {strides}"
    return build


def setstate_set_attr_huge_slot() -> bytes:
    """__setstate__ sets attribute slot 150M of its object: refused before the slots grow (1.2 GB)."""
    return _with_setstate((Instruction(Op.STOREN, 1, 2), Instruction(Op.LOAD, 1, 0),
                           Instruction(Op.LOAD, 2, 0), Instruction(Op.SET_ATTR, 150_000_000, 0),
                           Instruction(Op.LOAD, 2, 0), Instruction(Op.RET, 0, 0)), register_size=2)


def _with_program(change: Callable[[Program], Program]) -> bytes:
    """The lowered MLP seed with its compiled program (a uint8 tensor) replaced by ``change(program)``."""
    m = read_bundle_bytes(harness.load_seeds()["lowered_mlp.ptmf.bin"])
    index = next(i for i, v in enumerate(m.ivalues) if isinstance(v, ptmf.TensorMetadata) and v.scalar_type == 0)
    t = m.ivalues[index]
    assert isinstance(t, ptmf.TensorMetadata)
    encoded = encode_program(change(decode_program(m.storage_data[t.storage_location_index])))
    storage = list(m.storage_data)
    storage[t.storage_location_index] = np.frombuffer(encoded, dtype=np.uint8)
    t = replace(t, sizes=(len(encoded),))
    return encode_module(replace(m, ivalues=m.ivalues[:index] + (t,) + m.ivalues[index + 1:],
                                 storage_data=tuple(storage)))


def _program_from_one_element(tail: Callable[[int], tuple[prog.Instruction, ...]], output: int) -> bytes:
    """The lowered MLP seed whose program takes x[0:1, 0:1] of its (4, 20) input into slot 2, then
    runs ``tail(first debug handle)`` and returns slot ``output``."""
    def change(p: Program) -> Program:
        head = (prog.Instruction(prog.OpCode.SLICE, (0,), (1,), prog.SliceAttrs(0, 0, 1, 1), 0),
                prog.Instruction(prog.OpCode.SLICE, (1,), (2,), prog.SliceAttrs(1, 0, 1, 1), 1))
        return replace(p, num_slots=8, constants=(), instructions=head + tail(2), outputs=(output,),
                       output_debug_handles=(4,))
    return _with_program(change)


def program_matmul_8192() -> bytes:
    """A small bundle multiplying two 8192x8192 matrices expanded from one input element: about a
    minute of work in one kernel, which a --timeout must stop all the same."""
    return _program_from_one_element(lambda h: (
        prog.Instruction(prog.OpCode.EXPAND, (2,), (3,), prog.ShapeAttrs((8192, 8192)), h),
        prog.Instruction(prog.OpCode.MATMUL, (3, 3), (4,), None, h + 1)), 4)


def program_broadcast_16_gib() -> bytes:
    """A small bundle adding a (65536, 1) and a (1, 65536) array: a 16 GiB result, which the
    memory budget must refuse before it is allocated."""
    return _program_from_one_element(lambda h: (
        prog.Instruction(prog.OpCode.EXPAND, (2,), (3,), prog.ShapeAttrs((65536, 1)), h),
        prog.Instruction(prog.OpCode.EXPAND, (2,), (4,), prog.ShapeAttrs((1, 65536)), h + 1),
        prog.Instruction(prog.OpCode.ADD, (3, 4), (5,), prog.BinaryAttrs(), h + 2)), 5)


def program_num_slots_huge() -> bytes:
    """A compiled program declaring 150M slots and using slot 150M-1: loads and runs in the memory of
    the slots it uses (a list of num_slots entries was 1.2 GB)."""
    far = 150_000_000

    def spread(p: Program) -> Program:
        last = p.instructions[-1]
        moved = replace(last, outputs=(far - 1,))
        outputs = tuple(far - 1 if s == last.outputs[0] else s for s in p.outputs)
        return replace(p, num_slots=far, instructions=p.instructions[:-1] + (moved,), outputs=outputs)
    return _with_program(spread)


def _zip_with(record: str, payload: bytes) -> bytes:
    data = harness.load_seeds()["torch_linear.zip.bin"]
    members = [(info.filename, content if not info.filename.endswith("/" + record) else payload)
               for info, content in harness.zip_members(data)]
    return harness.rezip(members)


def zip_deep_tuple_key() -> bytes:
    """data.pkl: a dict whose key is a tuple nested 200000 deep (hashing it overflowed the C stack)."""
    return _zip_with("data.pkl", b"\x80\x02}N" + b"\x85" * 200000 + b"K\x01s.")


def zip_deep_lists() -> bytes:
    """data.pkl: lists nested 50000 deep (cheap for the unpickler, recursion for everything after)."""
    return _zip_with("data.pkl", b"\x80\x02" + b"]" * 50000 + b"a" * 49999 + b".")


def zip_shared_tuples() -> bytes:
    """data.pkl: 60 levels of tuples, each holding the previous one twice (memo BINPUT/BINGET), as
    the root object's attribute x: the pickle is 7 bytes a level, walking the value 2**60 steps."""
    levels = b"h\x00h\x00\x86q\x000" * 60  # memo[0] = (memo[0], memo[0]); pop it
    return _zip_with("data.pkl", b"\x80\x02c__torch__\nM\n)\x81K\x01q\x000" + levels + b"}X\x01\x00\x00\x00xh\x00sb.")


def zip_memo_huge_index() -> bytes:
    """data.pkl: LONG_BINPUT at index 2**31 - 1 (the C unpickler grows its memo array to fit)."""
    return _zip_with("data.pkl", b"\x80\x02Nr\xff\xff\xff\x7f.")


def zip_bomb() -> bytes:
    """A deflated bytecode.pkl that claims (and would expand to) 64 MiB."""
    import io
    import zipfile

    data = harness.load_seeds()["torch_linear.zip.bin"]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info, content in harness.zip_members(data):
            if info.filename.endswith("/bytecode.pkl"):
                content = pickle.dumps((8,) + (b"\0" * (64 << 20),), protocol=2)
                z.writestr(info.filename, content, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
            else:
                z.writestr(info.filename, content)
    return out.getvalue()


def _raw_zip(members: list[tuple[str, bytes, int, int, int]]) -> bytes:
    """A zip archive written field by field: (name, bytes as stored, method, CRC-32, declared size)
    per member, so that the declared size and CRC can lie."""
    import struct

    local, central = bytearray(), bytearray()
    for name, stored, method, crc, size in members:
        encoded = name.encode()
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, len(stored), size,
                               len(encoded), 0, 0, 0, 0, 0, len(local)) + encoded
        local += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, len(stored), size,
                             len(encoded), 0) + encoded + stored
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(local), 0)
    return bytes(local + central + end)


def zip_inflates_past_declared_size() -> bytes:
    """A deflated data.pkl that declares 40 bytes (with their CRC) but inflates to 64 MiB: the
    declared size passes the zip-bomb check, so inflating must stop at it."""
    import zlib

    payload = b"\x80\x02c__torch__\nM\n)\x81}b." + bytes(64 << 20)
    deflater = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    deflated = deflater.compress(payload) + deflater.flush()
    members = []
    for info, content in harness.zip_members(harness.load_seeds()["torch_linear.zip.bin"]):
        if info.filename.endswith("/data.pkl"):
            members.append((info.filename, deflated, 8, zlib.crc32(payload[:40]), 40))
        else:
            members.append((info.filename, content, 0, zlib.crc32(content), len(content)))
    return _raw_zip(members)


CRAFTED: dict[str, tuple[Callable[[], bytes], str]] = {
    # name -> (builder, a fragment of the FormatError's message)
    "setstate_jmp_loop.ptmf": (setstate_jmp_loop, "exceeded the instruction budget"),
    "setstate_recursion.ptmf": (setstate_recursion, "exceeded the call-depth limit"),
    "setstate_huge_list.ptmf": (setstate_huge_list, "load-time code built a value"),
    "register_size_huge.ptmf": (register_size_huge, "register_size 1073741824"),
    "deep_nested_lists_loads.ptmf": (deep_nested_lists, ""),
    "tensor_zero_elements_huge_dims.ptmf": (tensor_huge_sizes((0, 2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1),
                                                              (1, 1, 1, 1)), "describe more than"),
    "tensor_overflowing_sizes.ptmf": (tensor_huge_sizes((2 ** 31 - 1,) * 3, (0, 0, 0)), "describe more than"),
    "tensor_negative_size.ptmf": (tensor_huge_sizes((-1, 2), (2, 1)), "negative size"),
    "tensor_past_storage.ptmf": (tensor_huge_sizes((2, 2), (2 ** 31 - 1, 1)), "reaches element"),
    "zip_deep_tuple_key.zip": (zip_deep_tuple_key, "dict key of kind tuple"),
    "zip_deep_lists.zip": (zip_deep_lists, "nests containers more than"),
    "zip_memo_huge_index.zip": (zip_memo_huge_index, "root of data.pkl is not a model object"),
    "zip_bomb.zip": (zip_bomb, "zip bomb"),
    "shared_tuple_key.ptmf": (shared_tuple_key, "dict key of kind TupleValue"),
    "shared_tuple_value.ptmf": (shared_tuple_value, "container expands to more than"),
    "zip_shared_tuples.zip": (zip_shared_tuples, "container expands to more than"),
    "setstate_set_attr_huge_slot.ptmf": (setstate_set_attr_huge_slot, "objects hold at most 65536 attributes"),
    "program_num_slots_huge_loads.ptmf": (program_num_slots_huge, ""),
    "forward_jmp_self_loads.ptmf": (forward_jmp_self, ""),
    "forward_shared_tuple_key_loads.ptmf": (forward_shared_tuple_key, ""),
    "setstate_shared_tuple_key.ptmf": (setstate_shared_tuple_key, "load-time code built a value"),
    "forward_loop_2_62_loads.ptmf": (forward_loop_2_62, ""),
    "setstate_big_int_arithmetic_loads.ptmf": (setstate_big_int_arithmetic, ""),
    "forward_big_int_arithmetic_loads.ptmf": (forward_big_int_arithmetic, ""),
    "zip_inflates_past_declared_size.zip": (zip_inflates_past_declared_size, "inflates past its declared 40 bytes"),
}


def main() -> None:
    harness.CRASHERS.mkdir(exist_ok=True)
    for name, (build, _) in CRAFTED.items():
        data = build()
        (harness.CRASHERS / f"{name}.bin").write_bytes(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
