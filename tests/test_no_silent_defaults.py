"""No silent defaults (issue 32): an op a switch, a table or a guard does not know is a compile error
or an internal error, never the behaviour of another op.

- C++ (the native core, the shared decoder, the torch extension): every switch over an opcode enum
  either has no ``default:`` (then -Werror=switch makes a missing member a compile error) or its
  ``default:`` throws; the only exceptions are the XNNPACK guards listed in ``FAST_PATH_GUARDS``,
  whose ``default:`` means "no fast path: the op's own kernel runs" and says so.
- The builds turn on -Werror=switch: every target of our own in the native CMake project, and the
  torch extension (tests/torch_backend/test_build_inputs.py checks the flags reach its build).
- The XNNPACK fast paths static_assert the generated field count of every attribute struct they
  read, and the counts are the spec's.
- Python: the memory bound and the shape rule of an op they do not know raise InternalError.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import tomllib

from bundle_format.program import OpCode
from runtime_py.errors import InternalError

ROOT = Path(__file__).resolve().parent.parent
# the native core's home
NATIVE = ROOT / "native"
CPP_DIRS = (*(NATIVE / d for d in ("src", "tools", "tests", "fuzz")), ROOT / "android_sample" / "jni",
            ROOT / "native_format" / "decoder", ROOT / "liteexport" / "torch_backend")

# (file, function) of the switches whose default: is a fast path's fallback, with its comment
FAST_PATH_GUARDS = {("xnn.cpp", "prepare_float_step"), ("xnn_int8.cpp", "Int8Planner::read_as_int8"),
                    ("xnn_int8.cpp", "Int8Planner::prepare")}
FAST_PATH_COMMENT = "// fast path only:"
# the family switches of issue 32's list, each of which must be found with a throwing default
FAMILIES = {("activations.cpp", "make_math"), ("elementwise.cpp", "make_binary"), ("elementwise.cpp", "make_unary"),
            ("typed.cpp", "make_compare"), ("typed.cpp", "make_bitwise"), ("rounding.cpp", "make_rounding"),
            ("aten_kernels.h", "binary"), ("aten_kernels.h", "integer_binary"), ("aten_kernels.h", "compare"),
            ("selection_kernels.h", "rounding")}
_THROWS = re.compile(r"(throw\b|(\w+::)*not_in_family\s*\()")


@dataclasses.dataclass(frozen=True)
class Default:
    file: str
    function: str  # the function defining the switch (its name at the start of a line)
    line: int
    statement: str  # the default's first statement, comments and literals blanked
    comment: str  # the comment on the default's line

    @property
    def throws(self) -> bool:
        return _THROWS.match(self.statement) is not None


def _blank(text: str) -> str:
    """``text`` with comments and string/char literals replaced by spaces (newlines kept), so
    braces, colons and keywords inside them are not read as code."""
    out = list(text)
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)
    for match in pattern.finditer(text):
        for i in range(match.start(), match.end()):
            if out[i] != "\n":
                out[i] = " "
    return "".join(out)


def _closing(code: str, start: int, open_: str, close: str) -> int:
    """The index of the bracket closing the one at ``start``."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == open_:
            depth += 1
        elif code[i] == close:
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced {open_} at {start}")


_FUNCTION = re.compile(r"^[A-Za-z_][^\n;]*?\b((?:\w+::)*~?\w+)\s*\(", re.MULTILINE)
_KEYWORDS = {"if", "for", "while", "switch", "return", "case", "default", "static_assert"}


def _function_at(code: str, position: int) -> str:
    """The function a position is in: the last definition starting at column 0 before it."""
    name = "?"
    for match in _FUNCTION.finditer(code, 0, position):
        if match.group(1) not in _KEYWORDS:
            name = match.group(1)
    return name


@dataclasses.dataclass(frozen=True)
class Switch:
    file: str
    function: str
    defaults: tuple[Default, ...]  # none, or one


def op_switches(text: str, file: str, enum_members: set[str]) -> list[Switch]:
    """The switches over an opcode enum in ``text``: a label ``Op::X`` of the demo instruction set,
    or a bare member of the bytecode's enum."""
    code = _blank(text)
    lines = text.splitlines()
    bodies = []  # (start, end) of each switch's braces
    for match in re.finditer(r"\bswitch\s*\(", code):
        paren = match.end() - 1
        brace = code.index("{", _closing(code, paren, "(", ")"))
        bodies.append((brace, _closing(code, brace, "{", "}")))
    labels: dict[tuple[int, int], list[re.Match[str]]] = {body: [] for body in bodies}
    for label in re.finditer(r"\b(case\s+([^:;]|::)+|default)\s*:(?!:)", code):
        inside = [b for b in bodies if b[0] < label.start() < b[1]]
        if inside:
            labels[max(inside)].append(label)  # the innermost switch
    switches = []
    for body, found in labels.items():
        cases = [re.sub(r"\s+", "", m.group(0)[4:-1]) for m in found if m.group(0).startswith("case")]
        if not any(re.fullmatch(r"(\w+::)*Op::[A-Z0-9_]+", c) or c in enum_members for c in cases):
            continue
        defaults = []
        for m in found:
            if m.group(0).startswith("default"):
                statement = code[m.end():code.index(";", m.end()) + 1]
                line = code.count("\n", 0, m.start())
                comment = lines[line][lines[line].find("//"):] if "//" in lines[line] else ""
                defaults.append(Default(file, _function_at(code, body[0]), line + 1, " ".join(statement.split()),
                                        comment))
        switches.append(Switch(file, _function_at(code, body[0]), tuple(defaults)))
    return switches


