"""Every opcode of the op spec (schema/demo_ops.toml) is implemented everywhere it must be.

Python sides here: the compiler emits it (a lowering, or a pass, produces it for a real
model), has a shape rule and its torch semantics (constant folding), and runtime_py's demo
backend has a kernel. The C++ executors check theirs when they are built: their kernel tables
are switches over the generated enum (demo_ops_generated.h) that fail to compile when an
opcode has no case (-Werror=switch in native/src/demo/kernels.cpp and
liteexport/torch_backend/aten_kernels.h).
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bundle_format.program import OP_SPECS, OpCode, attributes_class
from liteexport.compiler import semantics, shapes
from runtime_py.backends.demo.kernels import KERNELS

ALL = set(OpCode)
ROOT = Path(__file__).resolve().parent.parent


def _missing(table: object) -> list[str]:
    return sorted(op.name for op in ALL - set(table))  # type: ignore[call-overload]


def test_the_spec_covers_the_enum() -> None:
    assert set(OP_SPECS) == ALL


def test_runtime_py_has_a_kernel_for_every_opcode() -> None:
    assert _missing(KERNELS) == []


def test_the_compiler_has_a_shape_rule_and_semantics_for_every_opcode() -> None:
    assert _missing(shapes._RULES) == []  # noqa: SLF001 - the table itself is what is checked
    assert _missing(semantics.SEMANTICS) == []


@pytest.mark.parametrize("op", sorted(ALL), ids=lambda op: op.name)
def test_optional_attributes_have_a_default_for_every_field(op: OpCode) -> None:
    """attrs_optional in the spec means an instruction may omit the table: the dataclass must
    then be constructible with no arguments, and only then."""
    cls = attributes_class(op)
    if cls is None:
        assert not OP_SPECS[op].attrs_optional
        return
    all_defaults = all(f.default is not dataclasses.MISSING for f in dataclasses.fields(cls))
    assert OP_SPECS[op].attrs_optional == all_defaults


def test_the_compiler_emits_every_opcode() -> None:
    """Compile the parity models (and a batch norm with no producer to fold into): together
    they use every opcode. A new opcode needs a lowering and a model that uses it here."""
    torch = pytest.importorskip("torch")
    from liteexport.compiler import compile_module
    from tests.parity.parity_models import CASES

    class BareBatchNorm(torch.nn.Module):  # an input's batch norm stays CHANNEL_AFFINE
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.BatchNorm2d(3).eval()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.norm(x)

    class Positions(torch.nn.Module):  # a range over a length known only at run time is ARANGE_LIKE
        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return ids + torch.arange(ids.size(1))

    class CausalMask(torch.nn.Module):  # a mask over a length known only at run time is a FULL
        def forward(self, scores: torch.Tensor) -> torch.Tensor:
            size = scores.size(1)
            return scores.masked_fill(torch.ones(size, size, dtype=torch.bool).triu(1), 0.0)

    from liteexport.input_spec import TensorSpec
    from tests.compiler.models.quantized import small_quantized

    cases = {**CASES, "bare_batch_norm": (BareBatchNorm, {"forward": [(1, 3, 4, 4)]}),
             "positions": (Positions, {"forward": [TensorSpec((1, "S"), "int64")]}),
             "causal_mask": (CausalMask, {"forward": [TensorSpec((1, "S", "S"), "float32")]}),
             # a quantized model's activations are FAKE_QUANTIZE results
             "quantized": (small_quantized, {"forward": [(1, 3, 16, 16)]})}
    emitted: set[OpCode] = set()
    for make, input_shapes in cases.values():
        compiled = compile_module(torch.jit.script(make()), input_shapes=input_shapes)
        emitted |= {inst.op for program in compiled.programs for inst in program.instructions}
    # a buffer written in place (a KV cache) is program state: INDEX_COPY and STATE_WRITE
    from liteexport.compiler.exported import compile_exported
    from tests.generation.stateful_models import CacheAttention, RowCache, export_cache_attention, export_stateful

    for compiled in (compile_exported(export_stateful(RowCache(), 4)),  # and attention over a cache: ATTENTION
                     compile_exported(export_cache_attention(CacheAttention()))):
        emitted |= {inst.op for program in compiled.programs for inst in program.instructions}
    assert _missing(emitted) == []


def test_the_fbs_opcode_enum_is_rendered_from_the_spec(tmp_path: Path) -> None:
    """Adding an op is one spec line: the fbs's OpCode enum is generated, with explicit
    numbers (the wire format), and the generator refuses a spec out of order; the attribute
    tables and the Attributes union are rendered from the spec too (an edited union comes back)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import demo_ops_codegen as codegen
    finally:
        sys.path.pop(0)
    spec_path, fbs_path = ROOT / "schema" / "demo_ops.toml", ROOT / "schema" / "demo_program.fbs"
    spec = codegen.load(spec_path, fbs_path)
    assert len(spec.ops) == len(OpCode)
    fbs = fbs_path.read_text()
    assert codegen.fbs_with_opcodes(fbs, spec) == fbs
    for op in OpCode:
        assert f"  {spec.ops[op].fbs} = {int(op)}," in fbs
    added = tmp_path / "added.toml"
    added.write_text(spec_path.read_text()
                     + f'NEW_OP = {{ code = {len(OpCode)}, fbs = "NewOp", inputs = [1, 1], family = "own", '
                     f'shape = "same", memory = "largest_input", doc = "new" }}\n')
    rendered = codegen.fbs_with_opcodes(fbs, codegen.load(added, fbs_path))
    assert f"  NewOp = {len(OpCode)}," in rendered
    assert [line for line in rendered.splitlines() if "NewOp" not in line] == fbs.splitlines()
    gap = tmp_path / "gap.toml"
    gap.write_text(spec_path.read_text() + 'EXTRA = { code = 99, fbs = "Extra", inputs = [1, 1], family = "own", '
                   'shape = "same", memory = "largest_input", doc = "" }\n')
    with pytest.raises(codegen.SpecError, match="opcode order"):
        codegen.load(gap, fbs_path)
    no_slice = tmp_path / "no_slice.fbs"
    no_slice.write_text(fbs.replace("  Slice,\n}", "}"))
    assert codegen.fbs_with_opcodes(no_slice.read_text(), codegen.load(spec_path, no_slice)) == fbs


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to compile the native core's kernel table")
def test_the_native_kernel_table_does_not_compile_without_a_kernel_for_an_opcode(tmp_path: Path) -> None:
    """The C++ tables are switches over the generated enum with -Werror=switch: dropping one
    opcode's case is a compile error (the same pragma guards liteexport/torch_backend/aten_kernels.h).
    A family's members come from the spec (demo_traits_generated.h): a math op whose C++ kernel
    (math_kernels::NAME, the spec's `kernel`) is missing does not compile either, naming it."""
    from bundle_format._generated.demo_traits import FAMILY

    native = ROOT / "native" / "src"
    flatbuffers = Path(sys.prefix) / "include"

    def compiles(name: str, text: str) -> subprocess.CompletedProcess[str]:
        path = tmp_path / name
        path.write_text(text)
        includes = [native, native / "demo", native.parent / "include", ROOT / "native_format" / "decoder",
                    ROOT / "native_format" / "generated", flatbuffers]
        return subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *(f"-I{d}" for d in includes), str(path)],
                              capture_output=True, text=True, check=False)

    source = (native / "demo" / "kernels.cpp").read_text()
    assert compiles("kernels.cpp", source).returncode == 0
    last = max((op for op in OpCode if FAMILY[op] == "own"), key=int).name
    without = "\n".join(line for line in source.splitlines() if f"case Op::{last}:" not in line)
    result = compiles("kernels.cpp", without)
    assert result.returncode != 0 and f"{last}" in result.stderr and "Werror=switch" in result.stderr
    math = (native / "demo" / "activations.cpp").read_text()
    assert compiles("activations.cpp", math).returncode == 0
    kernel = "log"  # every math op's kernel is math_kernels::<name>; drop one
    dropped = math.replace(f"inline float {kernel}(float v)", "inline float unused(float v)")
    result = compiles("activations.cpp", dropped)
    assert result.returncode != 0 and f"'{kernel}' is not a member of 'liteexport::demo_backend::math_kernels'" \
        in result.stderr.replace("\u2018", "'").replace("\u2019", "'"), result.stderr[-1000:]


