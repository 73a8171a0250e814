"""How TorchScript prints a value inside ``"{}".format(...)`` (c10 IValue's ``operator<<``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime_py.values import ScriptObject


def format_double(d: float) -> str:
    """c10's double printing: integral values as ``2.``, others with 17 significant digits."""
    if math.isfinite(d) and abs(d) < 1e10 and d == int(d):
        i = int(d)
        return f"-{i}." if i == 0 and math.copysign(1.0, d) < 0 else f"{i}."
    return f"{d:.17g}"


def format_ivalue(value: Any) -> str:
    """``value`` as TorchScript's string formatting shows it (strings unquoted, even nested)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + ", ".join(format_ivalue(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(format_ivalue(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{format_ivalue(k)}: {format_ivalue(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.ndarray):
        return np.array2string(value)  # torch prints ATen's tensor layout; the numbers are what matter
    if isinstance(value, ScriptObject):
        return f"<{value.type_name} object>"
    return str(value)
