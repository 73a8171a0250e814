// Register-blocked GEMM kernels (see gemm.h for the numerics they guarantee).
//
// One source serves every ISA: the kernels are templates on 16-float generic vectors, inlined into
// per-ISA entry points. On x86-64 those are compiled three times (baseline SSE2, AVX2, AVX-512
// through target attributes) and the widest the CPU supports is picked once at run time; on ARM
// the baseline is NEON. The tile sizes only change speed (registers: 16 on SSE2/AVX2/armv7, 32 on
// AVX-512/aarch64), never results.
#include "gemm.h"

#include <algorithm>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../run_limits.h"

// 64-byte vectors are passed between always-inlined helpers only, never across an ABI boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace liteexport::demo_backend {
namespace {

typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V4 __attribute__((vector_size(16)));
constexpr int64_t kW = 16;  // lanes: the width of a tile's columns, and gemm_bt's partial sums

#define GEMM_INLINE inline __attribute__((always_inline))

GEMM_INLINE V16 load(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof v);  // unaligned: mapped weights are only 4-byte aligned
  return v;
}

GEMM_INLINE void store(float* p, V16 v) { std::memcpy(p, &v, sizeof v); }

// --- gemm_acc: outer products, a column strip of 16 and MR rows at a time ---

// c[r, 0:16] += sum_p pa[p * MR + r] * b[p, 0:16] for r < rows, p in order.
template <int MR>
GEMM_INLINE void outer_tile(int64_t k, const float* pa, const float* b, int64_t ldb, float* c, int64_t ldc,
                            int64_t rows) {
  V16 acc[MR];
  for (int r = 0; r < MR; ++r) acc[r] = r < rows ? load(c + r * ldc) : V16{};
  for (int64_t p = 0; p < k; ++p) {
    const V16 bv = load(b + p * ldb);
    for (int r = 0; r < MR; ++r) acc[r] += pa[p * MR + r] * bv;
  }
  for (int r = 0; r < MR; ++r)
    if (r < rows) store(c + r * ldc, acc[r]);
}

template <int MR>
GEMM_INLINE void outer_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                            float* c, int64_t ldc) {
  // A packed in panels of MR rows, p-major (pa[p * MR + r]): one broadcast load per product;
  // rows past m are zeros and never stored.
  const int64_t panels = (m + MR - 1) / MR;
  std::vector<float> packed(static_cast<size_t>(panels * MR * k), 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) packed[((i / MR) * k + p) * MR + i % MR] = a[i * lda + p];
  const int64_t n_full = n - n % kW;
  for (int64_t j = 0; j < n_full; j += kW)  // the strip of b (k x 16) stays in L1/L2 for every panel
    for (int64_t t = 0; t < panels; ++t)
      outer_tile<MR>(k, packed.data() + t * MR * k, b + j, ldb, c + t * MR * ldc + j, ldc,
                     m - t * MR < MR ? m - t * MR : MR);
  if (n_full == n) return;
  // last columns: the same tile on zero-padded copies of b's and c's strips
  const int64_t cols = n - n_full;
  std::vector<float> bs(static_cast<size_t>(k * kW), 0.0f), cs(static_cast<size_t>(MR * kW));
  for (int64_t p = 0; p < k; ++p) std::memcpy(&bs[p * kW], b + p * ldb + n_full, cols * sizeof(float));
  for (int64_t t = 0; t < panels; ++t) {
    const int64_t rows = m - t * MR < MR ? m - t * MR : MR;
    for (int64_t r = 0; r < rows; ++r) std::memcpy(&cs[r * kW], c + (t * MR + r) * ldc + n_full, cols * sizeof(float));
    outer_tile<MR>(k, packed.data() + t * MR * k, bs.data(), kW, cs.data(), kW, rows);
    for (int64_t r = 0; r < rows; ++r) std::memcpy(c + (t * MR + r) * ldc + n_full, &cs[r * kW], cols * sizeof(float));
  }
}

// --- gemm_bt: dot products, RB rows of a against OB rows of b at a time ---

