"""Recurrent layers: aten::lstm.input and aten::gru.input with torch's flat weight list
(per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr for LSTM projections])."""

from __future__ import annotations

import numpy as np

from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _layer_params(params: list[np.ndarray], num_layers: int, directions: int, has_biases: bool,
                  name: str) -> tuple[list[list[np.ndarray | None]], bool]:
    """Split the flat list into one [w_ih, w_hh, b_ih, b_hh, w_hr] per (layer, direction)."""
    per = len(params) // (num_layers * directions) if num_layers * directions else 0
    base = 4 if has_biases else 2
    if per * num_layers * directions != len(params) or per not in (base, base + 1):
        raise ExecutionError(f"{name}: got {len(params)} weights for {num_layers} layers x {directions} directions")
    groups = []
    for i in range(num_layers * directions):
        chunk = params[i * per:(i + 1) * per]
        biases = chunk[2:4] if has_biases else [None, None]
        groups.append([chunk[0], chunk[1], *biases, chunk[base] if per > base else None])
    return groups, per > base


def _affine(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    y = x @ w.T.astype(np.float64)
    return y if b is None else y + b


def _run(x: np.ndarray, hx: list[np.ndarray], params: list[np.ndarray], has_biases: bool, num_layers: int,
         train: bool, dropout: float, bidirectional: bool, batch_first: bool, cell: str) -> tuple[np.ndarray, ...]:
    if train and dropout > 0 and num_layers > 1:
        raise ExecutionError(f"{cell}: dropout between layers in training mode is not supported by runtime_py")
    if x.ndim != 3:
        raise ExecutionError(f"{cell}: expected a 3-D input, got shape {list(x.shape)}")
    directions = 2 if bidirectional else 1
    groups, _ = _layer_params(params, num_layers, directions, has_biases, cell)
    seq = np.swapaxes(x, 0, 1) if batch_first else x  # (T, B, F)
    layer_input = seq.astype(np.float64)
    h_out, c_out = [], []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            w_ih, w_hh, b_ih, b_hh, w_hr = groups[index]
            h = hx[0][index].astype(np.float64)
            c = hx[1][index].astype(np.float64) if cell == "lstm" else None
            gates_x = _affine(layer_input, w_ih, b_ih)  # (T, B, G*H), all steps at once
            steps = range(len(layer_input) - 1, -1, -1) if direction else range(len(layer_input))
            out = [None] * len(layer_input)
            for t in steps:
                gh = _affine(h, w_hh, b_hh)
                if cell == "lstm":
                    i, f, g, o = np.split(gates_x[t] + gh, 4, axis=-1)
                    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
                    h = _sigmoid(o) * np.tanh(c)
                    if w_hr is not None:
                        h = h @ w_hr.T.astype(np.float64)
                else:
                    xr, xz, xn = np.split(gates_x[t], 3, axis=-1)
                    hr, hz, hn = np.split(gh, 3, axis=-1)
                    r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
                    n = np.tanh(xn + r * hn)
                    h = (1 - z) * n + z * h
                out[t] = h
            outputs.append(np.stack(out) if out else np.zeros((0,) + h.shape))
            h_out.append(h)
            c_out.append(c)
        layer_input = np.concatenate(outputs, axis=-1)
    output = np.swapaxes(layer_input, 0, 1) if batch_first else layer_input
    dtype = x.dtype
    result = [output.astype(dtype), np.stack(h_out).astype(dtype)]
    if cell == "lstm":
        result.append(np.stack(c_out).astype(dtype))
    return tuple(result)


@op("aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)")
def lstm(x: np.ndarray, hx: list[np.ndarray], params: list[np.ndarray], has_biases: bool, num_layers: int,
         dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple[np.ndarray, ...]:
    return _run(x, hx, params, has_biases, num_layers, train, dropout, bidirectional, batch_first, "lstm")


@op("aten::gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)")
def gru(x: np.ndarray, hx: np.ndarray, params: list[np.ndarray], has_biases: bool, num_layers: int,
        dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple[np.ndarray, ...]:
    return _run(x, [hx], params, has_biases, num_layers, train, dropout, bidirectional, batch_first, "gru")