# --- the op traits of the spec (schema/demo_ops.toml): what is generated, and what each "own" needs ---

def _named(rule: dict[OpCode, str], value: str) -> set[OpCode]:
    return {op for op, r in rule.items() if r == value}


def test_every_own_shape_rule_and_memory_bound_is_written_out() -> None:
    """An op whose spec says shape = "own" or memory = "own" needs its row in compiler/shapes.py
    OWN_RULES or runtime_py/backends/demo/memory.py OWN_BOUNDS; the others come from the spec and
    must not have one (it would never be read)."""
    from bundle_format._generated.demo_traits import MEMORY_RULE, SHAPE_RULE
    from runtime_py.backends.demo import memory

    assert set(SHAPE_RULE) == set(MEMORY_RULE) == ALL
    assert sorted(op.name for op in _named(SHAPE_RULE, "own") ^ set(shapes.OWN_RULES)) == [], \
        "shape = \"own\" in the spec <-> a row in compiler/shapes.py OWN_RULES"
    assert sorted(op.name for op in _named(MEMORY_RULE, "own") ^ set(memory.OWN_BOUNDS)) == [], \
        "memory = \"own\" in the spec <-> a row in runtime_py/backends/demo/memory.py OWN_BOUNDS"


def test_semantics_are_the_oracle_or_written_out_never_both() -> None:
    """Ops without attributes whose shape is same or broadcast compute their spec oracle on their
    operands (generated); every other op has its row in compiler/semantics.py OWN_SEMANTICS."""
    generated = set(semantics._CALLS)  # noqa: SLF001 - the generated part is what is checked
    assert sorted(op.name for op in generated & set(semantics.OWN_SEMANTICS)) == []
    assert _missing(generated | set(semantics.OWN_SEMANTICS)) == []
    for op in generated:
        assert callable(semantics.oracle(op)), op


