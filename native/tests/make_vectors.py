"""Test vectors for the native core: bundles exported by liteexport, inputs, and what runtime_py
computes or raises for them (outputs, error kinds, debug handles, messages), plus malformed bundles.

Usage: python native/tests/make_vectors.py OUT_DIR   (run from the repository root;
needs torch). Writes OUT_DIR/cases.txt, one case per line, paths relative to OUT_DIR:
  run <bundle> <method> <n_in> <in...> <n_out> <out...>   (an output "none": a None element of the tuple)
  error <bundle> <method> <kind> <handle> <message-file> <n_in> <in...>   (+ <stem>.code: code and fields)
  malformed <bundle> <strict>   (strict 1: runtime_py raises FormatError, the core must too;
                                 0: a random bit flip, the core must not crash)
Tensor files: float32 ones b"LXT1", uint32 ndim, int64 dims[ndim], float32 data (little endian),
<name>.bin; int64, int32 and bool ones numpy's .npy (np.save), <name>.npy.
"""

from __future__ import annotations

import dataclasses
import struct
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import runtime_py  # noqa: E402
from bundle_format import ptmf  # noqa: E402
from bundle_format.debug_table import DebugTable  # noqa: E402
from bundle_format.program import STATE_FORMAT_VERSION  # noqa: E402
from bundle_format.ptmf_writer import encode_module  # noqa: E402
from liteexport.bundle import pack, write_bundle  # noqa: E402
from liteexport.compiler import compile_module  # noqa: E402
from liteexport.lowered import CompiledModule, MethodSignature  # noqa: E402
from runtime_py.errors import ExecutionError, FormatError, InputError, LiteExportError  # noqa: E402
from tests.parity.op_cases import OP_CASES  # noqa: E402
from tests.parity.parity_models import CASES, NEEDS_STATIC_SHAPES  # noqa: E402
from tests.runtime_py.backends.demo_backend_helpers import one_op_program  # noqa: E402


def write_tensor(path: Path, array: np.ndarray) -> None:
    array = np.array(array, dtype=np.float32, order="C")  # ascontiguousarray would make a 0-d array 1-D
    path.write_bytes(b"LXT1" + struct.pack("<I", array.ndim) + struct.pack(f"<{array.ndim}q", *array.shape)
                     + array.tobytes())


class Writer:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.lines: list[str] = []

    def tensors(self, stem: str, arrays: list[np.ndarray | None]) -> list[str]:
        names = []
        for i, a in enumerate(arrays):
            typed = a is not None and a.dtype != np.float32
            names.append(f"{stem}{i}.npy" if typed else f"{stem}{i}.bin")
            if typed:
                np.save(self.out / names[-1], a)
            elif a is not None:
                write_tensor(self.out / names[-1], a)
        return names

    def run(self, bundle: str, method: str, inputs: list[np.ndarray], outputs: list[np.ndarray | None],
            stem: str) -> None:
        ins = self.tensors(f"{stem}.in", inputs)
        outs = [name if o is not None else "none"  # a None element of a returned tuple
                for name, o in zip(self.tensors(f"{stem}.out", outputs), outputs, strict=True)]
        self.lines.append(f"run {bundle} {method} {len(ins)} {' '.join(ins)} {len(outs)} {' '.join(outs)}")

    def error(self, bundle: str, method: str, inputs: list[np.ndarray], stem: str) -> None:
        try:
            runtime_py.load(self.out / bundle).run_method(method, *inputs)
        except (ExecutionError, InputError) as exc:
            kind = "Execution" if isinstance(exc, ExecutionError) else "Input"
            handle = getattr(exc, "debug_handle", -1)
            (self.out / f"{stem}.msg").write_text(exc.message.replace(str(self.out / bundle), bundle))
            # the structured form (schema/demo_errors.toml): the code, then one "name<TAB>value" per field
            fields = "".join(f"{name}\t{value}\n" for name, value in exc.fields.items())
            (self.out / f"{stem}.code").write_text(f"{exc.code}\n{fields}")
            ins = self.tensors(f"{stem}.in", inputs)
            self.lines.append(f"error {bundle} {method} {kind} {handle} {stem}.msg {len(ins)} {' '.join(ins)}")
            return
        # a dynamic-shape bundle may accept it (e.g. convolutions take any spatial size): no case

    def malformed(self, name: str, data: bytes, strict: bool) -> None:
        path = self.out / name
        path.write_bytes(data)
        try:
            module = runtime_py.load(path)
            module.forward(np.zeros((4, 20), np.float32))
            module.debug_table  # noqa: B018  runtime_py verifies the debug table when first read
            raised = False
        except FormatError:
            raised = True
        except LiteExportError:
            raised = False
        if strict and not raised:
            raise AssertionError(f"runtime_py accepted malformed bundle {name}")
        self.lines.append(f"malformed {name} {int(strict and raised)}")