def _bytecode_members() -> set[str]:
    header = (NATIVE / "src" / "bytecode.h").read_text()
    body = re.search(r"enum\s+Opcode\s*:\s*int\s*\{([^}]*)\}", header)
    assert body is not None
    return {re.sub(r"=.*", "", m).strip() for m in body.group(1).split(",") if m.strip()}


def _sources() -> list[Path]:
    return sorted(p for d in CPP_DIRS if d.is_dir() for p in d.rglob("*") if p.suffix in (".cpp", ".h", ".cc"))


def _scan() -> list[Switch]:
    members = _bytecode_members()
    return [s for path in _sources() for s in op_switches(path.read_text(), path.name, members)]


def test_the_scan_tells_a_silent_default_from_a_throwing_one() -> None:
    """The scanner itself, on main's old make_binary (DIV as the default) and its fixed form, with a
    nested switch over another enum and braces and colons in literals and comments."""
    silent = """
Kernel make_binary(Op op, const BinaryAttrs& a, size_t n_inputs) {
  switch (op) {
    case Op::ADD: return bind([](float p, float q) { return p + q; });  // "default: {"
    case Op::POW: {
      switch (a.mode) { case Mode::A: break; default: return x; }
      return bind(':');
    }
    default: return bind_binary([](float p, float q) { return p / q; }, a, n_inputs);
  }
}
"""
    (switch,) = op_switches(silent, "x.cpp", set())  # the inner switch is over another enum
    (default,) = switch.defaults
    assert (switch.function, default.line, default.throws) == ("make_binary", 9, False)
    fixed = silent.replace("default: return bind_binary", "case Op::DIV: return bind_binary").replace(
        "\n  }\n}", "\n    default: not_in_family(op, \"make_binary\");\n  }\n}")
    (switch,) = op_switches(fixed, "x.cpp", set())
    assert [(d.function, d.throws) for d in switch.defaults] == [("make_binary", True)]
    bytecode = "void step(Frame& f) {\n  switch (ins.op) {\n    case OP: return;\n    default: return;\n  }\n}\n"
    assert not op_switches(bytecode, "x.cpp", {"OP"})[0].defaults[0].throws


def test_every_default_of_a_switch_over_an_opcode_throws() -> None:
    switches = _scan()
    defaults = [d for s in switches for d in s.defaults]
    silent = [d for d in defaults if not d.throws and (d.file, d.function) not in FAST_PATH_GUARDS]
    assert silent == [], "a default: that stands for an op (name the case; default: not_in_family(...))"
    families = {(d.file, d.function) for d in defaults if d.throws}
    assert FAMILIES <= families, sorted(FAMILIES - families)
    # and the tables over every opcode have no default: -Werror=switch checks them
    exhaustive = {(s.file, s.function) for s in switches if not s.defaults}
    tables = {("kernels.cpp", "bind_kernel"), ("aten_kernels.h", "run_step")}
    assert tables <= exhaustive, sorted(tables - exhaustive)
    # the UnaryStep set is a generated table over every opcode (the spec's `xnnpack`), not a switch
    xnn = (NATIVE / "src" / "demo" / "xnn.cpp").read_text()
    assert "bool elementwise_unary(Op op) { return demo_ops::kXnnpackUnaryStep[" in xnn


def test_only_the_xnnpack_guards_fall_back_and_they_say_so() -> None:
    fallbacks = [d for s in _scan() for d in s.defaults if not d.throws]
    assert {(d.file, d.function) for d in fallbacks} == FAST_PATH_GUARDS
    for d in fallbacks:  # "no fast path": the op's own kernel runs; nothing is computed in its place
        assert d.comment.startswith(FAST_PATH_COMMENT), d
        assert d.statement in ("break;", "if (elementwise_unary(step.op)) step.fast = "
                               "std::make_shared<UnaryStep>(step.op, step.kernel);"), d


def test_our_native_targets_build_with_werror_switch() -> None:
    """Each target of our own in the native CMake project (not XNNPACK's) gets the warnings that
    hold -Werror=switch, and so does the JNI library."""
    cmake = (NATIVE / "CMakeLists.txt").read_text()
    flags = re.search(r'set\(LITEEXPORT_WARNINGS "([^"]*)"\)', cmake)
    assert flags is not None and "-Werror=switch" in flags.group(1)
    targets = set(re.findall(r"add_(?:library|executable)\((\$\{target\}|\w+)", cmake))
    assert {"liteexport_core", "liteexport_native_run", "liteexport_tests", "${target}"} <= targets
    for target in targets:
        options = re.findall(rf"target_compile_options\({re.escape(target)} PRIVATE ([^)]*)\)", cmake)
        assert any("${LITEEXPORT_WARNINGS}" in o for o in options), target
    jni = (ROOT / "android_sample" / "jni" / "CMakeLists.txt").read_text()
    assert re.search(r"target_compile_options\(liteexport_jni PRIVATE [^)]*-Werror=switch", jni)