def test_the_spec_lowerings_are_the_only_ones_for_their_aten_names() -> None:
    """The plain rows come from the spec's `aten`: no op module writes its own row for those names
    (symbolic_ops wraps add/sub/mul for sizes, on top of them); every `inplace` name and every
    `quantized` name is an ATen op the compiler lowers."""
    from bundle_format._generated import demo_traits
    from liteexport.compiler import lowerings, math_ops, ops, selection_ops, shape_ops, typed_ops

    hand = {**math_ops.LOWERINGS, **shape_ops.LOWERINGS, **typed_ops.LOWERINGS, **selection_ops.LOWERINGS}
    assert sorted(set(demo_traits.PLAIN_LOWERINGS) & set(hand)) == []
    assert set(demo_traits.PLAIN_LOWERINGS) <= set(ops.LOWERINGS)
    assert sorted(k for k in demo_traits.INPLACE if k not in lowerings.LOWERINGS) == []
    assert set(lowerings.INPLACE) == {f"{k}_" for k in demo_traits.INPLACE}
    quantized = (demo_traits.QUANTIZED_KEEPS_GRID | demo_traits.QUANTIZED_REQUANTIZES
                 | set(demo_traits.QUANTIZED_FIXED_GRID))
    walked = {"aten::len"}  # a list's length: the walk folds it, no lowering
    assert sorted(quantized - set(lowerings.LOWERINGS) - walked) == []


def test_the_generator_refuses_a_spec_entry_without_its_traits(tmp_path: Path) -> None:
    """family, shape and memory are required; a math op names its C++ kernel; a view is an alias."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import demo_ops_codegen as codegen
    finally:
        sys.path.pop(0)
    spec_path, fbs_path = ROOT / "schema" / "demo_ops.toml", ROOT / "schema" / "demo_program.fbs"
    head = f'NEW_OP = {{ code = {len(OpCode)}, fbs = "NewOp", inputs = [1, 1], '
    for traits, error in (('shape = "same", memory = "largest_input"', "family"),
                          ('family = "math", shape = "same", memory = "largest_input"', "kernel"),
                          ('family = "own", shape = "same", memory = "own", values = "view"', "alias"),
                          ('family = "own", shape = "elementwise", memory = "own"', "shape")):
        bad = tmp_path / "bad.toml"
        bad.write_text(spec_path.read_text() + head + traits + ', doc = "new" }\n')
        with pytest.raises(codegen.SpecError, match=error):
            codegen.load(bad, fbs_path)