def as_list(value: object) -> list[np.ndarray | None]:
    return [None if v is None else np.asarray(v) for v in value] if isinstance(value, tuple) else [np.asarray(value)]


def export_models(w: Writer) -> dict[str, object]:
    compiled_by_name = {}
    for name, (factory, shapes) in CASES.items():  # the typed ones (token_ops: int64/bool inside) too
        for static in (False, True):
            if not static and name in NEEDS_STATIC_SHAPES:
                continue
            tag = f"{name}_{'static' if static else 'dynamic'}"
            compiled = compile_module(torch.jit.script(factory().eval()), input_shapes=shapes if static else None)
            compiled_by_name[tag] = compiled
            bundle = f"{tag}.ptl"
            write_bundle(compiled, w.out / bundle)
            module = runtime_py.load(w.out / bundle)
            for method, input_shapes in shapes.items():
                for seed in range(2):
                    rng = np.random.default_rng(seed)
                    inputs = [(rng.standard_normal(s) * (1 + seed)).astype(np.float32) for s in input_shapes]
                    w.run(bundle, method, inputs, as_list(module.run_method(method, *inputs)), f"{tag}.{method}.{seed}")
            # wrong inputs: a bad last dimension, a bad rank, a wrong count, an unknown method
            method, input_shapes = next(iter(shapes.items()))
            good = [np.ones(s, np.float32) for s in input_shapes]
            bad_dim = [np.ones(s[:-1] + (s[-1] + 1,), np.float32) for s in input_shapes]
            w.error(bundle, method, bad_dim, f"{tag}.err_dim")
            w.error(bundle, method, [np.ones((2,) + s, np.float32) for s in input_shapes], f"{tag}.err_rank")
            w.error(bundle, method, good + good[:1], f"{tag}.err_count")
            w.error(bundle, "nope", good, f"{tag}.err_method")
    return compiled_by_name


def one_op_bundles(w: Writer) -> None:
    """A bundle per shared one-instruction case (tests/parity/op_cases.py), run on random inputs."""
    for name, (op, shapes, weights, attrs, _) in OP_CASES.items():
        program = one_op_program(op, attrs, shapes, len(weights))
        signature = MethodSignature("forward", tuple(f"x{i}" for i in range(len(shapes))), False, 1)
        bundle = f"op_{name}.ptl"
        write_bundle(CompiledModule("__torch__.m.M", (signature,), (program,), tuple(weights), DebugTable(())),
                     w.out / bundle)
        rng = np.random.default_rng(3)
        inputs = [(rng.standard_normal(s) * 3).astype(np.float32) for s in shapes]
        outputs = as_list(runtime_py.load(w.out / bundle).run_method("forward", *inputs))
        w.run(bundle, "forward", inputs, outputs, f"op_{name}")


