"""Export test bundles and compute runtime_py's answers on them, for the Java host tests.

    python android_sample/scripts/make_host_test_vectors.py OUT_DIR [--bundle extra.ptl:forward:2x5 ...]

Writes OUT_DIR/manifest.tsv plus the bundles and the little-endian tensor files it names (raw
values, the dtype in the suffix: .f32 float32, .i64 int64, .i32 int32, .b8 bool as bytes 0/1).
The Java side (android_sample/java/src/test/.../HostTests.java) runs every record through the
JNI library and compares. runtime_py is the reference: whatever it outputs or raises, the native
core must output or raise too.

Bundles: every model of the parity suite (tests/parity), with and without static input shapes
as that suite exports them, examples/tiny_cnn.py:TinyCNN, the app's shipped asset, and a typed
model (int64 ids and a bool mask in; float32, int64, int32 and bool out: typed_io), and the
tiny text models compiled once for sequence lengths 1..64 (distilbert_s, gpt2_s, ...). Extra
bundles exported elsewhere (held-out models) can be added with --bundle PATH:METHOD:SHAPE[,SHAPE].

manifest.tsv, one record per line, tab-separated (tensors: "[d0,d1,...]:file", space-separated;
"none" for a None element of a returned tuple):
    bundle       ID  FILE  METHODS(comma-separated)
    run          ID  METHOD  INPUT_TENSORS  EXPECTED_OUTPUT_TENSORS
    exec_error   ID  METHOD  INPUT_TENSORS  DEBUG_HANDLE  MODULE_HIERARCHY_LINE  MESSAGE_FILE(UTF-8)  CODE  FIELDS
                 (CODE: runtime_py's error.code; FIELDS: its fields as name=value, joined by \x1f)
    input_error  ID  METHOD  INPUT_TENSORS  DEBUG_HANDLE  CODE  FIELDS  MESSAGE_FILE(UTF-8)
                 (runtime_py's InputError: its handle, code and fields as exec_error's, "" and none
                 for an error not of the demo backend; the whole message when it has a code)
    malformed    FILE  RUNTIME_PY_MESSAGE
    state_info   ID  NAME  DTYPE  SHAPE(comma-separated)  BYTES
                 (program state, issue 34: a bundle's state tensors, as runtime_py's Module.state has them)
    state_step   ID  STEP  ACTION  ...   (one loaded module runs a bundle's steps in order)
                 call   METHOD  INPUT_TENSORS  EXPECTED_OUTPUT_TENSORS
                 error  METHOD  INPUT_TENSORS  CODE  FIELDS   (runtime_py's InputError; FIELDS as above)
                 reset
                 state  NAME  EXPECTED_TENSOR   (the state's values now)
    generate     ID  PROMPT  MAX_NEW_TOKENS  TEMPERATURE  TOP_K  TOP_P  SEED  STOP_IDS  TOKENS  STOP_REASON
                 (runtime_py's generator on a tiny HF Llama; ids comma-separated, STOP_IDS "bundle" for the
                 bundle's own; MESSAGE_FILE instead of TOKENS and "InputError" as STOP_REASON when it refuses)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
APP_ASSET = REPO / "android_sample/app/app/src/main/assets/tiny_cnn.ptl"
TINY_CNN = "examples/tiny_cnn.py:TinyCNN"  # relative: the debug table stores source paths as given

Shape = tuple[int, ...]


# numpy dtype -> (tensor file suffix, little-endian dtype): Vectors.java reads the suffix
_FILE_DTYPES = {"float32": ("f32", "<f4"), "int64": ("i64", "<i8"), "int32": ("i32", "<i4"), "bool": ("b8", "|b1")}


class Writer:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.lines: list[str] = []
        self.count = 0

    def tensors(self, arrays: Sequence[np.ndarray | None]) -> str:
        fields = []
        for array in arrays:
            if array is None:  # a None element of a returned tuple
                fields.append("none")
                continue
            self.count += 1
            suffix, dtype = _FILE_DTYPES[np.dtype(array.dtype).name]
            name = f"t{self.count:05d}.{suffix}"
            np.ascontiguousarray(array, dtype=dtype).tofile(self.out / name)
            fields.append("[" + ",".join(str(d) for d in array.shape) + "]:" + name)
        return " ".join(fields)

    def record(self, *fields: str) -> None:
        assert all("\t" not in f and "\n" not in f for f in fields), fields
        self.lines.append("\t".join(fields))


def as_tuple(value: object) -> tuple[np.ndarray | None, ...]:
    """A method's result as a tuple of arrays (a tuple-returning method gives several, a dict its
    values in order; None stays None)."""
    if isinstance(value, dict):
        value = tuple(value.values())
    return tuple(None if v is None else np.asarray(v) for v in value) if isinstance(value, tuple) \
        else (np.asarray(value),)


def random_inputs(shapes: Sequence[Shape], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * (1 + seed)).astype(np.float32) for s in shapes]


def wrong_shapes(shape: Shape) -> Iterator[Shape]:
    """Shapes near ``shape`` that should not fit: last dim, then dim 1, off by one; one more dim."""
    if shape:
        yield shape[:-1] + (shape[-1] + 1,)
    if len(shape) > 1:
        yield shape[:1] + (shape[1] + 1,) + shape[2:]
    yield (1, *shape)


def record_input_error(w: Writer, bundle_id: str, method: str, inputs: Sequence[np.ndarray], exc: Exception) -> None:
    """An input_error record of runtime_py's InputError ``exc``: the native core must raise an
    InputException with the same debug handle, code and fields (and, for a coded one, message)."""
    code: str = getattr(exc, "code", "")
    fields = "\x1f".join(f"{name}={value}" for name, value in getattr(exc, "fields", {}).items())
    message_file = ""
    if code:
        message_file = f"{bundle_id}.{method}.{len(w.lines)}.input_error.txt"
        (w.out / message_file).write_text(str(exc), encoding="utf-8")
    w.record("input_error", bundle_id, method, w.tensors(inputs), str(getattr(exc, "debug_handle", -1)), code,
             fields, message_file)


def record_kernel_failure(w: Writer, bundle_id: str, module: Any, method: str, input_shapes: list[Shape]) -> None:
    """An exec_error record when the method's sizes are known only at run time and a size that
    fits its declared shape makes an instruction fail (TinyCNN exported for 1x3x?x?, given 1x3x1x1:
    its pooling has nothing to pool): the program's failure on inputs that fit, ExecutionError."""
    from runtime_py.errors import ExecutionError

    if not input_shapes or len(input_shapes[0]) != 4 or bundle_id != "tiny_cnn_dynamic_dims":
        return
    inputs = random_inputs([(*input_shapes[0][:2], 1, 1), *input_shapes[1:]], 5)
    try:
        module.run_method(method, *inputs)
    except ExecutionError as exc:
        hierarchy = next(line for line in str(exc).splitlines() if line.startswith("Module hierarchy:"))
        message_file = f"{bundle_id}.{method}.error.txt"
        (w.out / message_file).write_text(str(exc), encoding="utf-8")
        fields = "\x1f".join(f"{name}={value}" for name, value in exc.fields.items())
        w.record("exec_error", bundle_id, method, w.tensors(inputs), str(exc.debug_handle), hierarchy,
                 message_file, exc.code, fields)
    else:
        raise AssertionError(f"runtime_py ran {bundle_id} on a 1x1 image")


