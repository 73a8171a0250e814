// The matrix products under linear, matmul and conv2d: register-blocked kernels on 16-float
// vectors (GCC/Clang generic vectors: SSE2 or AVX2 or AVX-512 on x86-64, picked at run time;
// NEON on ARM).
//
// Each output element is computed by the same sequence of float operations whatever the vector
// width, the blocking or the ISA (with -ffp-contract=off), so results are bit-identical on every
// ABI the app ships:
//  - gemm_acc: c[i, j] starts from its current value and adds a[i, p] * b[p, j] for p = 0, 1, ...
//    in order;
//  - gemm_bt:  c[i, j] = 16 partial sums (lane l adds a[i, p] * b[j, p] for p = l, l + 16, ...
//    below k rounded down to 16), added in a fixed pairwise tree, then the last k % 16 products in
//    order.
#pragma once

#include <cstdint>

namespace liteexport::demo_backend {

// C[m, n] += A[m, k] · B[k, n]; row-major, with leading dimensions (elements).
void gemm_acc(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc);

// C[m, n] = A[m, k] · B[n, k]ᵀ (both operands contiguous along k: a linear layer's x @ W.T, with
// no copy of the weights); C overwritten.
void gemm_bt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
             int64_t ldc);

}  // namespace liteexport::demo_backend
