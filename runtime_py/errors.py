"""runtime_py's errors: the exception hierarchy every layer shares (bundle_format.errors, where
it lives, below runtime_py), and which failures of an operator's numpy code are about the values it
was given (the bundle's, so the user's ExecutionError) rather than a bug."""

from __future__ import annotations

import importlib

from bundle_format.errors import (
    ExecutionError,
    FormatError,
    InputError,
    InternalError,
    LiteExportError,
    UserError,
)

__all__ = ["VALUE_FAILURES", "ExecutionError", "FormatError", "InputError", "InternalError", "LiteExportError",
           "UserError", "is_value_failure"]


def _ufunc_type_error() -> type[Exception]:
    """numpy's error for "this ufunc has no loop for these dtypes" and "cannot cast" (a TypeError
    about the values' dtypes), wherever this numpy keeps it."""
    for module in ("numpy._core._exceptions", "numpy.core._exceptions"):  # numpy 2, numpy 1
        try:
            error: type[Exception] = importlib.import_module(module).UFuncTypeError
            return error
        except (ImportError, AttributeError):
            continue
    raise ImportError("numpy has no UFuncTypeError")  # pragma: no cover - every numpy >= 1.17 has


# What an operator's implementation raises about the *values* it was given (shapes that do not
# fit, a dtype numpy has no loop for, a division by zero, an overflow, a singular matrix): the
# bundle's values, so the user's ExecutionError (exit 7). LinAlgError is a ValueError.
VALUE_FAILURES = (ValueError, ArithmeticError, _ufunc_type_error())


def is_value_failure(exc: BaseException) -> bool:
    """Whether an operator's or a kernel's ``exc`` is about the values it was given: one of
    VALUE_FAILURES, one of the plain TypeErrors numpy's ufuncs raise for operands of a dtype they
    have no loop for (``ufunc 'floor' not supported for the input types``, ``numpy boolean
    subtract ... is not supported``: torch refuses those dtypes too, "not implemented for 'Bool'"),
    or numpy's IndexError for an index tensor's value out of bounds (``index 5 is out of bounds for
    axis 0 with size 3``). Those messages are numpy's own wording, checked by tests."""
    if isinstance(exc, VALUE_FAILURES):
        return True
    message = str(exc)
    if type(exc) is IndexError:  # numpy's bounds check of an index tensor's values
        return " is out of bounds for axis " in message and message.startswith("index ")
    if type(exc) is not TypeError:
        return False
    return ((message.startswith("ufunc '") and "not supported for the input types" in message)
            or message.startswith(("numpy boolean ", "The numpy boolean ")))