def add_bundle(w: Writer, bundle_id: str, path: Path, shapes: dict[str, list[Shape]]) -> None:
    import runtime_py
    from runtime_py.errors import ExecutionError, InputError

    module = runtime_py.load(path)
    rel = os.path.relpath(path, w.out)
    w.record("bundle", bundle_id, rel, ",".join(module.method_names))
    for method, input_shapes in shapes.items():
        for seed in range(2):
            inputs = random_inputs(input_shapes, seed)
            outputs = as_tuple(module.run_method(method, *inputs))
            w.record("run", bundle_id, method, w.tensors(inputs), w.tensors(outputs))
        # A wrong input shape fails inside the compiled program: record the handle runtime_py reports.
        for bad in wrong_shapes(input_shapes[0]):
            inputs = random_inputs([bad, *input_shapes[1:]], 7)
            try:
                module.run_method(method, *inputs)
            except InputError as exc:  # a misfit the program's input checks catch: the caller's (exit 6)
                # (in a bundle declaring no input shapes, the instruction that cannot take it: INPUT_UNFIT)
                record_input_error(w, bundle_id, method, inputs, exc)
                break
            except ExecutionError as exc:  # a dynamic dim only a kernel refuses
                if exc.debug_handle < 0:
                    continue
                hierarchy = next(line for line in str(exc).splitlines() if line.startswith("Module hierarchy:"))
                message_file = f"{bundle_id}.{method}.error.txt"
                (w.out / message_file).write_text(str(exc), encoding="utf-8")
                fields = "\x1f".join(f"{name}={value}" for name, value in exc.fields.items())
                w.record("exec_error", bundle_id, method, w.tensors(inputs), str(exc.debug_handle), hierarchy,
                         message_file, exc.code, fields)
                break
        record_kernel_failure(w, bundle_id, module, method, input_shapes)
        # One input too few and an unknown method are the caller's mistakes (InputError).
        for name, inputs in ((method, random_inputs(input_shapes[:-1], 0)),
                             ("no_such_method", random_inputs(input_shapes, 0))):
            try:
                module.run_method(name, *inputs)
            except InputError as exc:
                record_input_error(w, bundle_id, name, inputs, exc)


