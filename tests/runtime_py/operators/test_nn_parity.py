"""nn kernels (convolution, pooling, normalization, interpolation, recurrent, attention)
equal torch's on random inputs, with the arguments torch.nn modules pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tests.runtime_py.operators.oracle import check, ours  # noqa: E402

R = np.random.default_rng(1)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


def pos(*shape: int) -> np.ndarray:
    return (R.random(shape) + 0.5).astype(np.float32)


CASES: list[tuple[str, Callable[[], tuple[Any, ...]]]] = [
    ("aten::conv1d", lambda: (f32(2, 3, 9), f32(4, 3, 3), f32(4))),
    ("aten::conv1d", lambda: (f32(3, 9), f32(4, 3, 3), None, [2], [1], [2])),  # unbatched
    ("aten::conv2d", lambda: (f32(2, 3, 7, 8), f32(4, 3, 3, 3), f32(4), [1, 1], [1, 1])),
    ("aten::conv2d", lambda: (f32(1, 4, 9, 9), f32(6, 2, 3, 2), f32(6), [2, 1], [1, 0], [2, 1], 2)),
    ("aten::conv2d", lambda: (f32(1, 4, 6, 6), f32(4, 1, 3, 3), None, [1, 1], [1, 1], [1, 1], 4)),  # depthwise
    ("aten::conv2d.padding", lambda: (f32(1, 3, 6, 7), f32(2, 3, 4, 3), f32(2), [1, 1], "same")),
    ("aten::conv2d.padding", lambda: (f32(1, 3, 6, 7), f32(2, 3, 3, 3), f32(2), [1, 1], "valid")),
    ("aten::conv3d", lambda: (f32(1, 2, 4, 5, 5), f32(3, 2, 2, 3, 3), f32(3))),
    ("aten::conv_transpose2d.input", lambda: (f32(2, 3, 4, 5), f32(3, 2, 3, 3), f32(2), [2, 2])),
    ("aten::conv_transpose2d.input", lambda: (f32(1, 4, 4, 5), f32(4, 3, 3, 2), f32(6), [2, 1], [1, 0], [1, 0], 2,
                                              [1, 2])),
    ("aten::conv_transpose1d", lambda: (f32(2, 3, 6), f32(3, 2, 4), None, [3], [1], [2])),
    ("aten::max_pool2d", lambda: (f32(2, 3, 8, 8), [2, 2])),
    ("aten::max_pool2d", lambda: (f32(2, 3, 9, 7), [3, 3], [2, 2], [1, 1], [1, 1], True)),
    ("aten::max_pool2d", lambda: (f32(3, 9, 7), [3, 2], [2, 1], [0, 1], [2, 1])),
    ("aten::max_pool1d", lambda: (f32(2, 3, 9), [3], [2], [1], [1], True)),
    ("aten::max_pool2d_with_indices", lambda: (f32(1, 2, 7, 7), [3, 3], [2, 2], [1, 1])),
    ("aten::avg_pool2d", lambda: (f32(2, 3, 8, 8), [2, 2])),
    ("aten::avg_pool2d", lambda: (f32(2, 3, 9, 7), [3, 3], [2, 2], [1, 1], True, True)),
    ("aten::avg_pool2d", lambda: (f32(2, 3, 9, 7), [3, 3], [2, 2], [1, 1], True, False)),
    ("aten::avg_pool2d", lambda: (f32(2, 3, 9, 7), [3, 2], [2, 2], [1, 0], False, True, 4)),
    ("aten::avg_pool1d", lambda: (f32(2, 3, 9), [3], [2], [1], True, False)),
    ("aten::adaptive_avg_pool2d", lambda: (f32(2, 3, 7, 9), [3, 4])),
    ("aten::adaptive_avg_pool2d", lambda: (f32(2, 3, 7, 9), [1, 1])),
    ("aten::adaptive_avg_pool1d", lambda: (f32(2, 3, 10), [4])),
    ("aten::adaptive_max_pool2d", lambda: (f32(2, 3, 7, 9), [3, 4])),
    ("aten::batch_norm", lambda: (f32(4, 3), pos(3), f32(3), f32(3), pos(3), False, 0.1, 1e-5, True)),
    ("aten::batch_norm", lambda: (f32(2, 3, 4, 5), pos(3), f32(3), f32(3), pos(3), False, 0.1, 1e-3, True)),
    ("aten::batch_norm", lambda: (f32(2, 3, 4, 5), None, None, f32(3), pos(3), False, 0.1, 1e-5, True)),
    ("aten::layer_norm", lambda: (f32(2, 5, 6), [6], pos(6), f32(6))),
    ("aten::layer_norm", lambda: (f32(2, 5, 6), [5, 6])),
    ("aten::group_norm", lambda: (f32(2, 6, 4, 3), 3, pos(6), f32(6))),
    ("aten::group_norm", lambda: (f32(2, 6, 5), 2)),
    ("aten::instance_norm", lambda: (f32(2, 3, 4, 5), pos(3), f32(3), None, None, True, 0.1, 1e-5, True)),
    ("aten::embedding", lambda: (f32(10, 4), np.array([[1, 2], [9, 0]]))),
    ("aten::embedding", lambda: (f32(10, 4), np.array([3, 3]), 3)),
    ("aten::dropout", lambda: (f32(3, 4), 0.5, False)),
    ("aten::feature_dropout", lambda: (f32(3, 4), 0.5, False)),
    ("aten::upsample_nearest2d.vec", lambda: (f32(1, 2, 3, 4), None, [2.0, 2.0])),
    ("aten::upsample_nearest2d.vec", lambda: (f32(1, 2, 5, 4), [3, 7], None)),
    ("aten::upsample_nearest2d.vec", lambda: (f32(1, 2, 5, 4), None, [1.5, 0.7])),
    ("aten::_upsample_nearest_exact2d.vec", lambda: (f32(1, 2, 5, 4), [3, 7], None)),
    ("aten::upsample_nearest1d.vec", lambda: (f32(1, 2, 5), None, [2.5])),
    ("aten::upsample_nearest3d.vec", lambda: (f32(1, 1, 2, 3, 4), [3, 4, 5], None)),
    ("aten::upsample_bilinear2d.vec", lambda: (f32(1, 2, 3, 4), None, False, [2.0, 2.0])),
    ("aten::upsample_bilinear2d.vec", lambda: (f32(1, 2, 3, 4), [5, 7], True, None)),
    ("aten::upsample_bilinear2d.vec", lambda: (f32(1, 2, 6, 8), [4, 3], False, None)),
    ("aten::upsample_bilinear2d.vec", lambda: (f32(1, 2, 3, 4), None, True, [1.7, 2.3])),
    ("aten::upsample_linear1d.vec", lambda: (f32(1, 2, 5), None, False, [1.5])),
    ("aten::upsample_trilinear3d.vec", lambda: (f32(1, 1, 2, 3, 4), [3, 5, 6], False, None)),
    ("aten::upsample_bicubic2d.vec", lambda: (f32(1, 2, 4, 5), None, False, [2.0, 1.5])),
    ("aten::upsample_bicubic2d.vec", lambda: (f32(1, 2, 4, 5), [7, 3], True, None)),
    ("aten::_upsample_bilinear2d_aa.vec", lambda: (f32(1, 2, 9, 10), [4, 3], False, None)),
    ("aten::_upsample_bilinear2d_aa.vec", lambda: (f32(1, 2, 4, 5), [8, 9], False, None)),
    ("aten::_upsample_bicubic2d_aa.vec", lambda: (f32(1, 2, 9, 10), [4, 6], False, None)),
    ("aten::_upsample_lanczos2d_aa.vec", lambda: (f32(1, 2, 9, 10), [4, 6], False, None)),
    ("aten::scaled_dot_product_attention", lambda: (f32(2, 2, 5, 4), f32(2, 2, 6, 4), f32(2, 2, 6, 3))),
    ("aten::scaled_dot_product_attention", lambda: (f32(2, 5, 4), f32(2, 5, 4), f32(2, 5, 4), None, 0.0, True)),
    ("aten::scaled_dot_product_attention", lambda: (f32(2, 5, 4), f32(2, 6, 4), f32(2, 6, 4),
                                                    R.random((5, 6)) > 0.3, 0.0, False, 0.3)),
    ("aten::scaled_dot_product_attention", lambda: (f32(2, 5, 4), f32(2, 6, 4), f32(2, 6, 4), f32(5, 6))),
    # one kernel per op: 1-D windows run the 2-D kernels with a unit height, 3-D ones loop over
    # the depth taps, other float dtypes run the same kernels
    ("aten::conv3d", lambda: (f32(2, 4, 5, 6, 7), f32(6, 2, 3, 2, 3), f32(6), [2, 1, 2], [1, 0, 1], [1, 2, 1], 2)),
    ("aten::conv3d", lambda: (f32(2, 5, 6, 7), f32(3, 2, 2, 3, 3), None)),  # unbatched
    ("aten::conv3d.padding", lambda: (f32(1, 2, 5, 6, 5), f32(3, 2, 2, 3, 4), f32(3), [1, 1, 1], "same")),
    ("aten::conv1d.padding", lambda: (f32(2, 3, 9), f32(4, 3, 4), f32(4), [1], "same", [2])),
    ("aten::conv1d", lambda: (f32(2, 4, 9).astype(np.float64), f32(4, 1, 3).astype(np.float64), None, [1], [1],
                              [1], 4)),  # depthwise, float64
    ("aten::conv2d", lambda: (f32(2, 3, 7, 8).astype(np.float64), f32(4, 3, 3, 3).astype(np.float64),
                              f32(4).astype(np.float64), [1, 2], [1, 0])),
    ("aten::max_pool3d", lambda: (f32(2, 3, 7, 6, 5), [3, 2, 2], [2, 1, 2], [1, 1, 0], [1, 2, 1], True)),
    ("aten::max_pool3d", lambda: (f32(3, 4, 4, 4), [2, 2, 2])),  # unbatched
    ("aten::max_pool2d", lambda: (f32(2, 3, 8, 8).astype(np.float64), [3, 3], [2, 2], [1, 1])),
    ("aten::max_pool1d", lambda: (f32(3, 9), [2])),  # unbatched
    ("aten::avg_pool3d", lambda: (f32(2, 3, 7, 6, 5), [3, 2, 3], [2, 1, 2], [1, 1, 1], True, True)),
    ("aten::avg_pool3d", lambda: (f32(2, 3, 7, 6, 5), [3, 2, 3], [2, 2, 2], [1, 1, 1], True, False)),
    ("aten::avg_pool3d", lambda: (f32(3, 4, 5, 6), [2, 2, 2], [], [1, 0, 1], False, True, 3)),
    ("aten::avg_pool2d", lambda: (f32(2, 3, 9, 7).astype(np.float64), [3, 3], [2, 2], [1, 1], True, False)),
    ("aten::adaptive_avg_pool3d", lambda: (f32(2, 3, 7, 6, 5), [3, 4, 2])),
    ("aten::adaptive_avg_pool3d", lambda: (f32(3, 4, 6, 5), [1, 1, 1])),
    ("aten::adaptive_avg_pool2d", lambda: (f32(2, 3, 7, 9).astype(np.float64), [3, 4])),
    ("aten::cosine_similarity", lambda: (f32(3, 4), f32(3, 4))),
    ("aten::pairwise_distance", lambda: (f32(3, 4), f32(3, 4))),
]


@pytest.mark.parametrize(("key", "make"), CASES, ids=[f"{i}-{k}" for i, (k, _) in enumerate(CASES)])
def test_nn_parity(key: str, make: Callable[[], tuple[Any, ...]]) -> None:
    check(key, *make())


def _flat_weights(module: Any) -> list[np.ndarray]:
    return [w.detach().numpy() for w in module._flat_weights]


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize(("layers", "bidirectional", "batch_first", "bias"),
                         [(1, False, False, True), (2, True, True, True), (2, False, False, False)])
def test_recurrent(cell: str, layers: int, bidirectional: bool, batch_first: bool, bias: bool) -> None:
    torch.manual_seed(0)
    module = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(4, 5, layers, bias=bias, batch_first=batch_first,
                                                                bidirectional=bidirectional).eval()
    x = torch.randn(3, 6, 4)
    d = 2 if bidirectional else 1
    h0 = torch.randn(layers * d, 3 if batch_first else 6, 5)
    with torch.no_grad():
        if cell == "lstm":
            c0 = torch.randn_like(h0)
            expected = module(x, (h0, c0))
            mine = ours("aten::lstm.input", x.numpy(), [h0.numpy(), c0.numpy()], _flat_weights(module), bias, layers,
                        0.0, False, bidirectional, batch_first)
            expected_flat = [expected[0], *expected[1]]
        else:
            expected = module(x, h0)
            mine = ours("aten::gru.input", x.numpy(), h0.numpy(), _flat_weights(module), bias, layers, 0.0, False,
                        bidirectional, batch_first)
            expected_flat = list(expected)
    for m, e in zip(mine, expected_flat, strict=True):
        np.testing.assert_allclose(m, e.numpy(), rtol=1e-4, atol=1e-5)


def test_lstm_with_projection() -> None:
    torch.manual_seed(0)
    module = torch.nn.LSTM(4, 6, 1, proj_size=3).eval()
    x, h0, c0 = torch.randn(5, 2, 4), torch.randn(1, 2, 3), torch.randn(1, 2, 6)
    with torch.no_grad():
        out, (h, c) = module(x, (h0, c0))
    mine = ours("aten::lstm.input", x.numpy(), [h0.numpy(), c0.numpy()], _flat_weights(module), True, 1, 0.0, False,
                False, False)
    for m, e in zip(mine, [out, h, c], strict=True):
        np.testing.assert_allclose(m, e.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mask_kind", [None, "key_padding", "attn"])
def test_native_multi_head_attention(mask_kind: str | None) -> None:
    torch.manual_seed(0)
    q, k, v = f32(2, 5, 8), f32(2, 5, 8), f32(2, 5, 8)
    w, b, pw, pb = f32(24, 8), f32(24), f32(8, 8), f32(8)
    mask, mask_type = None, None
    if mask_kind == "key_padding":
        mask, mask_type = np.array([[False] * 4 + [True], [False] * 5]), 1
    elif mask_kind == "attn":
        mask, mask_type = R.random((5, 5)) > 0.7, 0
    for need_weights, average in ((True, True), (True, False), (False, True)):
        check("aten::_native_multi_head_attention", q, k, v, 8, 2, w, b, pw, pb, mask, need_weights, average,
              mask_type)


@pytest.mark.parametrize(("norm_first", "use_gelu"), [(False, False), (True, True)])
def test_transformer_encoder_layer_fwd(norm_first: bool, use_gelu: bool) -> None:
    src = f32(2, 5, 8)
    args = (src, 8, 2, f32(24, 8), f32(24), f32(8, 8), f32(8), use_gelu, norm_first, 1e-5, pos(8), f32(8), pos(8),
            f32(8), f32(16, 8), f32(16), f32(8, 16), f32(8))
    check("aten::_transformer_encoder_layer_fwd", *args)
    padding = np.array([[False] * 4 + [True], [False] * 5])
    check("aten::_transformer_encoder_layer_fwd", *args, padding, 1)


def test_multihead_attention_module_slow_path() -> None:
    """nn.MultiheadAttention's own math (in_proj, baddbmm/bmm, softmax) matches our sdpa."""
    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        expected, weights = m(x, x, x)
    out, w = ours("aten::_native_multi_head_attention", x.numpy(), x.numpy(), x.numpy(), 8, 2,
                  m.in_proj_weight.detach().numpy(), m.in_proj_bias.detach().numpy(),
                  m.out_proj.weight.detach().numpy(), m.out_proj.bias.detach().numpy(), None, True, True, None)
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w, weights.numpy(), rtol=1e-4, atol=1e-5)
