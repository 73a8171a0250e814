#include "array.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "buffer_pool.h"
#include "errors.h"
#include "run_limits.h"

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

void* Array::allocate(size_t itemsize, bool zero) {
  // every kernel output comes from here: broadcasting or a conv/pool output size computed from
  // hostile attributes must give an error (run_plan turns it into an ExecutionError), not OOM
  if (numel(shape) > kMaxElements)
    throw std::length_error("result of " + std::to_string(numel(shape)) + " elements exceeds the limit of " +
                            std::to_string(kMaxElements));
  // Within a run, the result counts against its memory budget from here until it is freed:
  // checked from the shape, before allocating.
  // A result's storage: it returns to its Module's pool when the last array using it goes.
  struct Buffer {
    std::unique_ptr<uint64_t[]> words;  // 8-byte aligned: any of the four dtypes
    size_t capacity = 0;                // words, when it came from (and returns to) run->pool
    std::shared_ptr<RunState> run;
    uint64_t bytes = 0;
    ~Buffer() {
      if (!run) return;
      run->live -= bytes;
      if (run->pool) run->pool->give(std::move(words), capacity);
    }
  };
  const uint64_t bytes = static_cast<uint64_t>(numel(shape)) * itemsize;
  const std::shared_ptr<RunState>& run = current_run();
  if (run && run->max_memory > 0 && run->live + bytes > run->max_memory)
    throw RunLimitError("a result of shape " + py_shape(shape) + " needs " + std::to_string(bytes) + " bytes; with " +
                        std::to_string(run->live.load()) + " bytes of results live that exceeds the memory budget of " +
                        std::to_string(run->max_memory) + " bytes (option max_memory)");
  auto buffer = std::make_shared<Buffer>();
  // kReadSlack more elements, and at least 16 bytes (int8 values): XNNPACK's kernels read (never
  // write) up to 16 bytes past an input
  const size_t slack = std::max(kReadSlack * itemsize, size_t{16});
  const size_t words = (static_cast<size_t>(bytes) + slack + 7) / 8;
  if (run && run->pool) {
    // a recycled buffer holds an earlier result: zeroed here when asked (only the result's bytes)
    buffer->words = run->pool->take(words, &buffer->capacity);
    if (zero) std::memset(buffer->words.get(), 0, static_cast<size_t>(bytes));
  } else {
    buffer->words = zero ? std::make_unique<uint64_t[]>(words) : std::unique_ptr<uint64_t[]>(new uint64_t[words]);
  }
  if (run) {
    buffer->run = run;
    buffer->bytes = bytes;
    run->live += bytes;
  }
  void* values = buffer->words.get();
  // aliasing constructor: the array keeps the buffer alive and points at its elements
  data = std::shared_ptr<const void>(buffer, values);
  return values;
}

Array Array::borrowed(Shape shape, const void* ptr, DType dtype, std::shared_ptr<const void> keepalive) {
  return Array{std::move(shape), std::shared_ptr<const void>(std::move(keepalive), ptr), dtype};
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
    case DType::Float32: break;
  }
  return "float32";
}

size_t dtype_size(DType dtype) {
  return visit_dtype(dtype, [](auto zero) { return sizeof(zero); });
}

size_t Tensor::size() const {
  switch (dtype) {
    case DType::Int64: return int64_data.size();
    case DType::Int32: return int32_data.size();
    case DType::Bool: return bool_data.size();
    case DType::Float32: break;
  }
  return data.size();
}

const void* Tensor::bytes() const {
  switch (dtype) {
    case DType::Int64: return int64_data.data();
    case DType::Int32: return int32_data.data();
    case DType::Bool: return bool_data.data();
    case DType::Float32: break;
  }
  return data.data();
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
