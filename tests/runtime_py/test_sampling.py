"""runtime_py's token sampler (runtime_py/sampling.py) on its own: the draws against splitmix64
written as a sequential generator, their uniformity (with broken mixers as controls that the
checks catch), token frequencies against softmax, top-k and top-p never leaving their sets, greedy
against argmax, the vectorized code against a plain loop over the specification, and the errors.
tests/generation/test_sampler_engines.py compares it with the native core and Java."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from pathlib import Path

import numpy as np
import pytest

from runtime_py.sampling import EXP_CUTOFF, SamplingConfig, draw, sample, weight_exp

ROOT = Path(__file__).resolve().parents[2]
MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(seed: int, count: int) -> list[int]:
    """Vigna's splitmix64 as usually written: a state advanced by the gamma, then mixed."""
    state, out = seed, []
    for _ in range(count):
        state = (state + GOLDEN) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


@pytest.mark.parametrize("seed", [0, 1, 42, MASK, GOLDEN, 1 << 63])
def test_draws_are_splitmix64_outputs(seed: int) -> None:
    assert [draw(seed, n) for n in range(1000)] == [(z >> 11) / 2.0**53 for z in splitmix64(seed, 1000)]


def test_draws_match_the_reference_implementation_outputs() -> None:
    # the first outputs of splitmix64 from seed 0 in Vigna's reference splitmix64.c
    assert draw(0, 0) == (0xE220A8397B1DCDAF >> 11) * 2.0**-53
    assert draw(0, 1) == (0x6E789E6AA1B965F4 >> 11) * 2.0**-53
    assert draw(7, MASK) == draw((7 - GOLDEN) & MASK, 0)  # the counter wraps as the state does


def _ks_statistic(values: list[float]) -> float:
    """Kolmogorov-Smirnov distance of the sample from the uniform distribution on [0, 1)."""
    u = np.sort(np.asarray(values))
    n = u.size
    return float(max((np.arange(1, n + 1) / n - u).max(), (u - np.arange(n) / n).max()))


def _pairs_chi2(values: list[float], cells: int = 16) -> float:
    """Chi-square of consecutive pairs (u_n, u_n+1) over a cells x cells grid."""
    u = np.asarray(values)
    grid = np.floor(u * cells).astype(int)
    counts = np.bincount(grid[:-1] * cells + grid[1:], minlength=cells * cells)
    expected = (u.size - 1) / cells**2
    return float(((counts - expected) ** 2 / expected).sum())


# KS: sqrt(n) * D exceeds 1.95 with probability 0.001 for uniform draws. Pairs on a 16 x 16 grid:
# chi-square with 255 degrees of freedom exceeds 340 with probability < 0.001.
KS_BOUND = 1.95
CHI2_BOUND = 340.0
N = 20000


def _broken_weyl(seed: int, step: int) -> float:
    """No mixing at all: the Weyl sequence itself (uniform along one seed, but its consecutive
    pairs lie on a few lines, and consecutive seeds give nearly equal numbers)."""
    return (((seed + (step + 1) * GOLDEN) & MASK) >> 11) * 2.0**-53


def _broken_counter(seed: int, step: int) -> float:
    """A counter that wraps after 64 steps (a narrow step type): good numbers, repeated."""
    return draw(seed, step % 64)


def _uniformity(generator: Callable[[int, int], float]) -> tuple[float, float, float]:
    along_steps = [generator(12345, n) for n in range(N)]
    across_seeds = [generator(s, 0) for s in range(N)]
    return (math.sqrt(N) * _ks_statistic(along_steps), _pairs_chi2(along_steps),
            math.sqrt(N) * _ks_statistic(across_seeds))


def test_draws_are_uniform_along_steps_and_across_seeds() -> None:
    ks_steps, chi2_pairs, ks_seeds = _uniformity(draw)
    assert ks_steps < KS_BOUND and chi2_pairs < CHI2_BOUND and ks_seeds < KS_BOUND, (ks_steps, chi2_pairs, ks_seeds)


@pytest.mark.parametrize("broken", [_broken_weyl, _broken_counter])
def test_the_uniformity_checks_catch_a_broken_mixer(broken: Callable[[int, int], float]) -> None:
    ks_steps, chi2_pairs, ks_seeds = _uniformity(broken)
    assert ks_steps >= KS_BOUND or chi2_pairs >= CHI2_BOUND or ks_seeds >= KS_BOUND, (ks_steps, chi2_pairs, ks_seeds)


def _softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = np.exp((logits.astype(np.float64) - logits.max()) / temperature)
    probabilities: np.ndarray = z / z.sum()
    return probabilities


def _within_binomial(counts: np.ndarray, p: np.ndarray, n: int) -> None:
    """Each count within 5 standard deviations of n * p (all 10 pass together with probability > 0.99999)."""
    sigma = np.sqrt(n * p * (1 - p))
    assert (np.abs(counts - n * p) <= 5 * sigma + 1e-9).all(), (counts, n * p)


