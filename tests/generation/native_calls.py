"""Sequences of calls on one loaded module, run by runtime_py and by the native core's host tool
(``liteexport_native_run --calls``, native/tools/run_calls.h), so that program state carries from
call to call in both; and the tiny Hugging Face Llama of issue 34 (transformers' own export
recipe with a static KV cache)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import runtime_py
from runtime_py.errors import LiteExportError


@dataclass
class Call:
    """``method(*inputs)``; the words "reset" and "state" (reset_state, a copy of every state)
    are entries of their own."""

    inputs: tuple[np.ndarray, ...]
    method: str = "forward"


Entry = Call | str


@dataclass
class Result:
    """What one entry gave: the outputs of a call or its error (code, fields), or the states."""

    outputs: list[np.ndarray] = field(default_factory=list)
    error: dict[str, Any] | None = None
    states: dict[str, np.ndarray] = field(default_factory=dict)


def host_tool() -> Path:
    """liteexport_native_run: ``$LITEEXPORT_NATIVE_RUN`` when set (a build made elsewhere), else the
    checkout's host build (tests/cpp_builds.py builds it once per run)."""
    import os

    from liteexport.native_tool import ENV_VARIABLE, native_tool
    from tests.text_models.typed import native_tool as built_tool

    return native_tool() if os.environ.get(ENV_VARIABLE) else built_tool()


def run_py(bundle: Path, entries: list[Entry]) -> tuple[list[Result], dict[str, np.ndarray]]:
    """runtime_py's results of ``entries`` on one loaded module, and its final state."""
    module = runtime_py.load(bundle)
    results: list[Result] = []
    for entry in entries:
        if entry == "reset":
            module.reset_state()
            results.append(Result())
        elif entry == "state":
            results.append(Result(states={name: value.copy() for name, value in module.state.items()}))
        else:
            assert isinstance(entry, Call)
            try:
                out = module.run_method(entry.method, *entry.inputs)
            except LiteExportError as exc:
                results.append(Result(error={"code": exc.code, "fields": dict(exc.fields)}))
                continue
            results.append(Result(outputs=[np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]))
    return results, {name: value.copy() for name, value in module.state.items()}


def run_native(tool: Path, bundle: Path, entries: list[Entry], work: Path) -> tuple[list[Result], dict[str, Any]]:
    """The native core's results of ``entries`` on one loaded module, and the tool's report
    (its "states": name, dtype, shape, bytes)."""
    work.mkdir(parents=True, exist_ok=True)
    lines = []
    for index, entry in enumerate(entries):
        if isinstance(entry, str):
            lines.append(entry)
            continue
        files = []
        for k, value in enumerate(entry.inputs):
            files.append(work / f"e{index}_in{k}.npy")
            np.save(files[-1], np.ascontiguousarray(value))
        lines.append(" ".join([entry.method, *map(str, files)]))
    (work / "calls.txt").write_text("\n".join(lines) + "\n")
    out, report_path = work / "out.npz", work / "report.json"
    result = subprocess.run([str(tool), str(bundle), "--calls", str(work / "calls.txt"), "--output", str(out),
                             "--report", str(report_path)], capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(report_path.read_text())
    results: list[Result] = []
    with np.load(out) as archive:
        for index, reported in enumerate(report["calls"]):
            if "error" in reported:
                results.append(Result(error={"code": reported["error"]["code"], "fields": reported["error"]["fields"]}))
            elif reported.get("state"):
                prefix = f"s{index}_"
                results.append(Result(states={name[len(prefix):]: archive[name] for name in archive.files
                                              if name.startswith(prefix)}))
            else:
                results.append(Result(outputs=[archive[f"c{index}_{k}"] for k in range(reported.get("outputs", 0))]))
    return results, report


def export_tiny_llama(path: Path, max_cache_len: int = 32, max_chunk: int = 16) -> Path:
    """A 2-layer tiny random Llama (seeded) exported with transformers' recipe (a static KV cache
    of ``max_cache_len`` positions, a dynamic prompt length S of 1..``max_chunk``) as ``path``."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from benchmarks.torchvision_shim import import_torchvision

    import_torchvision()  # before transformers: its torchvision import fails without the shim here
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    import liteexport

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=256)
    model = LlamaForCausalLM(cfg).eval()
    model.generation_config.cache_implementation = "static"
    seq = torch.export.Dim("S", min=1, max=max_chunk)
    with torch.no_grad():
        program = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_cache_len).export(
            input_ids=torch.tensor([[1, 2, 3]]), cache_position=torch.arange(3),
            dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}}, strict=True)
    liteexport.export(program, path, input_shapes={"forward": ["1xS:int64", "S:int64"]}, dims={"S": (1, max_chunk)})
    return path
