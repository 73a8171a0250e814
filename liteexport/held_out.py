"""Held-out inputs: the user's input sets split into those a step fits on and those the check
after it runs on, so that the check sees inputs like the user's that the step did not see.

``--quantize int8`` fits its activation grids on the calibration inputs and checks the result
against the float model; checking on inputs of another distribution (standard normal noise for a
model that sees images in [0, 1)) measures the wrong thing, and checking only on the inputs fitted
on hides a grid that clips. Issue 35 holds out prompts the same way.

The rule (``hold_out``):

- with two or more sets, the last quarter of them (rounded, at least one) is held out and the
  step fits on the rest: 2-4 sets hold out 1, 8 hold out 2. The last ones, so that which sets are
  held out is plain from the order they were given in.
- with one set, it is fitted on, and ``DRAWN`` sets are drawn from its statistics: each float
  input per channel (axis 1, torch's channel dim, when it has two or more dims and each channel
  holds at least ``MIN_PER_CHANNEL`` values; else the whole tensor, so that a 1 x features row is
  not drawn as itself) from a normal distribution of the channel's mean and standard deviation,
  clipped to the channel's min and max, so the draws stay within what was observed; each integer
  or bool input (ids, masks) resampled from its own values, so ids stay within the tables they index.

numpy only: nothing here needs torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Inputs = Sequence[np.ndarray]

SHARE = 0.25  # the share of two or more sets held out (at least one)
DRAWN = 4  # sets drawn from a single set's statistics
SEED = 0
MIN_PER_CHANNEL = 8  # fewer values than this per channel: statistics of the whole tensor


@dataclass(frozen=True)
class Split:
    """The sets a step fits on and the held-out sets its check runs on, and how they were chosen."""

    fit: tuple[tuple[np.ndarray, ...], ...]
    held_out: tuple[tuple[np.ndarray, ...], ...]
    total: int  # the sets given
    drawn: bool  # held_out was drawn from the single set's statistics
    what: str  # the sets' name: "calibration"
    names: tuple[str, ...] = ()  # the held-out sets' names (their files), when known

    @property
    def fit_label(self) -> str:
        """``"3 of 4 calibration sets"``, ``"1 calibration set"``: what the step fitted on."""
        count = len(self.fit)
        of = f" of {self.total}" if count != self.total else ""
        return f"{count}{of} {self.what} set{'s' if self.total > 1 or count > 1 else ''}"

    @property
    def held_out_label(self) -> str:
        """What the check ran on: ``"1 held-out calibration set of 4 (img3.npy)"`` or
        ``"4 sets drawn from the calibration inputs' statistics"``."""
        count = len(self.held_out)
        if self.drawn:
            return (f"{count} set{'s' if count > 1 else ''} drawn from the {self.what} inputs' statistics "
                    "(per channel mean and std, clipped to its min and max)")
        named = f" ({', '.join(self.names)})" if self.names else ""
        return f"{count} held-out {self.what} set{'s' if count > 1 else ''} of {self.total}{named}"


def hold_out(sets: Sequence[Inputs], what: str, names: Sequence[str] = (), share: float = SHARE,
             drawn: int = DRAWN, seed: int = SEED) -> Split:
    """``sets`` split as the module docstring says; ``names`` name each set (its file) for the
    labels. ``sets`` must not be empty."""
    if not sets:
        raise ValueError("hold_out needs at least one input set")
    all_sets = tuple(tuple(np.asarray(x) for x in inputs) for inputs in sets)
    if len(all_sets) == 1:
        rng = np.random.default_rng(seed)
        draws = tuple(tuple(draw_like(x, rng) for x in all_sets[0]) for _ in range(drawn))
        return Split(all_sets, draws, 1, True, what)
    kept = len(all_sets) - max(1, round(len(all_sets) * share))
    return Split(all_sets[:kept], all_sets[kept:], len(all_sets), False, what, tuple(names[kept:len(all_sets)]))


def draw_like(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An array of ``x``'s shape and dtype drawn from its statistics (see the module docstring)."""
    if x.dtype.kind != "f":
        values = x.ravel()
        return rng.choice(values, size=x.shape) if values.size else x.copy()
    axis = 1 if x.ndim >= 2 and x.shape[1] and x.size // x.shape[1] >= MIN_PER_CHANNEL else None
    moved = np.moveaxis(x, axis, 0) if axis is not None else x.reshape(1, -1)
    out = np.empty(moved.shape, x.dtype)
    for channel, values in enumerate(moved):
        finite = values[np.isfinite(values)].astype(np.float64)
        if not finite.size:  # nothing to take statistics of: the channel as it is
            out[channel] = values
            continue
        normal = rng.normal(finite.mean(), finite.std(), size=values.shape)
        out[channel] = np.clip(normal, finite.min(), finite.max())
    return np.moveaxis(out, 0, axis) if axis is not None else out.reshape(x.shape)