@pytest.mark.parametrize("temperature", [1.0, 0.5, 2.0])
def test_frequencies_match_softmax(temperature: float) -> None:
    logits = np.array([2.0, 1.0, 0.5, 0.0, -0.5, -1.0, 1.5, 0.25, -2.0, 0.75], dtype=np.float32)
    config = SamplingConfig(temperature=temperature, seed=2024)
    counts = np.bincount([sample(logits, config, n) for n in range(N)], minlength=10)
    _within_binomial(counts, _softmax(logits, temperature), N)


def _sorted_candidates(logits: np.ndarray) -> list[int]:
    """Indices by logit descending, ties by index, NaN last as -inf: Python's sort, not numpy's."""
    key = [(-math.inf if math.isnan(v) else float(v)) for v in logits]
    return sorted(range(len(key)), key=lambda i: (-key[i], i))


def _noisy_logits(rng: np.random.Generator, vocab: int) -> np.ndarray:
    logits = np.round(rng.standard_normal(vocab) * 2, 1).astype(np.float32)  # rounded: many ties
    logits[rng.integers(0, vocab, vocab // 10)] = -np.inf
    logits[rng.integers(0, vocab, vocab // 10)] = np.nan
    return logits


@pytest.mark.parametrize("top_k", [1, 5, 40])
def test_top_k_never_leaves_the_k_largest(top_k: int) -> None:
    rng = np.random.default_rng(top_k)
    for row in range(40):
        logits = _noisy_logits(rng, 200)
        allowed = set(_sorted_candidates(logits)[:top_k])
        config = SamplingConfig(temperature=3.0, top_k=top_k, seed=row)
        chosen = {sample(logits, config, n) for n in range(50)}
        assert chosen <= allowed
    assert top_k == 1 or len(chosen) > 1


def test_top_p_never_leaves_the_nucleus_and_keeps_its_proportions() -> None:
    # softmax at temperature 1: 0.47, 0.17, 0.17, 0.064, ... ; nucleus of 0.75: the first three
    logits = np.array([0.0, 2.0, 1.0, -1.0, 1.0, -3.0, -0.5, -2.0], dtype=np.float32)
    p = _softmax(logits, 1.0)
    order = _sorted_candidates(logits)
    assert float(np.cumsum(p[order])[1]) < 0.75 < float(np.cumsum(p[order])[2]) - 1e-3  # well inside
    nucleus = order[:3]
    config = SamplingConfig(temperature=1.0, top_p=0.75, seed=99)
    tokens = [sample(logits, config, n) for n in range(N)]
    assert set(tokens) == set(nucleus)
    counts = np.bincount(tokens, minlength=8)[nucleus]
    _within_binomial(counts, p[nucleus] / p[nucleus].sum(), N)


def test_greedy_is_argmax_with_nan_as_minus_infinity() -> None:
    rng = np.random.default_rng(3)
    for row in range(200):
        logits = _noisy_logits(rng, 50)
        expected = _sorted_candidates(logits)[0]
        assert sample(logits, SamplingConfig(), row) == expected
        assert sample(logits, SamplingConfig(top_k=3, top_p=0.1, seed=5), row) == expected  # both ignored


def _reference(logits: np.ndarray, config: SamplingConfig, step: int) -> int:
    """The specification as a plain loop (Python floats, one weight at a time)."""
    candidates = _sorted_candidates(logits)
    if config.top_k > 0:
        candidates = candidates[: config.top_k]
    values = [-math.inf if math.isnan(v) else float(v) for v in logits]
    top = values[candidates[0]]
    running, total = [], 0.0
    for i in candidates:
        total += 1.0 if values[i] == top else float(weight_exp(np.array((values[i] - top) / config.temperature)))
        running.append(total)
    count = len(candidates)
    if config.top_p < 1.0:
        threshold = config.top_p * running[-1]
        count = next(j for j, c in enumerate(running) if c >= threshold) + 1
    target = draw(config.seed, step) * running[count - 1]
    return candidates[next((j for j in range(count) if running[j] > target), count - 1)]


@pytest.mark.parametrize("config", [
    SamplingConfig(temperature=1.0, seed=1), SamplingConfig(temperature=0.7, top_k=5, seed=2),
    SamplingConfig(temperature=1.3, top_p=0.5, seed=3), SamplingConfig(temperature=0.7, top_k=40, top_p=0.9, seed=4),
    SamplingConfig(temperature=1e-3, seed=5), SamplingConfig(temperature=50.0, top_p=0.99, seed=MASK),
], ids=str)
def test_vectorized_sample_follows_the_specification_loop(config: SamplingConfig) -> None:
    rng = np.random.default_rng(config.seed % 1000)
    for row in range(60):
        logits = _noisy_logits(rng, 120)
        assert sample(logits, config, row) == _reference(logits, config, row), row


def test_cumsum_accumulates_left_to_right() -> None:
    values = np.random.default_rng(0).random(5000) * 10.0 ** np.random.default_rng(1).integers(-20, 5, 5000)
    total, loop = 0.0, []
    for v in values:
        total += float(v)
        loop.append(total)
    assert np.cumsum(values).tolist() == loop


def test_weight_exp_is_within_one_ulp_of_libm() -> None:
    x = np.concatenate([-np.random.default_rng(0).random(200000) * 708.0, np.linspace(-1.0, 0.0, 10001)])
    ours = weight_exp(x)
    libm = np.array([math.exp(v) for v in x])
    assert (np.abs(ours - libm) <= np.spacing(libm)).all()
    assert weight_exp(np.array([0.0, -0.0]))[0] == 1.0 == weight_exp(np.array([-0.0]))[0]
    assert weight_exp(np.array([EXP_CUTOFF - 0.5, -np.inf, np.nan])).tolist() == [0.0, 0.0, 0.0]


def test_infinite_logits() -> None:
    logits = np.array([1.0, np.inf, -np.inf, np.inf, 0.0], dtype=np.float32)
    config = SamplingConfig(temperature=0.7, seed=9)
    assert {sample(logits, config, n) for n in range(300)} == {1, 3}  # the +inf logits share the mass
    masked = np.array([-np.inf, 2.0, -np.inf, np.nan, 2.5], dtype=np.float32)
    assert {sample(masked, SamplingConfig(temperature=1.3, seed=9), n) for n in range(300)} == {1, 4}


def test_float64_logits_are_sampled_as_float32() -> None:
    logits = np.random.default_rng(4).standard_normal(300)
    config = SamplingConfig(temperature=0.9, top_k=50, seed=8)
    assert [sample(logits, config, n) for n in range(100)] == [sample(logits.astype(np.float32), config, n)
                                                               for n in range(100)]


@pytest.mark.parametrize(("fields", "message"), [
    ({"temperature": -1}, "temperature must be a finite number >= 0 (0: greedy), got -1.0"),
    ({"temperature": math.nan}, "temperature must be a finite number >= 0 (0: greedy), got nan"),
    ({"temperature": math.inf}, "temperature must be a finite number >= 0 (0: greedy), got inf"),
    ({"temperature": "1"}, "temperature must be a number, got '1'"),
    ({"top_k": -2}, "top_k must be >= 0 (0: off), got -2"),
    ({"top_k": 2.0}, "top_k must be an integer, got 2.0"),
    ({"top_k": True}, "top_k must be an integer, got True"),
    ({"top_p": 0}, "top_p must be in (0, 1] (1: off), got 0.0"),
    ({"top_p": 1.5}, "top_p must be in (0, 1] (1: off), got 1.5"),
    ({"top_p": math.nan}, "top_p must be in (0, 1] (1: off), got nan"),
    ({"seed": -1}, "seed must be an integer in [0, 2**64), got -1"),
    ({"seed": 1 << 64}, f"seed must be an integer in [0, 2**64), got {1 << 64}"),
])
def test_bad_configs_name_the_field_and_value(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        SamplingConfig(**fields)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_config_is_normalized_and_frozen() -> None:
    # numpy scalars, as a caller may pass them: typed as int and float, taken and normalized
    config = SamplingConfig(temperature=1, top_k=np.int64(5), top_p=np.float32(0.5),  # type: ignore[arg-type]
                            seed=np.uint64(MASK))  # type: ignore[arg-type]
    assert (config.temperature, config.top_k, config.top_p, config.seed) == (1.0, 5, 0.5, MASK)
    assert type(config.temperature) is float and type(config.top_k) is int and type(config.seed) is int
    with pytest.raises(FrozenInstanceError):
        config.seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(("logits", "step", "message"), [
    (np.zeros((2, 3), np.float32), 0, "logits must be a 1-D array, got shape (2, 3)"),
    (np.zeros(0, np.float32), 0, "logits are empty"),
    (np.arange(3), 0, "logits must be floating point, got dtype int64"),
    (np.array([np.nan, -np.inf, np.nan], np.float32), 0, "logits have no value above -inf: all 3 are NaN or -inf"),
    (np.ones(3, np.float32), -1, "step must be an integer in [0, 2**64), got -1"),
])
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_bad_logits_and_steps(logits: np.ndarray, step: int, message: str, temperature: float) -> None:
    with pytest.raises(ValueError) as info:
        sample(logits, SamplingConfig(temperature=temperature), step)
    assert str(info.value) == message


def test_sampling_imports_neither_torch_nor_liteexport() -> None:
    script = ("import sys\n"
              "class Block:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name.split('.')[0] in ('torch', 'liteexport'):\n"
              "            raise ImportError('blocked: ' + name)\n"
              "sys.meta_path.insert(0, Block())\n"
              "import numpy as np\n"
              "from runtime_py.sampling import SamplingConfig, sample\n"
              "print(sample(np.array([0.0, 1.0], np.float32), SamplingConfig(), 0))\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "1", result.stderr
