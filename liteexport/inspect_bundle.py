"""What ``liteexport inspect`` shows: a bundle's contents and where its bytes go.

``describe`` reads a bundle into a JSON-serializable dict (the ``--json`` output);
``format_description`` renders that dict for humans. Bundles that are not lowered
(a plain torch flatbuffer) get methods and storage, no delegate section. numpy only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bundle_format import ptmf
from bundle_format.bundle_file import ZIP_MAGIC, file_size, read_bundle_file
from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE
from bundle_format.debug_table_codec import decode_debug_table
from bundle_format.program import DTYPE_NAMES, DType, OpCode, Program, SymbolicDim, ValueInfo
from bundle_format.program_codec import decode_program
from runtime_py.errors import FormatError
from runtime_py.loader import tensor_value
from runtime_py.quantized_tensor import QUANTIZED_TYPE_NAMES, QuantizedTensor

# torch names every backend class __torch__.torch.classes.__backends__.<name>
BACKENDS_MARKER = "__backends__"
LOWERED_ATTR = "__loweredModule__"  # the LoweredWrapper's slot holding the LoweredModule
LOWERED_MODULE_PREFIX = "torch.jit.LoweredModule."  # the type torch's to_backend gives a lowered module
PROGRAMS_KEY, WEIGHTS_KEY = "programs", "weights"  # keys of the processed module dict

V = TypeVar("V")


# ---- following ivalue indexes -------------------------------------------------------------

def _ivalue(module: ptmf.Module, index: int, kind: type[V], what: str) -> V:
    """``module.ivalues[index]``, checked to be a ``kind``."""
    if not 0 <= index < len(module.ivalues):
        raise FormatError(f"{what} refers to ivalue {index}, outside the table of {len(module.ivalues)}",
                          where=what)
    value = module.ivalues[index]
    if not isinstance(value, kind):
        raise FormatError(f"{what} is a {type(value).__name__}, expected {kind.__name__}", where=what)
    return value


def _string_keyed(module: ptmf.Module, d: ptmf.DictValue, what: str) -> dict[str, int]:
    """A Dict ivalue with string keys as {key: value ivalue index}."""
    return {_ivalue(module, k, ptmf.StringValue, f"{what} key").value: v
            for k, v in zip(d.keys, d.values, strict=False)}


def _root(module: ptmf.Module) -> tuple[ptmf.ObjectValue, str]:
    root = _ivalue(module, module.state_obj, ptmf.ObjectValue, "state_obj")
    return root, _object_type(module, root).type_name


def _object_type(module: ptmf.Module, obj: ptmf.ObjectValue) -> ptmf.ObjectType:
    if not 0 <= obj.type_index < len(module.object_types):
        raise FormatError(f"object type {obj.type_index} is outside the table of {len(module.object_types)}",
                          where="object_types")
    return module.object_types[obj.type_index]


def _lowered_object(module: ptmf.Module) -> ptmf.ObjectValue | None:
    """The LoweredModule object: the wrapper root's ``__loweredModule__`` (or the root
    itself when it is the lowered module); None for bundles that are not lowered."""
    root, _ = _root(module)
    attr_names = _object_type(module, root).attr_names
    if LOWERED_ATTR in attr_names and attr_names.index(LOWERED_ATTR) < len(root.attrs):
        return _ivalue(module, root.attrs[attr_names.index(LOWERED_ATTR)], ptmf.ObjectValue, LOWERED_ATTR)
    return root if root.state and _backend_name(module) else None


def _processed(module: ptmf.Module, lowered: ptmf.ObjectValue) -> dict[str, int]:
    """The processed module: {"programs": Dict[str, Tensor], "weights": List[Tensor]}."""
    state = _ivalue(module, lowered.state, ptmf.TupleValue, "lowered module state")
    if len(state.items) != 3:
        raise FormatError(f"lowered module state has {len(state.items)} items, expected 3",
                          where="lowered module state")
    processed = _ivalue(module, state.items[1], ptmf.DictValue, "processed module")
    return _string_keyed(module, processed, "processed module")


def _tensor_bytes(module: ptmf.Module, meta: ptmf.TensorMetadata, what: str) -> np.ndarray:
    """The raw bytes of a contiguous tensor, a view into its storage."""
    if not 0 <= meta.storage_location_index < len(module.storage_data):
        raise FormatError(f"{what} uses storage {meta.storage_location_index}, outside the "
                          f"{len(module.storage_data)} storages", where=what)
    dtype = ptmf.storage_dtype(meta.scalar_type)  # a quantized tensor's storage holds its integers
    if dtype is None:
        raise FormatError(f"{what} has unknown scalar type {meta.scalar_type}", where=what)
    storage = module.storage_data[meta.storage_location_index]
    start = meta.storage_offset * dtype.itemsize
    end = start + int(np.prod(meta.sizes, dtype=np.int64)) * dtype.itemsize
    if end > storage.nbytes:
        raise FormatError(f"{what} needs bytes {start}..{end} of a {storage.nbytes}-byte storage", where=what)
    return storage[start:end]


def _backend_name(module: ptmf.Module) -> str | None:
    """The delegate's backend, from the custom class the lowered code creates
    (``__torch__.torch.classes.__backends__.<name>`` in functions' type annotations)."""
    names = [t for f in _functions(module) for t in f.type_annotations]
    names += [t.type_name for t in module.object_types]
    for name in names:
        if BACKENDS_MARKER in name:
            return name.rsplit(".", 1)[-1]
    return None


def _functions(module: ptmf.Module) -> list[ptmf.Function]:
    return [_ivalue(module, i, ptmf.Function, f"method {n}") for n, i in enumerate(module.methods)]


# ---- describing -------------------------------------------------------------------------

def format_signature(name: str, schema: ptmf.Schema | None, specs: Sequence[str] = ()) -> str:
    """``forward(x: Tensor) -> Tensor`` (``self`` left out); with ``specs`` (a compiled method's
    inputs, as --input-shape writes them) ``forward(ids: Tensor[1xS:int64]) -> Tensor``."""
    if schema is None:
        return f"{name}(...)"
    args = [a for a in schema.arguments if a.name != "self"]
    typed = list(specs) if len(specs) == len(args) else [""] * len(args)
    params = ", ".join(f"{a.name}: {a.type}" + (f"[{spec}]" if spec not in ("", "?") else "")  # "?": anything
                       for a, spec in zip(args, typed, strict=True))
    returns = [a.type for a in schema.returns]
    result = returns[0] if len(returns) == 1 else ("None" if not returns else f"({', '.join(returns)})")
    return f"{name}({params}) -> {result}"


def _methods(module: ptmf.Module, root_type: str, programs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The root object's user-facing methods (not ``__setstate__``/``__getstate__``); a compiled
    method's signature shows its inputs' shapes and dtypes and its named dims' bounds."""
    compiled = {p["method"]: p for p in programs}
    out = []
    for f in _functions(module):
        owner, _, name = f.qn.rpartition(".")
        if owner == root_type and not name.startswith("__"):
            program = compiled.get(name)
            signature = format_signature(name, f.schema, program["input_specs"] if program else ())
            if program and program["dims"]:
                signature += f"  where {', '.join(program['dims'])}"
            out.append({"name": name, "signature": signature})
    return out


def _shape(shape: Sequence[int] | None) -> list[int] | None:
    return None if shape is None else [int(d) for d in shape]


def _spec_text(info: ValueInfo, dims: Sequence[SymbolicDim]) -> str:
    if info.shape is None:
        sizes = "?"
    else:
        symbols = info.dim_symbols or (-1,) * len(info.shape)
        sizes = "x".join(dims[s].name if 0 <= s < len(dims) else "?" if d < 0 else str(d)
                         for d, s in zip(info.shape, symbols, strict=True)) or "scalar"
    return sizes if info.dtype == DType.FLOAT32 else f"{sizes}:{DTYPE_NAMES[info.dtype]}"


def _describe_program(program: Program, key: str) -> dict[str, Any]:
    ops = Counter(OpCode(i.op).name if i.op in OpCode._value2member_map_ else str(int(i.op))
                  for i in program.instructions)
    return {
        "method": program.method or key,
        "format_version": program.format_version,
        "instructions": len(program.instructions),
        "op_histogram": dict(ops.most_common()),
        "inputs": [_shape(v.shape) for v in program.inputs],
        # each input as --input-shape writes it (1xS:int64; float32 without a suffix), and the
        # named dims' bounds (S=1..128)
        "input_specs": [_spec_text(v, program.symbolic_dims) for v in program.inputs],
        "dims": [str(d) for d in program.symbolic_dims],
        "outputs": len(program.outputs),
        "constants": len(program.constants),
        "slots": program.num_slots,
        # bytes of results planned at the named dims' upper bounds (0: not planned)
        "working_memory": program.working_memory,
        # the tensors it keeps across calls, shared by the methods declaring them (a KV cache)
        "states": [{"name": st.name, "shape": list(st.shape), "dtype": DTYPE_NAMES.get(st.dtype, str(st.dtype)),
                    "bytes": st.nbytes, "initial": "zeros" if st.initial < 0 else f"weight {st.initial}"}
                   for st in program.states],
    }


def _describe_delegate(module: ptmf.Module,
                       lowered: ptmf.ObjectValue) -> tuple[dict[str, Any], dict[str, int]]:
    """The delegate section and the bytes of storage owned by programs and by weights."""
    processed = _processed(module, lowered)
    for key in (PROGRAMS_KEY, WEIGHTS_KEY):
        if key not in processed:
            raise FormatError(f"processed module has no '{key}'", where="processed module")
    programs_dict = _ivalue(module, processed[PROGRAMS_KEY], ptmf.DictValue, "processed programs")
    programs: list[dict[str, Any]] = []
    program_storages: set[int] = set()
    for key, index in _string_keyed(module, programs_dict, "processed programs").items():
        meta = _ivalue(module, index, ptmf.TensorMetadata, f"program {key}")
        programs.append(_describe_program(decode_program(_tensor_bytes(module, meta, f"program {key}")), key))
        program_storages.add(meta.storage_location_index)
    weights_list = _ivalue(module, processed[WEIGHTS_KEY], ptmf.ListValue, "processed weights")
    weights: list[dict[str, Any]] = []
    weight_storages: set[int] = set()
    for n, index in enumerate(weights_list.items):
        meta = _ivalue(module, index, ptmf.TensorMetadata, f"weight {n}")
        dtype = ptmf.NUMPY_DTYPES[meta.scalar_type] if meta.scalar_type in ptmf.NUMPY_DTYPES else None
        entry: dict[str, Any] = {"index": n, "shape": list(meta.sizes), "dtype": str(dtype),
                                 "bytes": _tensor_bytes(module, meta, f"weight {n}").nbytes}
        if meta.quantized_schema is not None:  # --quantize dynamic-int8: its parameters and their bytes
            entry["dtype"], entry["quantization"] = QUANTIZED_TYPE_NAMES[meta.scalar_type].lower(), _quantization(
                module, meta.quantized_schema, f"weight {n}", weight_storages)
            entry["bytes"] += entry["quantization"]["bytes"]
        weights.append(entry)
        weight_storages.add(meta.storage_location_index)
    states: dict[str, dict[str, Any]] = {}
    for program in programs:
        for state in program["states"]:
            states.setdefault(state["name"], {**state, "methods": []})["methods"].append(program["method"])
    delegate = {
        "backend": _backend_name(module),
        "programs": programs,
        "states": list(states.values()),
        "weights": {"count": len(weights), "total_bytes": sum(w["bytes"] for w in weights),
                    "by_dtype": _by_dtype(weights), "tensors": weights},
    }
    def storage(indexes: set[int]) -> int:
        return sum(module.storage_data[i].nbytes for i in indexes)

    storage_bytes = {"programs": storage(program_storages),
                     "weights": storage(weight_storages - program_storages)}
    return delegate, storage_bytes


def _quantization(module: ptmf.Module, q: ptmf.QuantizedSchema, what: str, seen: set[int]) -> dict[str, Any]:
    """A quantized weight's parameters: per tensor its scale and zero point, per channel the axis
    and the range of its scales (all of them: ``--json``), and the bytes they take: those of a
    storage not in ``seen`` (symmetric weights' zero points share one storage of zeros), which
    gets their storages."""
    if q.scales is None or q.zero_points is None:
        return {"scheme": "per tensor", "scale": q.scale, "zero_point": q.zero_point, "bytes": 0}
    scales = _tensor_bytes(module, q.scales, f"{what} scales").view(np.float64)
    zero_points = _tensor_bytes(module, q.zero_points, f"{what} zero points").view(np.int64)
    new = {t.storage_location_index for t in (q.scales, q.zero_points)} - seen
    seen |= new
    return {"scheme": "per channel", "axis": q.axis, "scales": [float(v) for v in scales],
            "zero_points": [int(v) for v in zero_points],
            "bytes": sum(int(module.storage_data[i].nbytes) for i in new)}


def _by_dtype(weights: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """dtype -> {"count", "bytes"} of the weights stored in it (float16 with --weights fp16), largest first."""
    totals: dict[str, dict[str, int]] = {}
    for w in weights:
        entry = totals.setdefault(w["dtype"], {"count": 0, "bytes": 0})
        entry["count"] += 1
        entry["bytes"] += w["bytes"]
    return dict(sorted(totals.items(), key=lambda item: -item[1]["bytes"]))


def delegate_contents(module: ptmf.Module) -> tuple[dict[str, Program], list[np.ndarray | QuantizedTensor]] | None:
    """The compiled programs (by method) and the weights of a lowered bundle; None when the
    bundle is not lowered. Weights are views into the bundle's storage (quantized ones, of
    --quantize dynamic-int8 or a quantized model, as runtime_py's QuantizedTensor)."""
    lowered = _lowered_object(module)
    if lowered is None:
        return None
    processed = _processed(module, lowered)
    programs_dict = _ivalue(module, processed[PROGRAMS_KEY], ptmf.DictValue, "processed programs")
    programs = {key: decode_program(_tensor_bytes(module, _ivalue(module, index, ptmf.TensorMetadata, key), key))
                for key, index in _string_keyed(module, programs_dict, "processed programs").items()}
    weights = []
    for n, index in enumerate(_ivalue(module, processed[WEIGHTS_KEY], ptmf.ListValue, "weights").items):
        meta = _ivalue(module, index, ptmf.TensorMetadata, f"weight {n}")
        if meta.quantized_schema is not None:  # int8 weights: as runtime_py holds them
            weights.append(tensor_value(meta, module.storage_data))
            continue
        raw = _tensor_bytes(module, meta, f"weight {n}")
        weights.append(raw.view(ptmf.NUMPY_DTYPES[meta.scalar_type]).reshape(meta.sizes))
    return programs, weights


def _describe_debug_table(content: bytes) -> dict[str, Any]:
    table = decode_debug_table(content)
    entries = []
    for e in table.entries:
        frame = e.user_frame()
        entries.append({"handle": e.handle, "method": e.method, "node_kind": e.node_kind,
                        "module_hierarchy": e.module_hierarchy,
                        "location": f"{frame.file}:{frame.line}" if frame else ""})
    return {"format_version": table.format_version, "count": len(entries), "entries": entries}


def _describe_operators(module: ptmf.Module) -> dict[str, Any]:
    """Every operator the bundle's bytecode calls, and which of them runtime_py lacks."""
    from runtime_py.operators import is_supported

    names = sorted({(op.name, op.overload_name) for v in module.ivalues if isinstance(v, ptmf.Function)
                    for op in v.operators})
    listed = [{"name": name, "overload": overload, "runtime_py": is_supported(name, overload)}
              for name, overload in names]
    return {"count": len(listed), "all": listed,
            "missing_in_runtime_py": [f"{o['name']}.{o['overload']}" if o["overload"] else o["name"]
                                      for o in listed if not o["runtime_py"]]}


def _file_format(path: str | Path) -> str:
    with open(path, "rb") as f:
        head = f.read(8)
    return "zip" if head.startswith(ZIP_MAGIC) else "flatbuffer"


def describe(path: str | Path) -> dict[str, Any]:
    """Everything ``inspect`` reports about the bundle at ``path``, as plain JSON data."""
    module = read_bundle_file(path)
    total = file_size(path)
    _, root_type = _root(module)
    lowered = _lowered_object(module)
    delegate, storage_bytes = (None, {}) if lowered is None else _describe_delegate(module, lowered)
    debug_content = module.extra_file(DEBUG_TABLE_EXTRA_FILE)
    storage_total = sum(s.nbytes for s in module.storage_data)
    debug_bytes = len(debug_content) if debug_content is not None else 0
    other_extra = sum(len(e.content) for e in module.extra_files) - debug_bytes
    sizes = {
        "weights": storage_bytes.get("weights", 0),
        "programs": storage_bytes.get("programs", 0),
        "other_storage": storage_total - sum(storage_bytes.values()),
        "debug_table": debug_bytes,
        "other_extra_files": other_extra,
    }
    # flatbuffer framing, padding, ivalues and bytecode: whatever the sections above leave
    sizes["bytecode_and_metadata"] = total - sum(sizes.values())
    sizes["total"] = total
    return {
        "path": str(path),
        "format": _file_format(path),
        "file_size": total,
        "bytecode_version": module.bytecode_version,
        "operator_version": module.operator_version,
        "root_type": root_type,
        "methods": _methods(module, root_type, delegate["programs"] if delegate else ()),
        "functions": [{"name": f.qn, "instructions": len(f.instructions), "operators": len(f.operators)}
                      for f in _functions(module)],
        "operators": _describe_operators(module),
        "delegate": delegate,
        # a partially lowered bundle (liteexport export --lower): lowered submodules, by type
        "lowered_submodule_types": [] if lowered is not None else sorted(
            {t.type_name for t in module.object_types if t.type_name.startswith(LOWERED_MODULE_PREFIX)}),
        "storage": {"count": len(module.storage_data), "total_bytes": storage_total},
        "extra_files": [{"name": e.name, "bytes": len(e.content)} for e in module.extra_files],
        "debug_table": None if debug_content is None else _describe_debug_table(debug_content),
        "generation": _describe_generation(module),
        "sizes": sizes,
    }


def _describe_generation(module: ptmf.Module) -> dict[str, Any] | None:
    """The generation record of a decoder LM bundle (runtime_py.generation), or None."""
    from runtime_py.generation import GENERATION_EXTRA_FILE, GenerationSpec

    record = module.extra_file(GENERATION_EXTRA_FILE)
    if record is None:
        return None
    spec = GenerationSpec.from_json(bytes(record))
    return {"method": spec.method, "max_chunk": spec.max_chunk, "max_length": spec.max_length,
            "stop_ids": list(spec.stop_ids)}


# ---- formatting for humans ----------------------------------------------------------------

def _table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool]) -> list[str]:
    """Aligned columns, two spaces apart, indented by two; ``right`` per column."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right, strict=True)]
        lines.append(("  " + "  ".join(parts)).rstrip())
    return lines


def _fmt_shape(shape: Sequence[int] | None) -> str:
    if shape is None:
        return "?"
    return "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"


def _fmt_quantization(q: dict[str, Any] | None) -> str:
    if q is None:
        return "-"
    if q["scheme"] == "per tensor":
        return f"per tensor, scale {q['scale']:.3g}, zero point {q['zero_point']}"
    scales = q["scales"]
    zero = "zero points 0" if not any(q["zero_points"]) else "zero points vary"
    return (f"per channel (axis {q['axis']}), {len(scales)} scales {min(scales):.3g}..{max(scales):.3g}, {zero}"
            if scales else f"per channel (axis {q['axis']}), no scales")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _fmt_count(n: int) -> str:
    return f"{n:,}"


def format_description(d: dict[str, Any]) -> str:
    """The human-readable ``inspect`` report for a ``describe`` result."""
    kind = "PTMF flatbuffer" if d["format"] == "flatbuffer" else "zip (pickle)"
    out = [f"{d['path']}: {_fmt_count(d['file_size'])} bytes, {kind}, bytecode version {d['bytecode_version']}",
           f"root type: {d['root_type']}", "", "Methods:"]
    out += [f"  {m['signature']}" for m in d["methods"]] or ["  (none)"]
    ops = d["operators"]
    missing = ops["missing_in_runtime_py"]
    out += ["", f"Operators: {ops['count']} "
            + (f"(runtime_py lacks {len(missing)}: {', '.join(missing)})" if missing else "(runtime_py has all)")]
    delegate = d["delegate"]
    if delegate is not None:
        out += ["", f"Delegate: {delegate['backend']}"]
        rows = [(p["method"], f"v{p['format_version']}", p["instructions"], p["constants"],
                 (", ".join(p["input_specs"]) or "-") + (f" ({', '.join(p['dims'])})" if p["dims"] else ""))
                for p in delegate["programs"]]
        out += _table(("program", "format", "instructions", "constants", "inputs"), rows,
                      (False, False, True, True, False))
        for p in delegate["programs"]:
            ops = "  ".join(f"{op} {n}" for op, n in p["op_histogram"].items())
            out.append(f"  {p['method']} ops: {ops or '(none)'}")
            if p["working_memory"]:
                out.append(f"  {p['method']} memory: up to {_fmt_count(p['working_memory'])} bytes of results at "
                           f"{', '.join(p['dims'])} (planned for the upper bounds)")
        states = delegate["states"]
        if states:
            total = sum(st["bytes"] for st in states)
            out += ["", f"State: {_plural(len(states), 'tensor')} kept across calls, {_fmt_count(total)} bytes "
                        "(allocated once per loaded module, shared by its methods)"]
            out += _table(("name", "shape", "dtype", "bytes", "initial", "methods"),
                          [(st["name"], _fmt_shape(st["shape"]), st["dtype"], _fmt_count(st["bytes"]), st["initial"],
                            ", ".join(st["methods"])) for st in states], (False, False, False, True, False, False))
        generation = d["generation"]
        if generation is not None:
            stops = ", ".join(map(str, generation["stop_ids"])) or "none"
            out += ["", f"Generation: {generation['method']}(input_ids, cache_position) -> logits; prompt chunks of "
                        f"at most {generation['max_chunk']} tokens, {generation['max_length']} positions of cache, "
                        f"stop ids {stops} (liteexport generate)"]
        weights = delegate["weights"]
        kinds = weights["by_dtype"]
        by_dtype = (f", all {next(iter(kinds))}" if len(kinds) == 1 else " (" + "; ".join(
            f"{dtype}: {_plural(t['count'], 'tensor')}, {_fmt_count(t['bytes'])} bytes" for dtype, t in kinds.items())
            + ")" if kinds else "")
        out += ["", f"Weights: {_plural(weights['count'], 'tensor')}, "
                    f"{_fmt_count(weights['total_bytes'])} bytes{by_dtype}"]
        if weights["tensors"]:
            quantized = any("quantization" in w for w in weights["tensors"])
            out += _table(("#", "shape", "dtype", "bytes") + (("quantization",) if quantized else ()),
                          [(w["index"], _fmt_shape(w["shape"]), w["dtype"], _fmt_count(w["bytes"]))
                           + ((_fmt_quantization(w.get("quantization")),) if quantized else ())
                           for w in weights["tensors"]], (True, False, False, True, False)[:4 + quantized])
    else:
        storage = d["storage"]
        parts = d["lowered_submodule_types"]
        out += ["", f"Delegate: none at the root; {_plural(len(parts), 'lowered submodule type')} "
                    f"(partially lowered): {', '.join(parts)}" if parts else "Delegate: none (not a lowered module)",
                f"Storage: {_plural(storage['count'], 'tensor')}, {_fmt_count(storage['total_bytes'])} bytes"]
    user_files = [e for e in d["extra_files"] if not e["name"].startswith("liteexport/")]  # ours: below
    if user_files:
        out += ["", f"Extra files: {len(user_files)}"]
        out += _table(("name", "bytes"), [(e["name"], _fmt_count(e["bytes"])) for e in user_files], (False, True))
    table = d["debug_table"]
    if table is None:
        out += ["", "Debug table: none (stripped: errors name instructions only)"]
    else:
        out += ["", f"Debug table: {_plural(table['count'], 'entry', 'entries')}"]
        if table["entries"]:
            out += _table(("handle", "node", "location", "module"),
                          [(e["handle"], e["node_kind"], e["location"], e["module_hierarchy"])
                           for e in table["entries"]], (True, False, False, False))
    total = d["sizes"]["total"] or 1
    labels = {"weights": "weights", "programs": "compiled programs", "other_storage": "other storage",
              "debug_table": "debug table", "other_extra_files": "other extra files",
              "bytecode_and_metadata": "bytecode and metadata", "total": "total"}
    out += ["", "Size breakdown:"]
    out += _table(("section", "bytes", "share"),
                  [(labels[k], _fmt_count(v), f"{100 * v / total:.1f}%") for k, v in d["sizes"].items()],
                  (False, True, True))
    return "\n".join(out)
