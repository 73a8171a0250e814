// Overflow-checked int64 arithmetic for shapes, strides and element counts. Attribute values
// and shapes come from the bundle (the verifier bounds their types, not their products), so
// every such product or sum goes through here: an overflow is a KernelError-style exception
// (std::overflow_error -> the instruction's ExecutionError), never undefined behaviour.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace liteexport {

inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw std::overflow_error(std::string(what) + " overflows int64: " + std::to_string(a) + " * " + std::to_string(b));
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw std::overflow_error(std::string(what) + " overflows int64: " + std::to_string(a) + " + " + std::to_string(b));
  return r;
}

}  // namespace liteexport
