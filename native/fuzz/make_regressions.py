"""Hand-made regression bundles for the native core's run-time limits (see fuzz/README.md).

usage: make_regressions.py VECTORS_DIR OUT_DIR   (VECTORS_DIR: tests/make_vectors.py output)

Each bundle is mlp_static.ptl with one thing made hostile. Before the fixes each one crashed,
leaked, or exhausted memory in the native core; now each ends in liteexport::Error.
"""
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bundle_format import ptmf  # noqa: E402
from bundle_format.ptmf_reader import read_module  # noqa: E402
from bundle_format.ptmf_writer import encode_module  # noqa: E402

Op = ptmf.BytecodeOp


def ins(op: Op, x: int = 0, n: int = 0) -> ptmf.Instruction:
    return ptmf.Instruction(op=int(op), x=x, n=n)


def main() -> None:
    vectors, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    module = read_module((vectors / "mlp_static.ptl").read_bytes())
    fwd_index = module.methods[0]
    fwd = module.ivalues[fwd_index]

    def with_ivalue(index: int, value: object, **changes: object) -> ptmf.Module:
        ivalues = list(module.ivalues)
        ivalues[index] = value
        return dataclasses.replace(module, ivalues=tuple(ivalues), **changes)

    def forward(name: str, body: list[ptmf.Instruction], **changes: object) -> None:
        # forward(self, x): registers 1 = self, 2 = x; type 0 is 'List[Any]' (a plain Object here)
        code = (ins(Op.STOREN, 1, 2), *body)
        f = dataclasses.replace(fwd, instructions=code, debug_handles=None, **changes)
        (out / name).write_bytes(encode_module(with_ivalue(fwd_index, f)))

    # SET_ATTR with slot 2^31-1: the object's slots were resized to 2^31 values (OOM)
    forward("set_attr_huge_slot.ptl", [ins(Op.LOAD, 1), ins(Op.LOAD, 1), ins(Op.SET_ATTR, 2**31 - 1),
                                       ins(Op.LOAD, 2), ins(Op.RET)])
    # LOAD in a loop: the operand stack grew by 2^26 values (OOM) before the step limit
    forward("stack_growth_loop.ptl", [ins(Op.LOAD, 1), ins(Op.JMP, -1)])
    # TUPLE_CONSTRUCT 1 in a loop: tuples nested ~500k deep; releasing them recursed that deep
    forward("deep_tuple_loop.ptl", [ins(Op.LOAD, 1), ins(Op.TUPLE_CONSTRUCT, 1), ins(Op.JMP, -1)])
    # objects chained through SET_ATTR in a loop: the same recursion through Object slots
    forward("deep_object_chain.ptl", [
        ins(Op.CREATE_OBJECT, 0), ins(Op.STORE, 3),
        ins(Op.CREATE_OBJECT, 0), ins(Op.STORE, 4), ins(Op.LOAD, 4), ins(Op.MOVE, 3), ins(Op.SET_ATTR, 0),
        ins(Op.MOVE, 4), ins(Op.STORE, 3), ins(Op.JMP, -7)])
    # an object whose slot holds itself, dropped: a shared_ptr cycle (leak)
    forward("object_self_cycle.ptl", [
        ins(Op.CREATE_OBJECT, 0), ins(Op.STORE, 3), ins(Op.LOAD, 3), ins(Op.LOAD, 3), ins(Op.SET_ATTR, 0),
        ins(Op.DROPR, 3), ins(Op.LOADC, 0), ins(Op.RET)])
    # register_size 2^31-1: every call allocated 2^31 registers
    (out / "huge_register_size.ptl").write_bytes(encode_module(
        with_ivalue(fwd_index, dataclasses.replace(fwd, register_size=2**31 - 1))))
    # a float tensor with sizes [2^31-1, 2^31-1] and zero strides: passed the extent check,
    # its element count overflowed int64 and the loader gathered it into a copy
    t_index = next(i for i, v in enumerate(module.ivalues)
                   if isinstance(v, ptmf.TensorMetadata) and v.scalar_type == int(ptmf.ScalarType.FLOAT))
    t = module.ivalues[t_index]
    (out / "zero_stride_huge_tensor.ptl").write_bytes(encode_module(with_ivalue(
        t_index, dataclasses.replace(t, sizes=(2**31 - 1, 2**31 - 1), strides=(0, 0), storage_offset=0))))
    # 1100 nested lists used as a constant of forward: refused (nesting limit 1000)
    ivalues = list(module.ivalues)
    first = len(ivalues)
    ivalues.append(ptmf.ListValue((), "List[Any]"))
    for k in range(1100):
        ivalues.append(ptmf.ListValue((first + k,), "List[Any]"))
    ivalues[fwd_index] = dataclasses.replace(fwd, constants=fwd.constants + (len(ivalues) - 1,))
    (out / "deep_nested_lists.ptl").write_bytes(encode_module(dataclasses.replace(module, ivalues=tuple(ivalues))))
    (out / "program_empty_huge_dims.lxdp").write_bytes(empty_huge_dims_program())
    print(f"regression bundles written to {out}")


def empty_huge_dims_program() -> bytes:
    """Issue 18: a (0,) input RESHAPEd to (2^32, 2^32, 0), then the kernels that multiplied its
    dims (int64 overflow under UBSan), passed memcpy a null data pointer in 2^32 empty copies
    (SLICE), or built a tap table per output row before seeing that the output is empty
    (MAX_POOL2D of a (0, 1, 2^35, 1) input: 2^35 entries). Each now gives an empty result, as torch."""
    from bundle_format import program as pg
    from bundle_format.program_codec import encode_program

    big = 1 << 32
    steps = [("RESHAPE", (0,), (1,), pg.ShapeAttrs((big, big, 0))),
             ("SLICE", (1,), (2,), pg.SliceAttrs(0)),
             ("FLATTEN", (1,), (3,), pg.FlattenAttrs(1, 2)),
             ("MEAN", (1,), (4,), pg.ReduceAttrs((0, 1))),
             ("TRANSPOSE", (1,), (5,), pg.PermuteAttrs((2, 1, 0))),
             ("CAT", (1, 1), (6,), pg.AxisAttrs(2)),
             ("RESHAPE", (0,), (7,), pg.ShapeAttrs((0, 1, 8 * big, 1))),
             ("MAX_POOL2D", (7,), (8,), pg.Pool2dAttrs(kernel=(1, 1), stride=(1, 1)))]
    instructions = tuple(pg.Instruction(pg.OpCode[op], reads, writes, attrs, k)
                         for k, (op, reads, writes, attrs) in enumerate(steps))
    return encode_program(pg.Program("forward", 9, (pg.ValueInfo((0,)),), (), instructions,
                                     (2, 3, 4, 5, 6, 8), (1, 2, 3, 4, 5, 7)))


if __name__ == "__main__":
    main()