// The fixed reduction order of gemm.h: halves added lane by lane, down to one.
GEMM_INLINE float lane_sum(const V16& v) {
  V8 lo8, hi8;
  std::memcpy(&lo8, &v, sizeof lo8);
  std::memcpy(&hi8, reinterpret_cast<const char*>(&v) + sizeof lo8, sizeof hi8);
  const V8 s8 = lo8 + hi8;
  V4 lo4, hi4;
  std::memcpy(&lo4, &s8, sizeof lo4);
  std::memcpy(&hi4, reinterpret_cast<const char*>(&s8) + sizeof lo4, sizeof hi4);
  const V4 s4 = lo4 + hi4;
  return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

template <int RB, int OB>
GEMM_INLINE void dot_tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                          int64_t ldc) {
  V16 acc[RB][OB] = {};
  const int64_t k_vec = k - k % kW;
  for (int64_t p = 0; p < k_vec; p += kW) {
    V16 av[RB];
    for (int r = 0; r < RB; ++r) av[r] = load(a + r * lda + p);
    for (int o = 0; o < OB; ++o) {
      const V16 bv = load(b + o * ldb + p);
      for (int r = 0; r < RB; ++r) acc[r][o] += av[r] * bv;
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int o = 0; o < OB; ++o) {
      float s = lane_sum(acc[r][o]);
      for (int64_t p = k_vec; p < k; ++p) s += a[r * lda + p] * b[o * ldb + p];
      c[r * ldc + o] = s;
    }
}

template <int RB, int OB>
GEMM_INLINE void dot_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                          float* c, int64_t ldc) {
  const int64_t m_full = m - m % RB, n_full = n - n % OB;
  // OB rows of b (the weights) stay in L1 while every row of a passes them: b is read once
  for (int64_t j = 0; j < n_full; j += OB) {
    for (int64_t i = 0; i < m_full; i += RB) dot_tile<RB, OB>(k, a + i * lda, lda, b + j * ldb, ldb, c + i * ldc + j, ldc);
    for (int64_t i = m_full; i < m; ++i) dot_tile<1, OB>(k, a + i * lda, lda, b + j * ldb, ldb, c + i * ldc + j, ldc);
  }
  for (int64_t j = n_full; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) dot_tile<1, 1>(k, a + i * lda, lda, b + j * ldb, ldb, c + i * ldc + j, ldc);
}

using GemmFn = void (*)(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t);

#define GEMM_ENTRY(name, attr, body)                                                                               \
  attr void name(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,        \
                 float* c, int64_t ldc) {                                                                          \
    body(m, n, k, a, lda, b, ldb, c, ldc);                                                                         \
  }

#if defined(__aarch64__)
GEMM_ENTRY(outer_base, , outer_gemm<6>)  // 32 NEON registers: 6 x 4 accumulators
GEMM_ENTRY(dot_base, , (dot_gemm<2, 2>))
#else
GEMM_ENTRY(outer_base, , outer_gemm<2>)  // 16 registers of 4 lanes (SSE2, armv7 NEON)
GEMM_ENTRY(dot_base, , (dot_gemm<1, 2>))
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
GEMM_ENTRY(outer_avx2, __attribute__((target("avx2"))), outer_gemm<6>)
GEMM_ENTRY(dot_avx2, __attribute__((target("avx2"))), (dot_gemm<2, 2>))
GEMM_ENTRY(outer_avx512, __attribute__((target("avx512f"))), outer_gemm<16>)  // 32 registers
GEMM_ENTRY(dot_avx512, __attribute__((target("avx512f"))), (dot_gemm<4, 4>))

struct Kernels {
  GemmFn outer, dot;
};

Kernels pick() {
  __builtin_cpu_init();
  // LITEEXPORT_GEMM_ISA=sse2|avx2 caps the choice: the tests run the narrower kernels on a wider CPU
  // and check they give the same bits (tests/android/test_android_sample.py)
  const char* cap = std::getenv("LITEEXPORT_GEMM_ISA");
  const std::string isa = cap != nullptr ? cap : "";
  if (isa.empty() && __builtin_cpu_supports("avx512f")) return {outer_avx512, dot_avx512};
  if (isa != "sse2" && __builtin_cpu_supports("avx2")) return {outer_avx2, dot_avx2};
  return {outer_base, dot_base};
}

const Kernels& kernels() {
  static const Kernels chosen = pick();
  return chosen;
}
GemmFn outer_kernel() { return kernels().outer; }
GemmFn dot_kernel() { return kernels().dot; }
#else
GemmFn outer_kernel() { return outer_base; }
GemmFn dot_kernel() { return dot_base; }
#endif

// A large product in blocks of rows of about 2^28 multiply-adds (tens of ms), with the run's
// deadline checked between them (an 8192^3 matmul is 2^39). Rows are independent, so the
// blocking leaves every output's operation sequence, and so its bits, unchanged; blocks are
// multiples of 16 rows, the widest register panel, so no panel is padded more than without them.
void in_row_blocks(GemmFn kernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                   int64_t ldb, float* c, int64_t ldc) {
  const int64_t per_row = std::max<int64_t>(n * std::max<int64_t>(k, 1), 1);
  const int64_t rows = std::max<int64_t>((int64_t{1} << 28) / per_row / 16 * 16, 16);
  for (int64_t i = 0; i < m; i += rows) {
    check_deadline();
    kernel(std::min(rows, m - i), n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
  }
}

}  // namespace

void gemm_acc(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  in_row_blocks(outer_kernel(), m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm_bt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
             int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  in_row_blocks(dot_kernel(), m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace liteexport::demo_backend