def add_typed_bundle(w: Writer) -> None:
    """tests/android/typed_io.py's TypedIO: typed inputs and outputs, run on ids and masks,
    and an int32 ids input where int64 is declared (the input error saying expected vs got)."""
    import runtime_py
    from runtime_py.errors import InputError
    from tests.android.typed_io import INPUTS, write_typed_io

    path = write_typed_io(w.out / "typed_io.ptl")
    module = runtime_py.load(path)
    w.record("bundle", "typed_io", os.path.relpath(path, w.out), ",".join(module.method_names))
    for inputs in INPUTS:
        outputs = as_tuple(module.run_method("forward", *inputs))
        w.record("run", "typed_io", "forward", w.tensors(inputs), w.tensors(outputs))
    inputs = [np.array([1, 2, 3], np.int32), np.array([True, True, False])]
    try:
        module.run_method("forward", *inputs)
    except InputError as exc:
        record_input_error(w, "typed_io", "forward", inputs, exc)
    else:
        raise AssertionError("runtime_py took int32 ids for int64")


def add_text_bundles(w: Writer) -> None:
    """The tiny text models of tests/text_models (DistilBERT, BERT, GPT-2, Llama, Qwen2, the T5
    encoder), each compiled once for ids and a mask of a named length, ``1xS:int64 --dim S=1..64``:
    runs at S = 8, 16 and 64, and S = 65 (outside the bounds: the input error). The expected
    outputs are eager torch's (runtime_py's are checked against the same in
    tests/text_models/test_symbolic_lengths.py)."""
    import torch

    import runtime_py
    from liteexport.bundle import write_bundle
    from liteexport.compiler import compile_module
    from liteexport.input_spec import DimRange, TensorSpec
    from runtime_py.errors import InputError
    from tests.text_models.test_symbolic_lengths import _at_length
    from tests.text_models.test_text_models import MODELS, _inputs, _model

    for name in sorted(MODELS):
        model, bundle_id = _model(name), f"{name}_s"
        traced = torch.jit.trace(model, tuple(_inputs(0, 0)), strict=False)
        compiled = compile_module(traced, input_shapes={"forward": [TensorSpec((1, "S"), "int64")] * 2},
                                  dims={"S": DimRange("S", 1, 64)})
        path = w.out / f"{bundle_id}.ptl"
        write_bundle(compiled, path)
        module = runtime_py.load(path)
        w.record("bundle", bundle_id, os.path.relpath(path, w.out), ",".join(module.method_names))
        for length in (8, 16, 64):  # expected: eager torch's outputs, not runtime_py's
            inputs = _at_length(name, length, seed=length)
            with torch.no_grad():
                expected = model(*inputs).numpy()
            w.record("run", bundle_id, "forward", w.tensors([t.numpy() for t in inputs]), w.tensors([expected]))
        too_long = [t.numpy() for t in _at_length(name, 65, seed=65)]
        try:
            module.run_method("forward", *too_long)
        except InputError as exc:
            record_input_error(w, bundle_id, "forward", too_long, exc)
        else:
            raise AssertionError(f"runtime_py took S = 65 for S=1..64 ({name})")


