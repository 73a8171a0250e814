"""Lowering of aten::lstm and aten::gru (see ops.py for the conventions), unrolled at compile
time over a static sequence length: per layer and direction, the input projection of every
step is one LINEAR, then each step is a LINEAR of the hidden state, SLICEs of the gates and
the cell's elementwise arithmetic, as torch's reference cells compute it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from bundle_format.program import BinaryAttrs, FusedAttrs, OpCode, PermuteAttrs
from liteexport.compiler.ops import Emitter, Lowering, tensor
from liteexport.compiler.shape_ops import _select, _unsqueeze, cat, slice_of, static_shape
from liteexport.compiler.values import TensorConst, TensorValue, Unsupported

# (x projection, h projection, state) -> new state, for one step; LSTM's state is (h, c)
Cell = Callable[[Emitter, TensorValue, TensorValue, Any], Any]


def _weights(params: Any) -> list[TensorValue]:
    """The flat weights: module attributes read as a list of plain tensors."""
    out = []
    for p in params:
        out.append(tensor(TensorConst(p.detach()) if isinstance(p, torch.Tensor) else p))
    return out


def _gate(b: Emitter, gates: TensorValue, index: int, hidden: int) -> TensorValue:
    return slice_of(b, gates, 1, index * hidden, (index + 1) * hidden)


def _binary(b: Emitter, op: OpCode, x: TensorValue, y: TensorValue) -> TensorValue:
    return b.emit(op, [x, y], BinaryAttrs())


def _lstm_cell(b: Emitter, xp: TensorValue, hp: TensorValue, state: Any) -> Any:
    _, c = state
    hidden = static_shape(xp)[-1] // 4
    gates = _binary(b, OpCode.ADD, xp, hp)
    i, f, g, o = (_gate(b, gates, k, hidden) for k in range(4))
    i, f, o = (b.emit(OpCode.SIGMOID, [v], None) for v in (i, f, o))
    g = b.emit(OpCode.TANH, [g], None)
    c = _binary(b, OpCode.ADD, _binary(b, OpCode.MUL, f, c), _binary(b, OpCode.MUL, i, g))
    h = _binary(b, OpCode.MUL, o, b.emit(OpCode.TANH, [c], None))
    return h, c


def _gru_cell(b: Emitter, xp: TensorValue, hp: TensorValue, state: Any) -> Any:
    h = state
    hidden = static_shape(xp)[-1] // 3
    r = b.emit(OpCode.SIGMOID, [_binary(b, OpCode.ADD, _gate(b, xp, 0, hidden), _gate(b, hp, 0, hidden))], None)
    z = b.emit(OpCode.SIGMOID, [_binary(b, OpCode.ADD, _gate(b, xp, 1, hidden), _gate(b, hp, 1, hidden))], None)
    n = b.emit(OpCode.TANH, [_binary(b, OpCode.ADD, _gate(b, xp, 2, hidden),
                                     _binary(b, OpCode.MUL, r, _gate(b, hp, 2, hidden)))], None)
    return _binary(b, OpCode.ADD, n, _binary(b, OpCode.MUL, z, _binary(b, OpCode.SUB, h, n)))


def _run_direction(b: Emitter, cell: Cell, x: TensorValue, weights: list[TensorValue], state: Any,
                   reverse: bool) -> tuple[list[TensorValue], Any]:
    """One layer, one direction over x [T, B, I]: the hidden state of every step (in time
    order) and the final state."""
    w_ih, w_hh, b_ih, b_hh = (weights + [None, None])[:4] if len(weights) == 2 else weights
    projected = b.emit(OpCode.LINEAR, [x, w_ih, b_ih], FusedAttrs())
    steps = static_shape(x)[0]
    outputs: list[TensorValue] = [x] * steps  # placeholders, all overwritten
    for t in reversed(range(steps)) if reverse else range(steps):
        h = state[0] if isinstance(state, tuple) else state
        hp = b.emit(OpCode.LINEAR, [h, w_hh, b_hh], FusedAttrs())
        state = cell(b, _select(b, [projected, 0, t]), hp, state)
        outputs[t] = state[0] if isinstance(state, tuple) else state
    return outputs, state


def _recurrent(cell: Cell, n_gates: int, has_cell_state: bool) -> Lowering:
    """aten::lstm(input, hx[2], params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) and aten::gru(input, hx, params, ...)."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        x, hx, params, has_biases, num_layers, _dropout, train, bidirectional, batch_first = args[:9]
        if not isinstance(params, (list, tuple)) or not isinstance(batch_first, bool):
            raise Unsupported("packed sequences (the data/batch_sizes form) are not compiled")
        if train:
            raise Unsupported("training mode is not compiled")
        x = tensor(x)
        if len(static_shape(x)) != 3:
            raise Unsupported("the input must be 3-D (nn.LSTM/GRU adds the batch dim itself)")
        if batch_first:
            x = b.emit(OpCode.TRANSPOSE, [x], PermuteAttrs(perm=(1, 0, 2)))
        steps = static_shape(x)[0]
        if steps < 0:
            raise Unsupported("the sequence length must be static; give static input shapes "
                              "(liteexport export --input-shape)")
        directions = 2 if bidirectional else 1
        per_cell = 4 if has_biases else 2
        weights = _weights(params)
        if len(weights) != num_layers * directions * per_cell:
            raise Unsupported("projections (proj_size) are not compiled")
        if static_shape(weights[0])[0] != n_gates * static_shape(weights[1])[1]:
            raise Unsupported("unexpected weight shapes")
        h0 = tensor(hx[0]) if has_cell_state else tensor(hx)
        c0 = tensor(hx[1]) if has_cell_state else None
        finals_h, finals_c = [], []
        layer_input = x
        for layer in range(num_layers):
            per_direction = []
            for d in range(directions):
                k = layer * directions + d
                state: Any = _select(b, [h0, 0, k])
                if c0 is not None:
                    state = (state, _select(b, [c0, 0, k]))
                outputs, state = _run_direction(b, cell, layer_input, weights[k * per_cell:(k + 1) * per_cell],
                                                state, reverse=d == 1)
                per_direction.append(outputs)
                finals_h.append(state[0] if c0 is not None else state)
                if c0 is not None:
                    finals_c.append(state[1])
            steps_out = [cat(b, [outs[t] for outs in per_direction], 1) for t in range(steps)]
            layer_input = cat(b, [_unsqueeze(b, [s, 0]) for s in steps_out], 0)
        output = layer_input
        if batch_first:
            output = b.emit(OpCode.TRANSPOSE, [output], PermuteAttrs(perm=(1, 0, 2)))
        h_n = cat(b, [_unsqueeze(b, [h, 0]) for h in finals_h], 0)
        if c0 is None:
            return (output, h_n)
        return (output, h_n, cat(b, [_unsqueeze(b, [c, 0]) for c in finals_c], 0))
    return lower


LOWERINGS: dict[str, Lowering] = {
    "aten::lstm": _recurrent(_lstm_cell, 4, has_cell_state=True),
    "aten::gru": _recurrent(_gru_cell, 3, has_cell_state=False),
}
