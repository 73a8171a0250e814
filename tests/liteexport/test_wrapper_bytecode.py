"""liteexport emits the lowered module's bytecode exactly as torch 2.13 does.

The reference bundles in tests/data/torch_reference/ were written by torch itself
(``_jit_to_backend`` + ``_save_for_lite_interpreter(_use_flatbuffer=True)``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_file
from bundle_format.debug_table import DebugTable
from bundle_format.disassemble import disassemble_function
from bundle_format.program import Program, ValueInfo
from liteexport.bundle import pack
from liteexport.lowered import CompiledModule, MethodSignature

REFERENCE = Path(__file__).parent.parent / "data" / "torch_reference"


def _functions(module: ptmf.Module) -> dict[str, str]:
    """Listing of every method function, keyed by qualified name, debug handles left out."""
    out = {}
    for index in module.methods:
        fn = module.ivalues[index]
        assert isinstance(fn, ptmf.Function)
        out[fn.qn] = disassemble_function(fn, module)
    return out


def _compiled(qualname: str, sig: MethodSignature) -> CompiledModule:
    program = Program(method=sig.name, num_slots=len(sig.arg_names), inputs=(ValueInfo(None),) * len(sig.arg_names),
                      constants=(), instructions=(), outputs=(0,) * sig.num_outputs,
                      output_debug_handles=(-1,) * sig.num_outputs)
    return CompiledModule(qualname, (sig,), (program,), (), DebugTable(()))


@pytest.mark.parametrize("reference, qualname, sig", [
    ("two_in_two_out.ptl", "__torch__._model.M", MethodSignature("forward", ("x", "h"), True, 2)),
    ("one_in_one_out.ptl", "__torch__._model.M1", MethodSignature("forward", ("x",), False, 1)),
])
def test_functions_match_torch(reference: str, qualname: str, sig: MethodSignature) -> None:
    torch_module = read_bundle_file(REFERENCE / reference)
    ours = pack(_compiled(qualname, sig))
    assert _functions(ours) == _functions(torch_module)


@pytest.mark.parametrize("reference", ["two_in_two_out.ptl", "one_in_one_out.ptl"])
def test_object_layout_matches_torch(reference: str) -> None:
    torch_module = read_bundle_file(REFERENCE / reference)
    qualname = torch_module.object_types[0].type_name.split("backend_with_compiler_demo.")[1]
    sig = MethodSignature("forward", ("x",), False, 1)
    ours = pack(_compiled(qualname, sig))
    assert ours.object_types == torch_module.object_types
    assert ours.bytecode_version == torch_module.bytecode_version == 9
    for module in (ours, torch_module):
        root = module.ivalues[module.state_obj]
        assert isinstance(root, ptmf.ObjectValue) and root.type_index == 0
        lowered = module.ivalues[root.attrs[0]]
        assert isinstance(lowered, ptmf.ObjectValue)
        state = module.ivalues[lowered.state]
        assert isinstance(state, ptmf.TupleValue) and len(state.items) == 3
        assert module.ivalues[state.items[2]] == ptmf.BoolValue(True)
        setstate = module.ivalues[lowered.setstate_func]
        assert isinstance(setstate, ptmf.Function) and setstate.qn.endswith(".__setstate__")


def test_tuple_with_none_is_built_as_torch_builds_it() -> None:
    """``(x + 1.0, None)``: torch's execute returns the None too (LIST_UNPACK 2) and the wrapper
    checks ``isinstance(_1, NoneType)``; ours gets the tensor only (the compiled program returns
    no None) and skips that check. Everything else is torch's: the schema, the type check of the
    tensor and the tuple built with ``LOADC None``."""
    torch_module = read_bundle_file(REFERENCE / "tensor_and_none.ptl")
    sig = MethodSignature("forward", ("x",), True, 1, ((1, ptmf.NoneValue()),))
    ours = pack(_compiled("__torch__._model.M", sig))
    theirs_fn, ours_fn = (next(f for i in m.methods if isinstance(f := m.ivalues[i], ptmf.Function)
                               and f.qn.endswith(".forward")) for m in (torch_module, ours))
    assert ours_fn.schema == theirs_fn.schema and sig.return_type == "Tuple[Tensor, NoneType]"
    ops = {name: [(ptmf.BytecodeOp(i.op).name, i.x, i.n) for i in f.instructions]
           for name, f in (("torch", theirs_fn), ("ours", ours_fn))}
    unpack = {name: next(ins for ins in code if ins[0] == "LIST_UNPACK") for name, code in ops.items()}
    assert unpack == {"torch": ("LIST_UNPACK", 2, 0), "ours": ("LIST_UNPACK", 1, 0)}
    none_check = [("ISINSTANCE", 2, 1), ("JF", 2, 0), ("JMP", 4, 0)]  # isinstance(_1, NoneType) else raise
    assert any(ops["torch"][i:i + 3] == none_check for i in range(len(ops["torch"])))
    assert not any(ins[0] == "ISINSTANCE" and ins[1] == 2 for ins in ops["ours"])
    build = {name: code[code.index(("TUPLE_CONSTRUCT", 2, 0)) - 2:][:3] for name, code in ops.items()}
    assert build["ours"][1:] == build["torch"][1:] == [("LOADC", 2, 0), ("TUPLE_CONSTRUCT", 2, 0)]
    assert [ours.ivalues[ours_fn.constants[2]], torch_module.ivalues[theirs_fn.constants[2]]] == [ptmf.NoneValue()] * 2
    others = {qn: text for qn, text in _functions(ours).items() if not qn.endswith(".forward")}
    assert others == {qn: text for qn, text in _functions(torch_module).items() if not qn.endswith(".forward")}
