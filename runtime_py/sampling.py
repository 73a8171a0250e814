"""The token sampler: one logits vector in, one token id out, bit-identical in runtime_py, the
native core (``native/src/sampling.h``) and Java (``org.liteexport.Sampler``).

Configuration (:class:`SamplingConfig`): ``temperature`` (float64, finite, >= 0; 0 = greedy),
``top_k`` (int >= 0; 0 = off), ``top_p`` (float64 in (0, 1]; 1 = off), ``seed`` (uint64).

Random numbers are counter-based, so every engine draws the same number for step ``n`` without
carrying a generator's state::

    draw(seed, n) = mix(seed + (n + 1) * 0x9E3779B97F4A7C15 mod 2**64)
    mix(z):  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
             z = (z ^ (z >> 27)) * 0x94D049BB133111EB
             return z ^ (z >> 31)                        (all mod 2**64: splitmix64's output)
    u = (draw >> 11) * 2**-53                            (in [0, 1))

``n`` is the index of the token being generated (0 for the first new token), so ``draw(s, n)``
is the n-th output of splitmix64 seeded with ``s``.

Logits are float32 (Python converts other float dtypes to float32 first, as the other engines
receive them); a NaN logit counts as -inf.

* Greedy (temperature == 0): the first index of the largest logit; top_k and top_p are ignored;
  nothing is drawn.
* Otherwise, in float64:
  1. candidates: every index, sorted by logit descending, ties by index ascending;
     top_k > 0 keeps the first k (all when k >= the vocabulary).
  2. weights, in that order: ``w_i = exp(x_i)`` with ``x_i = (logit_i - max) / temperature``,
     except ``x_i = 0`` (``w_i = 1``) where ``logit_i == max`` (a +inf maximum works: the +inf
     logits share the mass). ``exp`` is the fixed sequence of IEEE operations in
     :func:`weight_exp` (fdlibm's algorithm), not the platform's libm, and ``w_i = 0`` for
     ``x_i < -708`` (below the smallest normal double; as every sum starts with the top
     candidate's weight 1, a weight below 2**-53 never changes one).
  3. running sums ``c_j = c_{j-1} + w_j`` left to right in sorted order; ``total = c_last``.
  4. top_p < 1 keeps the shortest prefix whose running sum reaches ``top_p * total``
     (``c_j >= top_p * total``; at least one candidate).
  5. ``target = u * kept_total`` (``kept_total``: the running sum at the last kept candidate);
     the token is the first kept candidate whose running sum is ``> target``, or the last kept one
     if none is (cannot happen: ``kept_total >= 1`` and ``u < 1``). A zero weight is never chosen.

Errors (``ValueError`` naming the field and its value): a temperature that is negative, NaN or
infinite; top_k < 0; top_p outside (0, 1] or NaN; a seed or step outside [0, 2**64); logits that
are not a 1-D float array, empty, or have no value above -inf (all NaN or -inf; greedy too).

Why the result is bit-identical: every step above is IEEE-754 binary64 ``+ - * /``, comparisons,
round-to-nearest-even ``rint`` and exact power-of-two scaling, which numpy, C++ (built with
``-ffp-contract=off``: no fused multiply-add) and Java (strict floating point) all compute the
same. The platforms' own ``exp`` differ in the last bit (glibc, bionic, numpy's SIMD loops,
HotSpot's intrinsic), which would let a draw within ~1e-16 (relative) of a boundary between two
candidates pick the neighbour, a chance of roughly (candidates x 1e-16) per token, once in ~10**11
tokens for a 32000-token vocabulary: not using it removes that.
What would still break it: an engine compiled with ``-ffast-math`` or FMA contraction, or a
platform doing double arithmetic in x87 extended precision (not a target).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

__all__ = ["SamplingConfig", "draw", "sample", "weight_exp"]

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15

# fdlibm e_exp.c's constants: ln2 split so that k * _LN2_HI is exact, and the Remez coefficients.
_INV_LN2 = 1.44269504088896338700e00
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08
# Below this, exp(x) is not a normal double: the weight is 0 (it could never change a sum >= 1).
EXP_CUTOFF = -708.0
# Below this, weight_exp(x) < 2**-53 (e**-37 = 8.5e-17, within 1 ulp): adding it to a sum >= 1 changes nothing.
_NO_EFFECT = -37.0


@dataclass(frozen=True)
class SamplingConfig:
    """How :func:`sample` picks a token; checked on construction (``ValueError`` naming the field)."""

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        temperature = _real("temperature", self.temperature)
        if not (np.isfinite(temperature) and temperature >= 0.0):
            raise ValueError(f"temperature must be a finite number >= 0 (0: greedy), got {temperature!r}")
        top_k = _integer("top_k", self.top_k)
        if top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0: off), got {top_k}")
        top_p = _real("top_p", self.top_p)
        if not 0.0 < top_p <= 1.0:  # (a NaN fails both comparisons)
            raise ValueError(f"top_p must be in (0, 1] (1: off), got {top_p!r}")
        seed = _uint64("seed", self.seed)
        # normalized, so that an int temperature or a numpy integer seed compares and prints as the rest
        object.__setattr__(self, "temperature", temperature)
        object.__setattr__(self, "top_k", top_k)
        object.__setattr__(self, "top_p", top_p)
        object.__setattr__(self, "seed", seed)

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def _integer(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return operator.index(value)


def _uint64(name: str, value: object) -> int:
    number = _integer(name, value)
    if not 0 <= number <= _MASK64:
        raise ValueError(f"{name} must be an integer in [0, 2**64), got {number}")
    return number


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def draw(seed: int, step: int) -> float:
    """The uniform number in [0, 1) of token ``step`` for ``seed``: 53 bits of splitmix64's output."""
    z = _mix((_uint64("seed", seed) + (_uint64("step", step) + 1) * _GOLDEN) & _MASK64)
    return (z >> 11) * 2.0**-53  # exact: an integer below 2**53 times a power of two


