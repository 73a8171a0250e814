#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "errors.h"

namespace liteexport {

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

// fdlibm e_exp.c's constants: ln2 split so that k * kLn2Hi is exact, and the Remez coefficients.
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kP1 = 1.66666666666666019037e-01;
constexpr double kP2 = -2.77777777770155933842e-03;
constexpr double kP3 = 6.61375632143793436117e-05;
constexpr double kP4 = -1.65339022054652515390e-06;
constexpr double kP5 = 4.13813679705723846039e-08;
// below this exp(x) is not a normal double: the weight is 0 (it could never change a sum >= 1)
constexpr double kExpCutoff = -708.0;
// below this sampling_exp(x) < 2^-53 (e^-37 = 8.5e-17, within 1 ulp): adding it to a sum >= 1 changes nothing
constexpr double kNoEffect = -37.0;

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Text that reads back as `v`, as Python's repr spells it (-1.0, 0.5, nan, inf), for the error messages.
std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.15g", v);
  if (std::strtod(text, nullptr) != v) std::snprintf(text, sizeof text, "%.17g", v);
  std::string out = text;
  if (out.find_first_of(".en") == std::string::npos) out += ".0";  // -1.0, not -1 (nan, inf, 1e+20 as they are)
  return out;
}

// A sort key: ascending order of the keys is descending logit, then ascending index. NaN is -inf
// and -0.0 is 0.0 before the float's bits are made order-preserving as an unsigned integer.
uint64_t candidate_key(float logit, uint32_t index) {
  if (std::isnan(logit)) logit = -std::numeric_limits<float>::infinity();
  if (logit == 0.0f) logit = 0.0f;
  uint32_t bits;
  std::memcpy(&bits, &logit, sizeof bits);
  // negative floats: all bits flipped (larger magnitude, smaller); others: the sign bit set
  const uint32_t ascending = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
  return static_cast<uint64_t>(~ascending) << 32 | index;
}

// Sorts the keys ascending: a stable LSD radix sort on the high 32 bits (the logit's), 8 bits a
// pass; the low 32 bits (the index) are ascending already, so ties keep index order. A vocabulary's
// worth of keys sorts several times faster than with std::sort.
void sort_candidates(std::vector<uint64_t>& keys) {
  std::vector<uint64_t> buffer(keys.size());
  for (int shift = 32; shift < 64; shift += 8) {
    size_t start[257] = {};
    for (uint64_t key : keys) ++start[((key >> shift) & 0xFF) + 1];
    if (start[((keys[0] >> shift) & 0xFF) + 1] == keys.size()) continue;  // all in one bucket: nothing moves
    for (int b = 0; b < 256; ++b) start[b + 1] += start[b];
    for (uint64_t key : keys) buffer[start[(key >> shift) & 0xFF]++] = key;
    keys.swap(buffer);
  }
}

}  // namespace

void validate(const SamplingConfig& config) {
  if (!(std::isfinite(config.temperature) && config.temperature >= 0)) {
    throw_input("temperature must be a finite number >= 0 (0: greedy), got " + number(config.temperature));
  }
  if (config.top_k < 0) throw_input("top_k must be >= 0 (0: off), got " + std::to_string(config.top_k));
  if (!(config.top_p > 0 && config.top_p <= 1)) {
    throw_input("top_p must be in (0, 1] (1: off), got " + number(config.top_p));
  }
}

double draw(uint64_t seed, uint64_t step) {
  // unsigned arithmetic wraps: mod 2^64 as specified
  return static_cast<double>(mix(seed + (step + 1) * kGolden) >> 11) * 0x1.0p-53;
}

double sampling_exp(double x) {
  if (!(x >= kExpCutoff)) return 0.0;
  const double k = std::nearbyint(x * kInvLn2);  // round half to even (the default rounding mode)
  const double hi = x - k * kLn2Hi;
  const double lo = k * kLn2Lo;
  const double r = hi - lo;
  const double t = r * r;
  const double c = r - t * (kP1 + t * (kP2 + t * (kP3 + t * (kP4 + t * kP5))));
  const double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
  return std::ldexp(y, static_cast<int>(k));  // exact: the result is a normal double
}

int64_t sample(const float* logits, size_t n, const SamplingConfig& config, uint64_t step) {
  validate(config);
  if (n == 0) throw_input("logits are empty");
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw_input("logits have " + std::to_string(n) + " entries, more than 2147483647");
  }
  // greedy: the first index of the largest logit, NaN as -inf
  size_t best = n;
  for (size_t i = 0; i < n; ++i) {
    if (logits[i] > -std::numeric_limits<float>::infinity() && (best == n || logits[i] > logits[best])) best = i;
  }
  if (best == n) throw_input("logits have no value above -inf: all " + std::to_string(n) + " are NaN or -inf");
  if (config.temperature == 0) return static_cast<int64_t>(best);

  const double u = draw(config.seed, step);
  const double top = logits[best];
  auto x_of = [&](float logit) { return (static_cast<double>(logit) - top) / config.temperature; };
  // Only the candidates whose weight can change a running sum are sorted. x < kNoEffect gives a
  // weight below 2^-53, and every running sum starts at the top candidate's weight 1, so adding it
  // changes no sum; such candidates sort after all others (NaN and -inf among them), so no top_p
  // prefix ends on one and none is chosen. The result is the specification's, on fewer candidates.
  std::vector<uint64_t> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (logits[i] == top || x_of(logits[i]) >= kNoEffect) keys.push_back(candidate_key(logits[i], static_cast<uint32_t>(i)));
  }
  size_t count = keys.size();
  if (config.top_k > 0 && static_cast<uint64_t>(config.top_k) < count) count = static_cast<size_t>(config.top_k);
  if (count <= keys.size() / 8) {
    std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(count), keys.end());
  } else {
    sort_candidates(keys);
  }
  std::vector<double> running(count);
  double sum = 0;
  for (size_t j = 0; j < count; ++j) {
    const float logit = logits[static_cast<uint32_t>(keys[j])];
    sum += logit == top ? 1.0 : sampling_exp(x_of(logit));
    running[j] = sum;
  }
  if (config.top_p < 1) {
    const double threshold = config.top_p * running[count - 1];
    count = static_cast<size_t>(std::lower_bound(running.begin(), running.begin() + static_cast<std::ptrdiff_t>(count),
                                                 threshold) - running.begin()) + 1;
    count = std::min(count, running.size());
  }
  const double target = u * running[count - 1];
  size_t chosen = static_cast<size_t>(std::upper_bound(running.begin(), running.begin() + static_cast<std::ptrdiff_t>(count),
                                                       target) - running.begin());
  chosen = std::min(chosen, count - 1);
  return static_cast<int64_t>(static_cast<uint32_t>(keys[chosen]));
}

}  // namespace liteexport