def add_dict_bundle(w: Writer) -> None:
    """A method returning a dict of tensors ({"out", "aux"}, as the segmentation models): its runs
    (values in order) and its keys, for Module.outputNames/runMethodForMap."""
    import liteexport
    from tests.liteexport.test_dict_outputs import TwoHeads

    path = w.out / "dict_heads.ptl"
    liteexport.export(TwoHeads(), path, input_shapes=[(1, 3, 8, 8)])
    add_bundle(w, "dict_heads", path, {"forward": [(1, 3, 8, 8)]})
    w.record("dict_keys", "dict_heads", "forward", "out,aux")


def add_state_bundles(w: Writer) -> None:
    """Program state (issue 34): RowCache and TwoCaches (tests/generation/stateful_models.py),
    exported with torch.export, run by runtime_py on a sequence of calls on one loaded module
    (state carried over, a refused position, a call failing part-way, reset_state); the Java side
    runs the same steps on one Module and compares every output, error and state."""
    import torch

    import liteexport
    import runtime_py
    from runtime_py.errors import InputError
    from tests.generation.stateful_models import RowCache, TwoCaches, export_stateful

    torch.manual_seed(0)
    rng = np.random.default_rng(7)
    plans: dict[str, tuple[torch.nn.Module, int, list[Any]]] = {
        "state_row_cache": (RowCache(), 4, [[0, 1, 2], [3], "state", [2, 9], "state", [1], [7, 6, 5, 4], "state",
                                            "reset", "state", [0, 1, 2], [-1], "state"]),
        "state_two_caches": (TwoCaches(), 2, [[0, 1], "state", [2, 5], "state", [3, 2], "state", "reset", "state"]),
    }
    for bundle_id, (model, width, steps) in plans.items():
        path = w.out / f"{bundle_id}.ptl"
        liteexport.export(export_stateful(model, width), path, input_shapes={"forward": [f"1xSx{width}", "S:int64"]},
                          dims={"S": (1, 4)})
        w.record("bundle", bundle_id, path.name, "forward")
        module = runtime_py.load(path)
        for name, value in module.state.items():
            w.record("state_info", bundle_id, name, value.dtype.name, ",".join(map(str, value.shape)),
                     str(value.nbytes))
        for index, step in enumerate(steps):
            if step == "reset":
                module.reset_state()
                w.record("state_step", bundle_id, str(index), "reset")
            elif step == "state":
                for name, value in module.state.items():
                    w.record("state_step", bundle_id, str(index), "state", name, w.tensors([value.copy()]))
            else:
                inputs = [rng.standard_normal((1, len(step), width)).astype(np.float32), np.array(step, np.int64)]
                try:
                    result = module.forward(*inputs)
                except InputError as exc:
                    fields = "\x1f".join(f"{name}={value}" for name, value in exc.fields.items())
                    w.record("state_step", bundle_id, str(index), "error", "forward", w.tensors(inputs), exc.code,
                             fields)
                else:
                    w.record("state_step", bundle_id, str(index), "call", "forward", w.tensors(inputs),
                             w.tensors(as_tuple(result)))


