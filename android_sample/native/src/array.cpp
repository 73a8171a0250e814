#include "array.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace liteexport {

int64_t numel(const Shape& shape) {
  // 0 if any size is 0; saturates at INT64_MAX instead of overflowing (hostile shapes), so a
  // caller's size check or allocation fails cleanly
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  return n;
}

Array Array::zeros(Shape shape, float** out) {
  // every kernel output comes from here: broadcasting or a conv/pool output size computed from
  // hostile attributes must give an error (run_plan turns it into an ExecutionError), not OOM
  if (numel(shape) > kMaxElements)
    throw std::length_error("result of " + std::to_string(numel(shape)) + " elements exceeds the limit of " +
                            std::to_string(kMaxElements));
  auto values = std::make_shared<std::vector<float>>(static_cast<size_t>(numel(shape)), 0.0f);
  *out = values->data();
  // aliasing constructor: the array keeps the vector alive and points at its elements
  return Array{std::move(shape), std::shared_ptr<const float>(values, values->data())};
}

Array Array::from_vector(Shape shape, std::vector<float> values) {
  auto owned = std::make_shared<std::vector<float>>(std::move(values));
  return Array{std::move(shape), std::shared_ptr<const float>(owned, owned->data())};
}

Array Array::borrowed(Shape shape, const float* ptr, std::shared_ptr<const void> keepalive) {
  return Array{std::move(shape), std::shared_ptr<const float>(std::move(keepalive), ptr)};
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  // Only a zero-size array can have a stride product past int64 (a non-empty one is at most
  // kMaxElements); such an array is never indexed, so its strides saturate instead of overflowing.
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    if (__builtin_mul_overflow(strides[i], shape[i], &strides[i - 1])) strides[i - 1] = INT64_MAX;
  return strides;
}

}  // namespace liteexport
