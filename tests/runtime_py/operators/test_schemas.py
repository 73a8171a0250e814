"""Every registered operator exists in torch with exactly the schema we registered, and our
schema parser reads torch's schemas the way torch does (arguments, defaults, returns)."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

from runtime_py.operators import OPERATORS, is_supported  # noqa: E402
from runtime_py.operators.schema import parse_schema  # noqa: E402


def _torch_schema(key: str) -> torch._C.FunctionSchema | None:
    name, _, overload = key.partition(".")
    for schema in torch._C._jit_get_schemas_for_operator(name):
        if schema.overload_name == overload:
            return schema
    return None


@pytest.mark.parametrize("key", sorted(OPERATORS))
def test_schema_matches_torch(key: str) -> None:
    schema = _torch_schema(key)
    assert schema is not None, f"torch has no operator {key}"
    assert str(schema) == OPERATORS[key].schema.text


@pytest.mark.parametrize("key", sorted(OPERATORS))
def test_parser_agrees_with_torch(key: str) -> None:
    schema = _torch_schema(key)
    ours = OPERATORS[key].schema
    assert [a.name for a in ours.arguments] == [a.name for a in schema.arguments]
    assert [a.kwarg_only for a in ours.arguments] == [a.kwarg_only for a in schema.arguments]
    for mine, theirs in zip(ours.arguments, schema.arguments, strict=True):
        assert mine.has_default == bool(re.search(rf" {mine.name}=", str(schema))), mine.name
        if theirs.default_value is not None and not isinstance(theirs.default_value, torch.dtype | torch.device):
            expected = theirs.default_value
            if isinstance(expected, torch.memory_format):
                continue
            if isinstance(mine.default, list) and not isinstance(expected, list):
                expected = [expected] * len(mine.default)  # "int[2] padding=0"
            assert mine.default == expected, mine.name
    if not ours.varret:
        assert len(ours.returns) == len(schema.returns)


def test_is_supported() -> None:
    assert is_supported("aten::add", "Tensor")
    assert is_supported("prim::unchecked_cast", "")
    assert not is_supported("aten::add", "no_such_overload")


def test_parse_schema_details() -> None:
    s = parse_schema('aten::strip(str self, str chars=" \\n\\t\\f\\v") -> str')
    assert s.arguments[1].default == " \n\t\f\v"
    s = parse_schema("aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
                     "int[2] dilation=1, bool ceil_mode=False) -> Tensor")
    assert [a.default for a in s.arguments[2:]] == [[], [0, 0], [1, 1], False]
    s = parse_schema("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
    assert s.returns == ("Tensor", "Tensor") and s.key == "aten::max.dim"
    s = parse_schema("aten::format(str self, ...) -> str")
    assert s.varargs and s.returns == ("str",)
    s = parse_schema("prim::TupleUnpack(Any tup) -> ...")
    assert s.varret
    s = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert s.arguments[2].kwarg_only and s.arguments[2].default == 1
    s = parse_schema("aten::items.str(Dict(str, t) self) -> ((str, t)[])")
    assert s.returns == ("(str, t)[]",)
    s = parse_schema("aten::clear.t(t[](a!) self) -> ()")
    assert s.returns == () and s.arguments[0].type == "t[]"