def add_generation_bundle(w: Writer) -> None:
    """Generation (issue 34): the tiny Llama of tests/generation/hf_models.py exported with
    transformers' recipe, and runtime_py's generator on it: greedy (a prompt in two chunks), seeded
    sampling, a stop token, the end of the cache, and the input errors; LlmModule must give the
    same ids, stop reasons and messages."""
    import runtime_py
    from runtime_py.errors import InputError
    from runtime_py.generation import Generator
    from runtime_py.sampling import SamplingConfig
    from tests.generation.hf_models import MAX_CACHE, export_bundle, tiny_model

    path = export_bundle(tiny_model("llama"), w.out / "gen_llama.ptl")
    w.record("bundle", "gen_llama", path.name, "forward")
    generator = Generator.for_module(runtime_py.load(path))
    long_prompt = [(7 * i + 3) % 200 + 1 for i in range(20)]
    greedy = generator.generate(long_prompt, 12, stop_ids=()).tokens
    cases: list[tuple[list[int], int, SamplingConfig, list[int] | None]] = [
        (long_prompt, 32, SamplingConfig(), None),
        (long_prompt, 24, SamplingConfig(temperature=0.8, top_k=20, top_p=0.9, seed=7), []),
        ([5, 17, 42], 24, SamplingConfig(temperature=1.0, seed=2**63 + 11), []),
        (long_prompt, 12, SamplingConfig(), [greedy[4]]),
        ([(3 * i) % 120 + 1 for i in range(MAX_CACHE - 3)], 32, SamplingConfig(), []),
        ([], 8, SamplingConfig(), None),
        (list(range(1, MAX_CACHE + 2)), 8, SamplingConfig(), None),
        ([5, 17], 0, SamplingConfig(), None),
    ]
    for index, (prompt, max_new, config, stops) in enumerate(cases):
        fields = [",".join(map(str, prompt)), str(max_new), repr(config.temperature), str(config.top_k),
                  repr(config.top_p), str(config.seed), "bundle" if stops is None else ",".join(map(str, stops))]
        try:
            result = generator.generate(prompt, max_new, config, stop_ids=stops)
        except InputError as exc:
            message_file = f"gen_llama.{index}.error.txt"
            (w.out / message_file).write_text(str(exc), encoding="utf-8")
            w.record("generate", "gen_llama", *fields, message_file, "InputError")
        else:
            w.record("generate", "gen_llama", *fields, ",".join(map(str, result.tokens)), result.stop_reason)


