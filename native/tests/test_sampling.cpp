// The token sampler (src/sampling.h): its draws against splitmix64 written as the usual sequential
// generator, its exp against libm's, and its choices on cases whose answer follows from the
// specification by hand. tests/generation/test_sampler_engines.py compares it with runtime_py and Java.
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "liteexport/runtime.h"
#include "sampling.h"

using namespace liteexport;

namespace {

// splitmix64 as Vigna's reference writes it: a state advanced by the golden gamma, then mixed.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

// The message of the Error(Input) that `body` throws, or "" (and a failure) if it throws none.
template <typename Body>
std::string input_error(Body body) {
  try {
    body();
  } catch (const Error& e) {
    EXPECT_TRUE(e.kind() == ErrorKind::Input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

SamplingConfig config(double temperature, int64_t top_k = 0, double top_p = 1, uint64_t seed = 0) {
  SamplingConfig c;
  c.temperature = temperature;
  c.top_k = top_k;
  c.top_p = top_p;
  c.seed = seed;
  return c;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

// draw(s, n) is the n-th output of splitmix64 seeded with s, its top 53 bits scaled to [0, 1)
TEST(Sampling, DrawsAreSplitMix64Outputs) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{42}, ~uint64_t{0}, uint64_t{0x9E3779B97F4A7C15ULL}}) {
    SplitMix64 generator{seed};
    for (uint64_t n = 0; n < 1000; ++n) {
      const uint64_t bits = generator.next();
      const double expected = std::ldexp(static_cast<double>(bits >> 11), -53);
      ASSERT_EQ(draw(seed, n), expected) << "seed " << seed << " step " << n;
    }
  }
  // the first two outputs of splitmix64 from seed 0 in Vigna's reference implementation
  EXPECT_EQ(draw(0, 0), std::ldexp(static_cast<double>(0xE220A8397B1DCDAFULL >> 11), -53));
  EXPECT_EQ(draw(0, 1), std::ldexp(static_cast<double>(0x6E789E6AA1B965F4ULL >> 11), -53));
  // the step counter wraps as the state does: step 2^64 - 1 is the state seed + 0
  EXPECT_EQ(draw(5, ~uint64_t{0}), draw(5 - 0x9E3779B97F4A7C15ULL, 0));
}

TEST(Sampling, ExpIsWithinOneUlpOfLibm) {
  EXPECT_EQ(sampling_exp(0.0), 1.0);
  EXPECT_EQ(sampling_exp(-0.0), 1.0);
  EXPECT_EQ(sampling_exp(-708.5), 0.0) << "below the cutoff";
  EXPECT_EQ(sampling_exp(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(sampling_exp(std::nan("")), 0.0);
  int differ = 0;
  for (int i = 0; i <= 200000; ++i) {
    const double x = -708.0 * i / 200000.0;
    const double ours = sampling_exp(x), libm = std::exp(x);
    ASSERT_LE(std::fabs(ours - libm), std::fabs(std::nextafter(libm, 0.0) - libm)) << "x = " << x;
    differ += ours != libm;
  }
  EXPECT_LT(differ, 200000 / 4) << "mostly the correctly rounded value";
}

TEST(Sampling, GreedyIsTheFirstLargestWithNanAsMinusInfinity) {
  const std::vector<float> logits{1.0f, NAN, 3.0f, -kInf, 3.0f, 2.0f};
  for (uint64_t step = 0; step < 5; ++step) EXPECT_EQ(sample(logits.data(), logits.size(), config(0), step), 2);
  const std::vector<float> inf{1.0f, kInf, kInf};
  EXPECT_EQ(sample(inf.data(), inf.size(), config(0), 0), 1);
  const std::vector<float> one_finite{NAN, -kInf, -5.0f};
  EXPECT_EQ(sample(one_finite.data(), one_finite.size(), config(0), 0), 2);
  EXPECT_EQ(sample(one_finite.data(), one_finite.size(), config(1.0, 0, 1.0, 7), 0), 2) << "the only nonzero weight";
}

// two equal logits at temperature 1: weights 1, 1, running sums 1, 2, target 2u: token 0 iff u < 0.5
TEST(Sampling, TwoEqualLogitsSplitAtHalf) {
  const std::vector<float> logits{0.25f, 0.25f};
  int zeros = 0;
  for (uint64_t step = 0; step < 400; ++step) {
    const int64_t expected = draw(11, step) < 0.5 ? 0 : 1;
    ASSERT_EQ(sample(logits.data(), 2, config(1.0, 0, 1.0, 11), step), expected) << step;
    zeros += expected == 0;
  }
  EXPECT_GT(zeros, 150);
  EXPECT_LT(zeros, 250);
}

TEST(Sampling, TopKKeepsTheKLargestTiesByIndex) {
  // sorted: 9 (7.0), 2 (5.0), 4 (5.0), 6 (5.0), ... ; top_k 3 keeps 9, 2, 4
  const std::vector<float> logits{1, 0, 5, 2, 5, 3, 5, -1, NAN, 7};
  std::set<int64_t> seen;
  for (uint64_t step = 0; step < 2000; ++step) seen.insert(sample(logits.data(), logits.size(), config(5.0, 3, 1.0, 3), step));
  EXPECT_TRUE(seen == (std::set<int64_t>{9, 2, 4}));
  for (uint64_t step = 0; step < 50; ++step) EXPECT_EQ(sample(logits.data(), logits.size(), config(5.0, 1, 1.0, 3), step), 9);
  // mixed signs (the keys' order must hold across the sign bit): sorted 2, 3, 5, 0, 4, 1 (-0.0 == 0.0)
  const std::vector<float> signs{-1, -3, 2, -0.0f, -2, 0.0f, -kInf};
  for (int64_t k : {3, 5}) {
    seen.clear();
    for (uint64_t step = 0; step < 2000; ++step) seen.insert(sample(signs.data(), signs.size(), config(100.0, k, 1.0, 4), step));
    EXPECT_TRUE(seen == (k == 3 ? std::set<int64_t>{2, 3, 5} : std::set<int64_t>{2, 3, 5, 0, 4})) << "top " << k;
  }
}

TEST(Sampling, TopPKeepsTheShortestPrefixReachingP) {
  // weights at temperature 1: 1, e^-1 = 0.37, e^-2 = 0.14, e^-3 = 0.05; total 1.55
  const std::vector<float> logits{-3, 0, -1, -2};
  std::set<int64_t> seen;
  // 0.6 * 1.55 = 0.93 <= 1: the top candidate alone
  for (uint64_t step = 0; step < 200; ++step) seen.insert(sample(logits.data(), 4, config(1.0, 0, 0.6, 1), step));
  EXPECT_TRUE(seen == (std::set<int64_t>{1}));
  seen.clear();
  // 0.8 * 1.55 = 1.24 <= 1.37: indices 1 and 2
  for (uint64_t step = 0; step < 400; ++step) seen.insert(sample(logits.data(), 4, config(1.0, 0, 0.8, 1), step));
  EXPECT_TRUE(seen == (std::set<int64_t>{1, 2}));
}

// a +inf maximum: the +inf logits share the mass, everything else has weight 0; -inf is never drawn
TEST(Sampling, InfiniteLogits) {
  const std::vector<float> logits{1, kInf, -kInf, kInf, 0};
  std::set<int64_t> seen;
  for (uint64_t step = 0; step < 300; ++step) seen.insert(sample(logits.data(), logits.size(), config(0.7, 0, 1, 9), step));
  EXPECT_TRUE(seen == (std::set<int64_t>{1, 3}));
  const std::vector<float> masked{-kInf, 2, -kInf, NAN, 2.5f};
  seen.clear();
  for (uint64_t step = 0; step < 300; ++step) seen.insert(sample(masked.data(), masked.size(), config(1.3, 0, 1, 9), step));
  EXPECT_TRUE(seen == (std::set<int64_t>{1, 4}));
}

TEST(Sampling, BadConfigAndLogitsAreInputErrors) {
  const std::vector<float> logits{1, 2};
  auto run = [&](const SamplingConfig& c) { return input_error([&] { sample(logits.data(), 2, c, 0); }); };
  EXPECT_EQ(run(config(-1.0)), "temperature must be a finite number >= 0 (0: greedy), got -1.0");
  EXPECT_EQ(run(config(std::nan(""))), "temperature must be a finite number >= 0 (0: greedy), got nan");
  EXPECT_EQ(run(config(std::numeric_limits<double>::infinity())), "temperature must be a finite number >= 0 (0: greedy), got inf");
  EXPECT_EQ(run(config(1.0, -2)), "top_k must be >= 0 (0: off), got -2");
  EXPECT_EQ(run(config(1.0, 0, 0.0)), "top_p must be in (0, 1] (1: off), got 0.0");
  EXPECT_EQ(run(config(1.0, 0, 1.5)), "top_p must be in (0, 1] (1: off), got 1.5");
  EXPECT_EQ(run(config(0.0, 0, 0.0)), "top_p must be in (0, 1] (1: off), got 0.0") << "greedy checks the config too";
  EXPECT_EQ(input_error([&] { sample(logits.data(), 0, config(1.0), 0); }), "logits are empty");
  const std::vector<float> dead{NAN, -kInf, NAN};
  for (double t : {0.0, 1.0}) {
    EXPECT_EQ(input_error([&] { sample(dead.data(), 3, config(t), 0); }),
              "logits have no value above -inf: all 3 are NaN or -inf");
  }
}
