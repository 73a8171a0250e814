"""The attribute tables of schema/demo_ops.toml: a new field reaches every language through the
generator, and a broken constraint is refused with the same code and fields by runtime_py and
by the C++ decoder (native_format/decoder/demo_program.h), both looping over the same rows."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bundle_format import program as p
from bundle_format import program_codec
from bundle_format.program import Attributes, OpCode
from bundle_format.program_codec import decode_program, encode_program
from runtime_py.errors import FormatError
from tests.runtime_py.backends.demo_backend_helpers import one_op_program, plan_of

ROOT = Path(__file__).resolve().parent.parent


def _codegen():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import demo_ops_codegen
    finally:
        sys.path.pop(0)
    return demo_ops_codegen


def test_a_new_attribute_field_reaches_every_language(tmp_path: Path) -> None:
    codegen = _codegen()
    spec_text = (ROOT / "schema" / "demo_ops.toml").read_text()
    slice_step = '  { name = "step", type = "int64", default = 1, doc = "> 0" },\n'
    assert slice_step in spec_text
    added = tmp_path / "demo_ops.toml"
    new_field = '  { name = "wrap", type = "bool", default = false },\n'
    added.write_text(spec_text.replace(slice_step, slice_step + new_field))
    spec = codegen.load(added, ROOT / "schema" / "demo_program.fbs")
    fbs = codegen.fbs_with_opcodes((ROOT / "schema" / "demo_program.fbs").read_text(), spec)
    slice_table = fbs[fbs.index("table Slice {"):]
    assert slice_table[: slice_table.index("}")].rstrip().endswith("wrap:bool;")
    python = codegen.python_attrs(spec)
    module_path = tmp_path / "demo_attrs_new.py"
    module_path.write_text(python)
    loaded = importlib.util.spec_from_file_location("demo_attrs_new", module_path)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    sys.modules["demo_attrs_new"] = module  # dataclasses resolve their module by name
    try:
        loaded.loader.exec_module(module)
    finally:
        del sys.modules["demo_attrs_new"]
    assert module.SliceAttrs(axis=0).wrap is False
    (table,) = [t for t in module.TABLES if t.name == "Slice"]
    assert (table.fields[-1].name, table.fields[-1].kind, table.fields[-1].slot, table.num_slots) == ("wrap", "bool",
                                                                                                        4, 5)
    cpp = codegen.cpp_attrs(spec)
    assert "  bool wrap{false};" in cpp
    assert '{"wrap", Wire::Bool, 12, 0, nullptr, &SliceAttrs::wrap}' in cpp


# (case, op, attributes, inputs): each breaks one constraint row of schema/demo_ops.toml
BROKEN: list[tuple[str, OpCode, Attributes, int]] = [
    ("conv-stride", OpCode.CONV2D, p.Conv2dAttrs(stride=(0, 1)), 2),
    ("conv-groups", OpCode.CONV2D, p.Conv2dAttrs(groups=0), 2),
    ("pool-half", OpCode.MAX_POOL2D, p.Pool2dAttrs(kernel=(2, 2), stride=(1, 1), padding=(2, 0)), 1),
    ("avg-dilation", OpCode.AVG_POOL2D, p.Pool2dAttrs(kernel=(2, 2), stride=(1, 1), dilation=(2, 2)), 1),
    ("avg-divisor", OpCode.AVG_POOL2D, p.Pool2dAttrs(kernel=(2, 2), stride=(1, 1), divisor_override=-3), 1),
    ("mul-alpha", OpCode.MUL, p.BinaryAttrs(alpha=2.5), 2),
    ("scalar-two-inputs", OpCode.ADD, p.BinaryAttrs(scalar=1.0), 2),
    ("clamp-unbounded", OpCode.CLAMP, p.ClampAttrs(min=None, max=None), 1),
    ("reduce-repeat", OpCode.SUM, p.ReduceAttrs(axes=(1, -2, 1)), 1),
    ("slice-step", OpCode.SLICE, p.SliceAttrs(axis=0, step=0), 1),
    ("reshape-two-unknown", OpCode.RESHAPE, p.ShapeAttrs(dims=(-1, 2, -1)), 1),
    ("expand-negative", OpCode.EXPAND, p.ShapeAttrs(dims=(2, -3)), 1),
    ("adaptive-zero", OpCode.ADAPTIVE_AVG_POOL2D, p.ShapeAttrs(dims=(0, 2)), 1),
    ("permutation", OpCode.TRANSPOSE, p.PermuteAttrs(perm=(0, 2)), 1),
    ("fill-lengths", OpCode.FULL, p.FillAttrs(dims=(2, 0), axes=(-1,)), 2),
    ("fill-negative-static", OpCode.FULL, p.FillAttrs(dims=(2, -1), axes=(-1, -1)), 2),
    ("fill-axis", OpCode.FULL, p.FillAttrs(dims=(0,), axes=(-2,)), 2),
]

_DRIVER = r"""
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>
#include "demo_program.h"
int main(int argc, char** argv) {
  using namespace liteexport;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      demo_program::decode_program(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 0,
                                   [](size_t) { return std::string(); });
      std::printf("ok\n");
    } catch (const demo_errors::ProgramError& e) {
      std::printf("%s", demo_errors::code_name(e.code));
      for (const auto& [key, value] : e.fields) std::printf("|%s=%s", key.c_str(), value.c_str());
      std::printf("\n");
    }
  }
}
"""


def _python_error(data: bytes) -> str:
    with pytest.raises(FormatError) as info:
        plan_of(decode_program(data))
    fields = "".join(f"|{key}={value}" for key, value in info.value.fields.items())
    return f"{info.value.code}{fields}"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to build the C++ decoder")
def test_a_broken_constraint_is_refused_alike_in_python_and_cpp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files, expected = [], []
    for case, op, attrs, n_inputs in BROKEN:
        data = encode_program(one_op_program(op, attrs, [(2, 3, 4, 5)] * n_inputs))
        expected.append(_python_error(data))
        assert expected[-1].startswith("INVALID_ATTRIBUTES|problem="), case
        files.append(tmp_path / f"{case}.bin")
        files[-1].write_bytes(data)
    # a decoder rule (a code of its own): the encoder refuses to write it, so write it anyway
    monkeypatch.setattr(program_codec, "_coded_problem", lambda op, attrs: (None, ""))
    data = encode_program(one_op_program(OpCode.ADAPTIVE_AVG_POOL2D, p.ShapeAttrs(dims=(2, 2, 2)), [(2, 3, 4)]))
    monkeypatch.undo()
    with pytest.raises(FormatError) as info:
        decode_program(data)
    assert (info.value.code, info.value.fields) == ("OUTPUT_SIZE_LENGTH", {"op": "ADAPTIVE_AVG_POOL2D", "found": "3"})
    expected.append("OUTPUT_SIZE_LENGTH|op=ADAPTIVE_AVG_POOL2D|found=3")
    files.append(tmp_path / "adaptive-length.bin")
    files[-1].write_bytes(data)

    source = tmp_path / "driver.cpp"
    source.write_text(_DRIVER)
    includes = [ROOT / "native_format" / "decoder", ROOT / "native_format" / "generated", Path(sys.prefix) / "include"]
    binary = tmp_path / "driver"
    subprocess.run(["g++", "-std=c++17", "-O0", *(f"-I{d}" for d in includes), str(source), "-o", str(binary)],
                   check=True, capture_output=True, text=True)
    result = subprocess.run([str(binary), *map(str, files)], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == expected
