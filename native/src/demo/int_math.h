// Integer arithmetic as torch and numpy do it, without C++'s undefined behaviour: int64/int32
// sums and products wrap around (two's complement), and a float converted to an integer
// truncates toward zero, NaN or out of range giving the type's minimum (what x86's conversion
// instruction, and so torch and numpy on x86, give; C++ leaves it undefined).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace liteexport::demo_backend {

template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}

template <typename T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// v truncated toward zero into T (int64_t or int32_t).
template <typename T>
T truncate_to(double v) {
  // [min, -min) is exactly representable as doubles for both types: no rounding in the bounds
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  if (!(v >= lo && v < -lo)) return std::numeric_limits<T>::min();  // NaN fails both tests
  return static_cast<T>(v);
}

}  // namespace liteexport::demo_backend
