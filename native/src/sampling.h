// The token sampler: one logits vector in, one token id out, bit-identical to runtime_py's
// (runtime_py/sampling.py, whose docstring is the full specification; docs/reference.md,
// "Sampling") and Java's (org.liteexport.Sampler).
//
// In short: draw(seed, n) = splitmix64's output function of seed + (n + 1) * 0x9E3779B97F4A7C15
// (mod 2^64), u = (draw >> 11) * 2^-53, n the index of the generated token. Greedy (temperature 0):
// the first index of the largest logit (NaN counts as -inf). Otherwise, in double: candidates
// sorted by logit descending, ties by index; top_k > 0 keeps the first k; weights
// w = sampling_exp((logit - max) / temperature) (1 where logit == max); running sums left to
// right; top_p < 1 keeps the shortest prefix reaching top_p * total; the token is the first kept
// candidate whose running sum exceeds u * kept_total. Only IEEE + - * /, nearbyint and ldexp are
// used (no libm exp; the core is built with -ffp-contract=off), so every engine gets the same bits.
// A bad config or unusable logits throw liteexport::Error of kind Input.
#pragma once

#include <cstddef>
#include <cstdint>

namespace liteexport {

struct SamplingConfig {
  double temperature = 0;  // finite, >= 0; 0 = greedy
  int64_t top_k = 0;       // >= 0; 0 = off
  double top_p = 1;        // in (0, 1]; 1 = off
  uint64_t seed = 0;
};

// Throws Error(Input) naming the field and its value when `config` is not usable.
void validate(const SamplingConfig& config);

// The uniform number in [0, 1) of token `step` for `seed`.
double draw(uint64_t seed, uint64_t step);

// exp(x) for x <= 0 by fdlibm's algorithm (within 1 ulp) in basic IEEE operations; 0 below -708.
double sampling_exp(double x);

// The token id for `n` logits at generation step `step` (0 for the first new token). Throws
// Error(Input) for a bad config, n == 0, n > INT32_MAX (Java's limit) or logits that are all NaN or -inf.
int64_t sample(const float* logits, size_t n, const SamplingConfig& config, uint64_t step);

}  // namespace liteexport
