"""The compiler stores equal weights once and never merges different ones."""

from __future__ import annotations

import torch

from liteexport.compiler.emit import ModuleEmitter


def test_equal_contents_share_one_weight() -> None:
    emitter = ModuleEmitter()
    w = torch.randn(8, 8)
    assert emitter.weight(w) == emitter.weight(w.detach()) == emitter.weight(w.clone()) == 0
    assert emitter.weight(w.t()) == 1  # another layout: other bytes
    assert len(emitter.weights) == 2


def test_weights_alike_in_every_sampled_value_stay_apart() -> None:
    """Only a sample of the values picks the candidates; the full comparison decides."""
    emitter = ModuleEmitter()
    a = torch.zeros(4096)
    b = a.clone()
    b[4095 - 7] = 1.0  # between the sampled positions (every 64th value)
    assert (emitter.weight(a), emitter.weight(b)) == (0, 1)


def test_nan_weights_are_compared_by_bits() -> None:
    emitter = ModuleEmitter()
    w = torch.full((3,), float("nan"))
    assert emitter.weight(w) == emitter.weight(w.clone()) == 0


def test_weights_view_the_parameters_read_only() -> None:
    emitter = ModuleEmitter()
    w = torch.randn(16, 4)
    array = emitter.weights[emitter.weight(w)]
    assert array.ctypes.data == w.data_ptr()  # no copy on the way to the bundle writer
    assert not array.flags.writeable
