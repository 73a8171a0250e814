// The core's own numerics, which make results the same on every ABI:
//  - the GEMM kernels against plain scalar loops that perform the same float operations in the
//    order gemm.h promises: equal to the bit (not within a tolerance), at sizes that exercise
//    every tile and edge (rows and columns not multiples of the tiles, k not of 16);
//  - float_math.h's exp and tanh against the C library's double-precision ones.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "demo/float_math.h"
#include "demo/gemm.h"

using namespace liteexport::demo_backend;

namespace {

std::vector<float> randoms(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

// at every tile and edge: rows and columns not multiples of the tiles, k not of 16
TEST(Numerics, GemmKernelsGiveTheSequentialSumsBits) {
  std::mt19937 rng(7);
  const int64_t sizes[][3] = {{1, 1, 1}, {3, 17, 5}, {8, 33, 16}, {13, 64, 40}, {17, 5, 300}, {64, 48, 27}, {2, 100, 1}};
  for (const auto& s : sizes) {
    const int64_t m = s[0], cols = s[1], k = s[2];
    const std::string what = std::to_string(m) + "x" + std::to_string(cols) + "x" + std::to_string(k);
    // gemm_acc with leading dimensions wider than the matrices, onto a non-zero C
    const int64_t lda = k + 3, ldb = cols + 5, ldc = cols + 2;
    auto a = randoms(m * lda, rng), b = randoms(k * ldb, rng), c = randoms(m * ldc, rng);
    auto expected = c;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t p = 0; p < k; ++p) expected[i * ldc + j] += a[i * lda + p] * b[p * ldb + j];
    gemm_acc(m, cols, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
    EXPECT_TRUE(same_bits(c, expected)) << "gemm_acc " + what + " differs from the sequential sum";
    // gemm_bt: 16 lane sums, the fixed pairwise tree, then the tail in order
    auto w = randoms(cols * lda, rng);
    std::vector<float> y(m * ldc, -1.0f), expected_bt = y;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        float lane[16] = {};
        const int64_t k_vec = k - k % 16;
        for (int64_t p = 0; p < k_vec; ++p) lane[p % 16] += a[i * lda + p] * w[j * lda + p];
        float half[8], quarter[4];
        for (int l = 0; l < 8; ++l) half[l] = lane[l] + lane[l + 8];
        for (int l = 0; l < 4; ++l) quarter[l] = half[l] + half[l + 4];
        float sum = (quarter[0] + quarter[2]) + (quarter[1] + quarter[3]);
        for (int64_t p = k_vec; p < k; ++p) sum += a[i * lda + p] * w[j * lda + p];
        expected_bt[i * ldc + j] = sum;
      }
    gemm_bt(m, cols, k, a.data(), lda, w.data(), lda, y.data(), ldc);
    EXPECT_TRUE(same_bits(y, expected_bt)) << "gemm_bt " + what + " differs from the lane-ordered sum";
  }
}

// exp within 2 ulp over its whole range (subnormal results: within one subnormal step), tanh within
// 1e-7 absolute and 2e-7 relative
TEST(Numerics, ExpAndTanhWithinTheirBounds) {
  double worst_exp = 0, worst_tanh = 0;
  for (float x = -104.0f; x <= 89.0f; x += 0.00731f) {
    const double e = std::exp(static_cast<double>(x)), got = exp_float(x);
    const double ulp = e < 1.1754943508222875e-38 ? 1.401298464324817e-45 : std::ldexp(1.0, std::ilogb(e) - 23);
    if (std::isfinite(e) && e < 3.4028234663852886e38) worst_exp = std::max(worst_exp, std::abs(got - e) / ulp);
  }
  for (float x = -10.0f; x <= 10.0f; x += 0.000173f) {
    const double t = std::tanh(static_cast<double>(x)), got = tanh_float(x);
    worst_tanh = std::max(worst_tanh, std::abs(got - t) / (1e-7 + 2e-7 * std::abs(t)));
  }
  EXPECT_TRUE(worst_exp <= 2.0) << "exp_float: " + std::to_string(worst_exp) + " ulp";
  EXPECT_TRUE(worst_tanh <= 1.0) << "tanh_float: error " + std::to_string(worst_tanh) + " x (1e-7 + 2e-7 |tanh|)";
}

// their special values as IEEE and torch give them
TEST(Numerics, ExpAndTanhSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(exp_float(inf) == inf && exp_float(-inf) == 0.0f && std::isnan(exp_float(nan)) && exp_float(0.0f) == 1.0f)
      << "exp_float special values";
  EXPECT_TRUE(tanh_float(inf) == 1.0f && tanh_float(-inf) == -1.0f && std::isnan(tanh_float(nan)) && tanh_float(0.0f) == 0.0f &&
      tanh_float(1e-30f) == 1e-30f)
      << "tanh_float special values";
}