def add_malformed(w: Writer, good: Path) -> None:
    """Broken variants of a good bundle that runtime_py rejects with a FormatError on load."""
    import runtime_py
    from runtime_py.errors import FormatError

    data = good.read_bytes()
    rng = np.random.default_rng(0)
    variants = {
        "empty": b"",
        "too_short": data[:6],
        "truncated_header": data[:64],
        "truncated_half": data[: len(data) // 2],
        "truncated_tail": data[:-16],
        "wrong_identifier": data[:4] + b"XXXX" + data[8:],
        "zip_magic": b"PK\x03\x04" + data[4:],
        "root_offset_out_of_bounds": (len(data) + 1000).to_bytes(4, "little") + data[4:],
        "garbage": rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(),
    }
    for name, payload in variants.items():
        path = w.out / f"malformed_{name}.ptl"
        path.write_bytes(payload)
        try:
            runtime_py.load(path)
        except FormatError as exc:
            w.record("malformed", path.name, str(exc).splitlines()[0])
        else:
            path.unlink()  # runtime_py accepts it: not a malformed-bundle vector


def add_labeled_bundle(w: Writer, shapes: dict[str, list[Shape]]) -> None:
    """TinyCNN with a user file, labels.txt, exported by the CLI as an app developer would
    (liteexport export --extra-file), for Module.extraFileNames/extraFile."""
    labels = w.out / "labels.txt"
    labels.write_text("".join(f"class {i}: {name}\n" for i, name in enumerate(["chat", "chien", "éléphant"])),
                      encoding="utf-8")
    bundle = w.out / "tiny_cnn_labels.ptl"
    result = subprocess.run(
        [sys.executable, "-m", "liteexport", "export", TINY_CNN, "--input-shape", "forward:1x3x32x32",
         "-o", str(bundle), "--extra-file", f"labels.txt={labels}"],
        cwd=REPO, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"liteexport export --extra-file failed:\n{result.stdout}{result.stderr}")
    add_bundle(w, "tiny_cnn_labels", bundle, shapes)
    w.record("extra_file", "tiny_cnn_labels", "labels.txt", labels.name)


def parse_extra(spec: str) -> tuple[Path, str, list[Shape]]:
    path, method, shapes = spec.rsplit(":", 2)
    return Path(path).resolve(), method, [tuple(int(d) for d in s.split("x")) for s in shapes.split(",")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--bundle", action="append", default=[], metavar="PATH:METHOD:SHAPE[,SHAPE]",
                        help="an extra bundle to check, with a method and its input shapes (repeatable)")
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    extras = [parse_extra(spec) for spec in args.bundle]  # before chdir: paths are the caller's

    os.chdir(REPO)  # so that source paths in the debug tables are repository-relative
    sys.path.insert(0, str(REPO))
    import torch

    from liteexport.bundle import write_bundle
    from liteexport.compiler import compile_module
    from liteexport.model_loading import load_scripted
    from tests.parity.parity_models import CASES, NEEDS_STATIC_SHAPES

    w = Writer(out)
    for name, (factory, shapes) in sorted(CASES.items()):  # the typed ones (token_ops) too
        for static in (False, True):
            if not static and name in NEEDS_STATIC_SHAPES:
                continue
            bundle_id = f"{name}_{'static' if static else 'dynamic'}"
            compiled = compile_module(torch.jit.script(factory().eval()), input_shapes=shapes if static else None)
            write_bundle(compiled, out / f"{bundle_id}.ptl")
            add_bundle(w, bundle_id, out / f"{bundle_id}.ptl", shapes)

    tiny_shapes: dict[str, list[Shape]] = {"forward": [(1, 3, 32, 32)]}
    write_bundle(compile_module(load_scripted(TINY_CNN)), out / "tiny_cnn_dynamic.ptl")
    add_bundle(w, "tiny_cnn_dynamic", out / "tiny_cnn_dynamic.ptl", {"forward": [(3, 3, 32, 32)]})
    write_bundle(compile_module(load_scripted(TINY_CNN), input_shapes=tiny_shapes), out / "tiny_cnn_static.ptl")
    add_bundle(w, "tiny_cnn_static", out / "tiny_cnn_static.ptl", tiny_shapes)
    # sizes known only at run time (1x3x?x?): the wrong-shape checks are the instructions' own
    dims_path = out / "tiny_cnn_dynamic_dims.ptl"
    write_bundle(compile_module(load_scripted(TINY_CNN), input_shapes={"forward": [(1, 3, -1, -1)]}), dims_path)
    add_bundle(w, "tiny_cnn_dynamic_dims", dims_path, tiny_shapes)
    if APP_ASSET.exists():
        add_bundle(w, "app_asset", APP_ASSET, tiny_shapes)
    add_labeled_bundle(w, tiny_shapes)
    add_typed_bundle(w)
    add_text_bundles(w)
    add_dict_bundle(w)
    add_state_bundles(w)
    add_generation_bundle(w)
    for i, (path, method, extra_shapes) in enumerate(extras):
        add_bundle(w, f"extra{i}", path, {method: extra_shapes})

    add_malformed(w, out / "tiny_cnn_static.ptl")
    (out / "manifest.tsv").write_text("\n".join(w.lines) + "\n", encoding="utf-8")
    kinds = [line.split("\t", 1)[0] for line in w.lines]
    print(f"wrote {out}/manifest.tsv: " + ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
