"""torch's OpInfo sample inputs (``torch.testing._internal.common_methods_invocations.op_db``)
through the torch.export front end, one sample at a time: the sample's tensors become the inputs
of a tiny module, everything else its constants; the module is exported, compiled and its bundle
run on runtime_py and the native core against eager torch.

Shared by tests/frontend_export/test_opinfo_parity.py (the parity bar: no wrong answer) and
scripts/core_aten_table.py (the OpInfo column of docs/reference.md's Core ATen table).
"""

from __future__ import annotations

import functools
import sys
import types
import unittest
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils import _pytree as pytree

from bundle_format.errors import InputError
from liteexport.bundle import write_bundle
from liteexport.compiler.exported import compile_exported, torch_quietly
from liteexport.errors import ModelError, UnsupportedNodesError
from runtime_py.errors import LiteExportError

# the input dtypes a compiled program takes (float64, complex... are input errors, tested in
# tests/liteexport/test_export_input_errors.py)
DTYPES = (torch.float32, torch.int64, torch.bool)
# ops whose values are not defined (uninitialized memory): nothing to compare
_UNDEFINED = ("empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided")
# at most this many samples per OpInfo: the whole set takes about a second a sample on 2 shared cores
SAMPLES_PER_OPINFO = 2


def op_db() -> list[Any]:
    """torch's OpInfo database. Its module imports ``expecttest`` (torch's test-only dependency,
    not installed here) for its TestCase base class only: a stand-in gives it unittest's."""
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
        except ImportError:
            stand_in = types.ModuleType("expecttest")
            stand_in.TestCase = unittest.TestCase  # type: ignore[attr-defined]
            stand_in.ACCEPT = False  # type: ignore[attr-defined]
            sys.modules["expecttest"] = stand_in
    from torch.testing._internal.common_methods_invocations import op_db as db

    return list(db)


@functools.cache
def opinfos_by_aten_name() -> dict[str, list[Any]]:
    """OpInfos by the ATen op they test: ``aten_name`` (``conv2d`` for nn.functional.conv2d)."""
    table: dict[str, list[Any]] = {}
    for info in op_db():
        table.setdefault(info.aten_name or info.name, []).append(info)
    return table


# Core ATen ops torch has no OpInfo of its own for, measured by the OpInfos of the ops users write
# that reach them (aten_name, and the variant where only one variant reaches the op)
ALIASES: dict[str, tuple[tuple[str, str | None], ...]] = {
    "_adaptive_avg_pool2d": (("nn.functional.adaptive_avg_pool2d", None),),
    "_log_softmax": (("log_softmax", None),),
    "_native_batch_norm_legit_no_training": (("batch_norm", None),),
    "_softmax": (("softmax", None),),
    "convolution": (("conv1d", None), ("conv2d", None), ("conv_transpose1d", None), ("conv_transpose2d", None)),
    "embedding": (("nn.functional.embedding", None),),
    "index": (("__getitem__", None),),
    "max_pool2d_with_indices": (("max_pool2d", None),),
    "native_group_norm": (("group_norm", None),),
    "native_layer_norm": (("layer_norm", None),),
    "reflection_pad2d": (("nn.functional.pad", "reflect"),),
    "replication_pad2d": (("nn.functional.pad", "replicate"),),
    "upsample_bilinear2d": (("interpolate", "bilinear"), ("nn.functional.upsample_bilinear", None)),
    "upsample_nearest2d": (("interpolate", "nearest"), ("nn.functional.upsample_nearest", None)),
}


def opinfos_for(name: str, table: dict[str, list[Any]]) -> list[Any]:
    """The OpInfos that measure Core ATen op ``name``: its own, then ALIASES'."""
    found = list(table.get(name, []))
    for aten_name, variant in ALIASES.get(name, ()):
        found += [i for i in table.get(aten_name, []) if variant is None or i.variant_test_name == variant]
    return found


class SampleModule(torch.nn.Module):  # type: ignore[misc,unused-ignore]
    """``op(input, *args, **kwargs)`` of one sample: its tensors are the module's inputs (in
    pytree order), the rest constants."""

    def __init__(self, op: Callable[..., Any], spec: Any, constants: list[Any]) -> None:
        super().__init__()
        self.op, self.spec, self.constants = op, spec, constants

    def forward(self, *tensors: torch.Tensor) -> Any:
        feed = iter(tensors)
        leaves = [next(feed) if value is None else value for value in self.constants]
        sample_input, args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return self.op(sample_input, *args, **kwargs)


@dataclass
class Outcome:
    """One sample: ``lowered`` (ran on every engine; ``error`` the largest float difference from
    eager torch), ``refused`` (``reason`` the error's class and first line) or ``skipped``
    (torch itself cannot export it, or an input dtype no compiled program takes)."""

    status: str
    reason: str = ""
    error: float = 0.0
    wrong: str = ""  # a wrong answer: which engine and how


@dataclass
class Tally:
    samples: int = 0
    lowered: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    max_error: float = 0.0
    wrong: list[str] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.samples += 1
        if outcome.status == "lowered":
            self.lowered += 1
            self.max_error = max(self.max_error, outcome.error)
        elif outcome.status == "refused":
            self.refused[outcome.reason] = self.refused.get(outcome.reason, 0) + 1
        else:
            self.skipped[outcome.reason] = self.skipped.get(outcome.reason, 0) + 1
        if outcome.wrong:
            self.wrong.append(outcome.wrong)


