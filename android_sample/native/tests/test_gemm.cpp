// The GEMM kernels against plain scalar loops that perform the same float operations in the order
// gemm.h promises: results must be equal to the bit (not within a tolerance), at sizes that
// exercise every tile and edge (rows and columns not multiples of the tiles, k not of 16).
#include <cstring>
#include <random>
#include <vector>

#include "check.h"
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

int run_gemm_tests() {
  std::mt19937 rng(7);
  int n = 0;
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
    CHECK(same_bits(c, expected), "gemm_acc " + what + " differs from the sequential sum");
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
    CHECK(same_bits(y, expected_bt), "gemm_bt " + what + " differs from the lane-ordered sum");
    n += 2;
  }
  return n;
}