# --- attribute field counts ---

def _spec_field_counts() -> dict[str, int]:
    """Attribute struct -> its fields in the spec (presence flags are wire-only, not struct fields)."""
    spec = tomllib.loads((ROOT / "schema" / "demo_ops.toml").read_text())
    return {f"{name}Attrs": sum(f["type"] != "flag" for f in table["fields"])
            for name, table in spec["attributes"].items()}


def test_the_generated_field_counts_are_the_specs() -> None:
    header = (ROOT / "native_format" / "generated" / "demo_attrs_generated.h").read_text()
    structs = re.findall(r"^struct (\w+Attrs) \{\n  static constexpr int kFieldCount = (\d+);\n((?:  [^\n]*\n)*?)\};",
                         header, re.MULTILINE)
    counts = {name: int(n) for name, n, _ in structs}
    assert counts == _spec_field_counts()
    for name, n, members in structs:  # and the count is the struct's own
        assert len(members.splitlines()) == int(n), name


def test_the_xnnpack_paths_assert_the_field_count_of_every_attribute_struct_they_read() -> None:
    """A field added to an attribute table changes its count and stops the build at each fast path
    that reads the struct (xnn*.cpp), which then is checked against the new field."""
    spec = _spec_field_counts()
    files = sorted((NATIVE / "src" / "demo").glob("xnn*.cpp"))
    assert [p.name for p in files] == ["xnn.cpp", "xnn_int8.cpp"]
    for path in files:
        text = path.read_text()
        asserted = dict(re.findall(r"static_assert\((\w+Attrs)::kFieldCount == (\d+)", text))
        read = set(re.findall(r"\b([A-Z]\w*Attrs)\b", _blank(text)))
        assert read and read <= set(asserted), (path.name, sorted(read - set(asserted)))
        assert {name: int(n) for name, n in asserted.items()} == {name: spec[name] for name in asserted}, path.name
    guards = {"xnn_max_pool_takes", "prepare_float_step", "Int8Planner::prepare", "int8_grid", "fold_clamp"}
    bodies = {}
    for path in files:
        code = path.read_text()
        for match in _FUNCTION.finditer(code):
            if match.group(1) in guards:
                brace = code.index("{", match.end())
                bodies[match.group(1)] = code[brace:_closing(code, brace, "{", "}")]
    assert set(bodies) == guards
    assert all("kFieldCount" in body for body in bodies.values())


# --- Python ---

def test_the_memory_bounds_cover_every_opcode_and_refuse_any_other() -> None:
    from runtime_py.backends.demo import memory

    assert set(memory._BOUNDS) == set(OpCode)  # noqa: SLF001 - the table itself is what is checked
    with pytest.raises(InternalError, match="opcode 999 has no memory bound"):
        memory.output_bound(999, None)


def test_a_memory_bound_never_guesses_for_an_op_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new opcode (one without a row yet) raises, where it used to get its largest input's bound."""
    from bundle_format.program import Conv2dAttrs
    from runtime_py.backends.demo import memory

    monkeypatch.delitem(memory._BOUNDS, OpCode.SIN)  # noqa: SLF001
    with pytest.raises(InternalError, match="SIN"):
        memory.output_bound(OpCode.SIN, None)
    with pytest.raises(InternalError, match="CONV2D reads Conv2dAttrs, got NoneType"):
        memory.output_bound(OpCode.CONV2D, None)
    assert memory.output_bound(OpCode.CONV2D, Conv2dAttrs()) is not None


def test_a_shape_rule_is_never_guessed_for_an_op_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    from liteexport.compiler import shapes

    monkeypatch.delitem(shapes._RULES, OpCode.SIN)  # noqa: SLF001
    with pytest.raises(InternalError, match="SIN.* has no shape rule"):
        shapes.infer_shape(OpCode.SIN, None, [])
    with pytest.raises(InternalError, match="has no shape rule"):
        shapes.infer_symbols(OpCode.SIN, None, [], (2,))


def test_a_family_of_two_refuses_a_third_op() -> None:
    """runtime_py's triu/tril and argmax/argmin kernels and the compiler's quantized add/mul name both
    members: any other op is a KeyError, not the second member."""
    from bundle_format.program import ArgReduceAttrs, DiagonalAttrs
    from runtime_py.backends.demo import selection

    with pytest.raises(KeyError):
        selection._triangle(OpCode.ARGMAX, DiagonalAttrs())  # noqa: SLF001
    with pytest.raises(KeyError):
        selection._arg_reduce(OpCode.TRIU, ArgReduceAttrs(axis=0))  # noqa: SLF001
    pytest.importorskip("torch")
    from liteexport.compiler import quantized_ops

    with pytest.raises(KeyError):
        quantized_ops._binary(OpCode.SUB, relu=False)  # noqa: SLF001