def weight_exp(x: np.ndarray) -> np.ndarray:
    """exp(x) for float64 ``x <= 0`` by fdlibm's algorithm (within 1 ulp), in basic IEEE operations
    only, so that every engine gets the same bits; 0 where ``x < EXP_CUTOFF`` (and for -inf)."""
    x = np.asarray(x, dtype=np.float64)
    live = x >= EXP_CUTOFF
    r = np.where(live, x, 0.0)
    k = np.rint(r * _INV_LN2)  # round half to even, as C++'s nearbyint and Java's Math.rint
    hi = r - k * _LN2_HI
    lo = k * _LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
    # exact: the result is a normal double (x >= -708), so scaling by 2**k only changes the exponent
    return np.where(live, np.ldexp(y, k.astype(np.int32)), 0.0)


def _logit_values(logits: np.ndarray) -> np.ndarray:
    """The logits as float32 rounded values in float64, NaN as -inf; refuses what cannot be sampled."""
    array = np.asarray(logits)
    if array.ndim != 1:
        raise ValueError(f"logits must be a 1-D array, got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.floating):
        raise ValueError(f"logits must be floating point, got dtype {array.dtype}")
    if array.size == 0:
        raise ValueError("logits are empty")
    values = array.astype(np.float32).astype(np.float64)
    values[np.isnan(values)] = -np.inf
    if not (values > -np.inf).any():
        raise ValueError(f"logits have no value above -inf: all {values.size} are NaN or -inf")
    return values


def sample(logits: np.ndarray, config: SamplingConfig, step: int) -> int:
    """The token id for ``logits`` (1-D) at generation step ``step`` (0 for the first new token)."""
    values = _logit_values(logits)
    if config.greedy:
        _uint64("step", step)
        return int(np.argmax(values))  # the first of equal maxima
    u = draw(config.seed, step)
    top = values.max()
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where values == top is replaced here
        x = np.where(values == top, 0.0, (values - top) / config.temperature)
    # Only the candidates whose weight can change a running sum are sorted: x < _NO_EFFECT gives a
    # weight below 2**-53, and every running sum starts at the top candidate's weight 1, so adding
    # it changes no sum; they sort after all others (-inf and NaN among them), so no top_p prefix
    # ends on one and none is chosen. The result is the specification's, on fewer candidates.
    candidates = np.flatnonzero(x >= _NO_EFFECT)
    # stable: equal logits keep index order (-0.0 and 0.0 are equal)
    order = candidates[np.argsort(-values[candidates], kind="stable")]
    if config.top_k > 0:
        order = order[: config.top_k]
    # np.cumsum is add.accumulate: strictly left to right, as the other engines' loops
    running = np.cumsum(weight_exp(x[order]))
    count = running.size
    if config.top_p < 1.0:
        threshold = config.top_p * float(running[-1])
        count = min(int(np.searchsorted(running, threshold, side="left")) + 1, count)  # first c_j >= threshold
    target = u * float(running[count - 1])
    chosen = int(np.searchsorted(running[:count], target, side="right"))  # first c_j > target
    return int(order[min(chosen, count - 1)])
