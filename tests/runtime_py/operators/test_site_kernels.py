"""Operator call sites served by the demo backend's kernels (site_kernels): a site that sees
several weights or parameter sets, or parameters that change between calls, computes what a
fresh site (nothing cached) or the same kernel in float64 computes, every time. Runs without torch."""

from __future__ import annotations

from typing import Any

import numpy as np

from bundle_format import ptmf
from runtime_py.operators import bind_operator
from runtime_py.operators.normalization import batch_norm


def _site(name: str, num_args: int) -> Any:
    kernel = bind_operator(ptmf.Operator(name, "", num_args), "f")

    def call(*args: Any) -> Any:
        stack = list(args)
        kernel(stack)
        (result,) = stack
        return result

    return call


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # as the bundle's constants are: the sites cache what they derive
    return a


def test_one_conv_site_serving_several_weights() -> None:
    rng = np.random.default_rng(0)
    conv = _site("aten::conv2d", 7)
    x = rng.standard_normal((1, 4, 9, 9)).astype(np.float32)
    weights = [_read_only(rng.standard_normal((4, c, 3, 3)).astype(np.float32)) for c in (4, 4, 1)]
    for _ in range(2):  # a second round hits every cached kernel
        for w in weights:
            groups = 4 // w.shape[1]
            ours = conv(x, w, None, [1, 1], [1, 1], [1, 1], groups)
            fresh = _site("aten::conv2d", 7)(x, w.copy(), None, [1, 1], [1, 1], [1, 1], groups)  # no cache
            np.testing.assert_array_equal(ours, fresh)
            expected = conv(x.astype(np.float64), w.astype(np.float64), None, [1, 1], [1, 1], [1, 1], groups)
            np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
            assert ours.dtype == np.float32


def test_batch_norm_site_follows_changing_parameters() -> None:
    rng = np.random.default_rng(1)
    norm = _site("aten::batch_norm", 9)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    constant = [_read_only(rng.standard_normal(3).astype(np.float32)) for _ in range(3)]
    constant.append(_read_only(rng.uniform(0.5, 2.0, 3).astype(np.float32)))
    writable = [rng.standard_normal(3).astype(np.float32) for _ in range(3)] + [np.ones(3, np.float32)]
    for params in (constant, writable, constant):
        for _ in range(2):
            ours = norm(x, *params, False, 0.1, 1e-5, False)
            expected = batch_norm(x.astype(np.float64), *params, False, 0.1, 1e-5, False)
            np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
            writable[2] += 1.0  # a running mean updated in place between calls: no stale fold


def test_layer_norm_site_follows_changing_shapes_and_parameters() -> None:
    import pytest

    from runtime_py.errors import ExecutionError
    from runtime_py.operators.normalization import layer_norm

    rng = np.random.default_rng(2)
    norm = _site("aten::layer_norm", 6)
    weight, bias = (_read_only(rng.standard_normal(8).astype(np.float32)) for _ in range(2))
    writable = rng.standard_normal(8).astype(np.float32)
    calls = [((1, 8), [8], weight, bias, 1e-5), ((1, 8), [8], weight, bias, 1e-5), ((3, 8), [8], weight, bias, 1e-5),
             ((1, 8), [8], weight, bias, 0.5), ((1, 8), [8], bias, weight, 1e-5), ((1, 8), [8], None, None, 1e-5),
             ((1, 8), [8], writable, None, 1e-5), ((2, 4, 8), [4, 8], None, None, 1e-5),
             ((1, 8), [8], weight, bias, 1e-5)]
    for _ in range(2):
        for shape, normalized, w, b, eps in calls:
            x = rng.standard_normal(shape).astype(np.float32)
            ours = norm(x, normalized, w, b, eps, True)
            expected = layer_norm(x.astype(np.float64), normalized, w, b, eps)
            np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
            assert ours.dtype == np.float32
            writable += 1.0  # a weight changed in place between calls: the next call uses its values
    with pytest.raises(ExecutionError, match=r"given normalized_shape=\[8\], expected input with shape \[\*, 8\]"):
        norm(np.ones((1, 7), np.float32), [8], weight, bias, 1e-5, True)
