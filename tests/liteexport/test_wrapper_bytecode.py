"""liteexport emits the lowered module's bytecode exactly as torch 2.13 does.

The reference bundles in tests/data/torch_reference/ were written by torch itself
(``_jit_to_backend`` + ``_save_for_lite_interpreter(_use_flatbuffer=True)``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from liteexport.bundle import pack
from liteexport.lowered import CompiledModule, MethodSignature
from runtime_py.format import ptmf
from runtime_py.format.bundle_file import read_bundle_file
from runtime_py.format.debug_table import DebugTable
from runtime_py.format.disassemble import disassemble_function
from runtime_py.format.program import Program, ValueInfo

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
