// exp, expm1 and tanh in float, computed by the core itself rather than by the C library: libm's
// last bit differs between C libraries and ABIs (glibc x86-64 vs aarch64 gave different tanh
// bits; a phone has bionic's), and these are plain float operations that, built with
// -ffp-contract=off, give the same bits everywhere. Within 2 ulp of the exact results for exp,
// 1e-7 absolute for tanh (tests/test_kernels.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace liteexport::demo_backend {

// 2^n as a float, for n in [-126, 127] (a normal number: exponent bits only).
inline float pow2i(int n) {
  const uint32_t bits = static_cast<uint32_t>(n + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// e^r for |r| <= ln(2)/2: Taylor to degree 7 (truncation below 1e-8 relative).
inline float exp_reduced(float r) {
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

// e^x = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 (ln 2 in two parts, Cody and Waite:
// n * kLn2Hi is exact, so r carries no error from the reduction). No branches (selects only), so
// loops over it vectorize: 2^n is applied as 2^(n/2) * 2^(n - n/2), both normal and both exact
// scalings, so a subnormal result is rounded once, as ldexp would.
inline float exp_float(float x) {
  constexpr float kHi = 88.72283935546875f, kLo = -103.97208404541015625f;
  constexpr float kLn2Hi = 0.693145751953125f, kLn2Lo = 1.428606765330187045e-06f;
  float xc = x < kHi ? x : kHi;
  xc = xc > kLo ? xc : kLo;  // a NaN x becomes kLo here; the last select restores it
  const int n = static_cast<int>(xc * 1.44269504088896341f + (xc < 0 ? -0.5f : 0.5f));
  const float nf = static_cast<float>(n);
  const float p = exp_reduced((xc - nf * kLn2Hi) - nf * kLn2Lo);
  const int half = n / 2;
  float e = p * pow2i(half) * pow2i(n - half);
  e = x > kHi ? std::numeric_limits<float>::infinity() : e;
  e = x < kLo ? 0.0f : e;
  return x != x ? x : e;
}

// e^x - 1 without the cancellation of exp_float(x) - 1 near 0: Taylor below |x| = 0.5.
inline float expm1_float(float x) {
  if (x > 0.5f || x < -0.5f) return exp_float(x) - 1.0f;
  float p = 1.0f / 3628800.0f;
  for (float d : {362880.0f, 40320.0f, 5040.0f, 720.0f, 120.0f, 24.0f, 6.0f, 2.0f}) p = p * x + 1.0f / d;
  return (p * x + 1.0f) * x;
}

// tanh(x) = expm1(2x) / (expm1(2x) + 2), odd; 1 in float beyond |x| = 9.
inline float tanh_float(float x) {
  if (x != x) return x;
  const float ax = x < 0 ? -x : x;
  if (ax > 9.0f) return x < 0 ? -1.0f : 1.0f;
  const float m = expm1_float(2.0f * ax);
  const float t = m / (m + 2.0f);
  return x < 0 ? -t : t;
}

}  // namespace liteexport::demo_backend