def samples(info: Any, limit: int = SAMPLES_PER_OPINFO) -> Iterator[Any]:
    """The OpInfo's float32 samples (its integer and bool ones where it has them), at most
    ``limit`` of each dtype, in torch's order (deterministic: torch seeds its sample makers)."""
    for dtype in DTYPES:
        if dtype not in info.supported_dtypes("cpu"):
            continue
        torch.manual_seed(0)
        for count, sample in enumerate(info.sample_inputs("cpu", dtype)):
            if count >= limit:
                break
            yield sample


def probe(info: Any, sample: Any, path: Path, native: Callable[[Path, list[np.ndarray]], list[np.ndarray]] | None
          ) -> Outcome:
    """Export, compile and run one sample; compare every engine with eager torch."""
    from tests.text_models.typed import assert_same

    if info.name in _UNDEFINED:
        return Outcome("skipped", "uninitialized values")
    leaves, spec = pytree.tree_flatten((sample.input, tuple(sample.args), dict(sample.kwargs)))
    tensors = [leaf.detach().clone() for leaf in leaves if isinstance(leaf, torch.Tensor)]
    for tensor in tensors:
        if tensor.dtype not in DTYPES or tensor.layout != torch.strided:
            return Outcome("skipped", f"a {tensor.dtype} input")
    constants = [None if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
    module = SampleModule(info.op, spec, constants)
    try:
        with torch.no_grad():
            expected = module(*tensors)
    except Exception as exc:  # noqa: BLE001 - a sample torch itself errors on (OpInfo's error inputs)
        return Outcome("skipped", f"eager torch raises {type(exc).__name__}")
    flat_expected = [t for t in pytree.tree_leaves(expected) if isinstance(t, torch.Tensor)]
    if not flat_expected or any(t.dtype not in DTYPES for t in flat_expected):
        return Outcome("skipped", "an output dtype no program returns")
    try:
        with torch_quietly():
            program = torch.export.export(module, tuple(tensors))
    except Exception as exc:  # noqa: BLE001 - torch.export's own refusal, not the compiler's
        return Outcome("skipped", f"torch.export raises {type(exc).__name__}")
    try:
        compiled = compile_exported(program)
        write_bundle(compiled, path)
    except UnsupportedNodesError as exc:
        return Outcome("refused", "unsupported: " + _first_reason(exc))
    except (ModelError, InputError) as exc:
        return Outcome("refused", f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
    import runtime_py

    arrays = [t.numpy() for t in tensors]
    wanted = [t.numpy() for t in flat_expected]
    largest = 0.0
    engines: list[tuple[str, Callable[[], Any]]] = [("runtime_py", lambda: runtime_py.load(path).forward(*arrays))]
    if native is not None:
        engines.append(("native", lambda: native(path, arrays)))
    for engine, run in engines:
        try:
            got = run()
        except LiteExportError as exc:
            return Outcome("lowered", wrong=f"{engine} raises {type(exc).__name__}: {exc}")
        got_flat = list(got.values()) if isinstance(got, dict) else list(got) if isinstance(got, (tuple, list)) \
            else [got]
        try:
            if info.name == "topk" or (info.name == "sort" and not sample.kwargs.get("stable")):
                got_flat[1] = _tie_indices(info.name, sample, tensors, got_flat[1], wanted[1])
            largest = max(largest, assert_same(got_flat, wanted))
        except AssertionError as exc:
            return Outcome("lowered", wrong=f"{engine}: {_described(exc)}")
    return Outcome("lowered", error=largest)


def _tie_indices(name: str, sample: Any, tensors: list[torch.Tensor], got: np.ndarray, wanted: np.ndarray
                 ) -> np.ndarray:
    """topk's (an unstable sort's) indices where they pick the same values as torch's: torch leaves
    the order of equal values open (ours is index order), so indices that differ only among ties are
    torch's. A stable sort's are compared as they are."""
    at = 1 if name == "topk" else 0  # topk(x, k, dim), sort(x, dim)
    dim = sample.args[at] if len(sample.args) > at else sample.kwargs.get("dim", -1)
    source = tensors[0]
    picked = torch.take_along_dim(source, torch.from_numpy(np.asarray(got)), dim)
    expected = torch.take_along_dim(source, torch.from_numpy(np.asarray(wanted)), dim)
    return wanted if torch.equal(picked, expected) else got


def _described(exc: AssertionError) -> str:
    """The assertion's message, or what differs when it has none (a dtype or shape)."""
    return str(exc).strip()[:300] or "a different dtype or shape (tests.text_models.typed.assert_same)"


def _first_reason(exc: UnsupportedNodesError) -> str:
    """The unsupported kinds and why (``aten::flip``, ``aten::max_pool2d: ceil_mode``)."""
    kinds = sorted(exc.counts)
    return ", ".join(f"{kind}{': ' + exc.reasons[kind][:60] if exc.reasons.get(kind) else ''}" for kind in kinds)