def malformed_bundles(w: Writer, compiled: object) -> None:
    module = pack(compiled)
    data = encode_module(module)
    for cut in (0, 4, 7, 8, 64, len(data) // 3, len(data) // 2, len(data) - 1):
        w.malformed(f"bad_truncated_{cut}.ptl", data[:cut], cut < len(data) - 16)
    w.malformed("bad_identifier.ptl", data[:4] + b"XXXX" + data[8:], True)
    w.malformed("bad_zip.ptl", b"PK\x03\x04" + data[4:], True)
    w.malformed("bad_root_offset.ptl", struct.pack("<I", len(data) + 100) + data[4:], True)
    w.malformed("bad_root_offset2.ptl", struct.pack("<I", 0xFFFFFFF0) + data[4:], True)

    def variant(name: str, **changes: object) -> None:
        w.malformed(name, encode_module(dataclasses.replace(module, **changes)), True)

    variant("bad_version.ptl", bytecode_version=8)
    variant("bad_state_obj.ptl", state_obj=len(module.ivalues) + 5)
    variant("bad_state_not_object.ptl", state_obj=0)
    variant("bad_method_index.ptl", methods=module.methods + (9999,))
    variant("bad_method_not_function.ptl", methods=(0,))
    variant("bad_no_storage.ptl", storage_data=())

    def patched(name: str, index: int, value: ptmf.IValue) -> None:
        ivalues = list(module.ivalues)
        ivalues[index] = value
        variant(name, ivalues=tuple(ivalues))

    kinds = {type(v).__name__: i for i, v in enumerate(module.ivalues)}
    tensor_index = next(i for i, v in enumerate(module.ivalues)
                        if isinstance(v, ptmf.TensorMetadata) and v.scalar_type == int(ptmf.ScalarType.FLOAT))
    t = module.ivalues[tensor_index]
    patched("bad_tensor_extent.ptl", tensor_index, dataclasses.replace(t, sizes=(t.sizes[0] + 1,) + t.sizes[1:]))
    patched("bad_tensor_offset.ptl", tensor_index, dataclasses.replace(t, storage_offset=1 << 30))
    patched("bad_tensor_strides.ptl", tensor_index, dataclasses.replace(t, strides=t.strides[:-1]))
    patched("bad_tensor_storage.ptl", tensor_index, dataclasses.replace(t, storage_location_index=999))
    patched("bad_tensor_dtype.ptl", tensor_index, dataclasses.replace(t, scalar_type=42))
    list_index = kinds["ListValue"]
    patched("bad_list_cycle.ptl", list_index, ptmf.ListValue((list_index,), "List[Tensor]"))
    patched("bad_list_item.ptl", list_index, ptmf.ListValue((len(module.ivalues) + 1,), "List[Tensor]"))
    dict_index = kinds["DictValue"]
    d = module.ivalues[dict_index]
    patched("bad_dict_lengths.ptl", dict_index, dataclasses.replace(d, values=d.values[:-1] if d.values else (0,)))
    fn_index = module.methods[0]
    fn = module.ivalues[fn_index]
    bad_ins = (ptmf.Instruction(op=int(ptmf.BytecodeOp.LOADC), x=999, n=0),) + fn.instructions[1:]
    patched("bad_loadc.ptl", fn_index, dataclasses.replace(fn, instructions=bad_ins))
    bad_jump = (ptmf.Instruction(op=int(ptmf.BytecodeOp.JMP), x=100000, n=0),) + fn.instructions[1:]
    patched("bad_jump.ptl", fn_index, dataclasses.replace(fn, instructions=bad_jump))
    bad_reg = (ptmf.Instruction(op=int(ptmf.BytecodeOp.LOAD), x=fn.register_size + 1, n=0),) + fn.instructions[1:]
    patched("bad_register.ptl", fn_index, dataclasses.replace(fn, instructions=bad_reg))
    obj_index = module.state_obj
    patched("bad_object_type.ptl", obj_index, dataclasses.replace(module.ivalues[obj_index], type_index=77))
    w.malformed("bad_debug_table.ptl", encode_module(dataclasses.replace(
        module, extra_files=(ptmf.ExtraFile("liteexport/debug_table", b"\x00" * 12),))), True)

    # programs that decode but do not validate
    program = compiled.programs[0]
    first = program.instructions[0]
    bad_programs = {
        "bad_program_version.ptl": dataclasses.replace(program, format_version=STATE_FORMAT_VERSION + 1),
        "bad_program_slot.ptl": dataclasses.replace(program, instructions=(
            dataclasses.replace(first, inputs=(999,) + first.inputs[1:]),) + program.instructions[1:]),
        "bad_program_read_before_write.ptl": dataclasses.replace(program, instructions=(
            dataclasses.replace(first, inputs=(program.num_slots - 1,) + first.inputs[1:]),)
            + program.instructions[1:]),
        "bad_program_weight.ptl": dataclasses.replace(program, constants=(
            dataclasses.replace(program.constants[0], weight=999),) + program.constants[1:]),
        "bad_program_method.ptl": dataclasses.replace(program, method="other"),
    }
    for name, bad in bad_programs.items():
        w.malformed(name, encode_module(pack(dataclasses.replace(compiled, programs=(bad,) + compiled.programs[1:]))),
                    True)

    # random bit flips: the core must report errors or run, never crash
    rng = np.random.default_rng(1234)
    for k in range(150):
        flipped = bytearray(data)
        for _ in range(1 + k % 4):
            pos = int(rng.integers(0, len(flipped)))
            flipped[pos] ^= 1 << int(rng.integers(0, 8))
        w.malformed(f"flip_{k}.ptl", bytes(flipped), False)


def constant_outputs(w: Writer, compiled: CompiledModule) -> None:
    """A tuple with an int constant besides its tensors: runtime_py returns the int, the core
    (Tensors and None only) raises an Execution error naming the output."""
    (signature,) = compiled.methods
    with_int = dataclasses.replace(signature, constants=((signature.num_outputs, ptmf.IntValue(7)),))
    bundle = "int_output.ptl"
    write_bundle(dataclasses.replace(compiled, methods=(with_int,)), w.out / bundle)
    inputs = [np.ones(s, np.float32) for s in CASES["tuple_outputs"][1]["forward"]]
    assert runtime_py.load(w.out / bundle).forward(*inputs)[-1] == 7
    (w.out / "int_output.msg").write_text(f"forward output {signature.num_outputs} is of type int: the native "
                                          "runtime returns only Tensors, and None in a tuple")
    (w.out / "int_output.code").write_text("\n")
    ins = w.tensors("int_output.in", inputs)
    w.lines.append(f"error {bundle} forward Execution -1 int_output.msg {len(ins)} {' '.join(ins)}")


def typed_io(w: Writer) -> None:
    """tests/android/typed_io.py's TypedIO: int64 and bool inputs; float32, int64, int32 and
    bool outputs; int32 ids where int64 is declared (the input error saying expected vs got)."""
    from tests.android.typed_io import INPUTS, write_typed_io

    module = runtime_py.load(write_typed_io(w.out / "typed_io.ptl"))
    for seed, inputs in enumerate(INPUTS):
        w.run("typed_io.ptl", "forward", list(inputs), as_list(module.forward(*inputs)), f"typed_io.forward.{seed}")
    w.error("typed_io.ptl", "forward", [np.array([1, 2, 3], np.int32), np.ones(3, np.bool_)], "typed_io.err_dtype")


def state_bundles(out: Path) -> None:
    """Bundles with program state (issue 34) for test_state.cpp: RowCache and TwoCaches
    (tests/generation/stateful_models.py), RowCache's program as two methods sharing its state
    (forward and again), and the same with a state declared differently by its second method."""
    from liteexport.compiler.exported import compile_exported
    from tests.generation.stateful_models import RowCache, TwoCaches, export_stateful

    torch.manual_seed(0)
    row = compile_exported(export_stateful(RowCache(), 4))
    write_bundle(row, out / "state_row_cache.ptl")
    write_bundle(compile_exported(export_stateful(TwoCaches(), 2)), out / "state_two_caches.ptl")
    (signature,), (program,) = row.methods, row.programs
    again = dataclasses.replace(program, method="again")
    second = dataclasses.replace(signature, name="again")
    write_bundle(dataclasses.replace(row, methods=(signature, second), programs=(program, again)),
                 out / "state_two_methods.ptl")
    states = tuple(dataclasses.replace(s, shape=(1,)) if s.name == "calls" else s for s in again.states)
    mismatched = dataclasses.replace(again, states=states)
    write_bundle(dataclasses.replace(row, methods=(signature, second), programs=(program, mismatched)),
                 out / "state_mismatch.ptl")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    w = Writer(out)
    compiled = export_models(w)
    one_op_bundles(w)
    malformed_bundles(w, compiled["mlp_static"])
    constant_outputs(w, compiled["tuple_outputs_static"])
    typed_io(w)
    state_bundles(out)
    # user files stored with a bundle, for Module::extra_file (test_loading.cpp)
    write_bundle(compiled["mlp_static"], out / "extra_files.ptl",
                 extra_files={"labels.txt": "cat\ndog\néléphant\n".encode(), "config/empty.bin": b""})
    (out / "cases.txt").write_text("\n".join(w.lines) + "\n")
    print(f"wrote {len(w.lines)} cases to {out}")


if __name__ == "__main__":
    main()
