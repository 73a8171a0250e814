// The tensor file format shared by the CLI tool, the tests and tests/make_vectors.py:
// b"LXT1", uint32 ndim, int64 dims[ndim], float32 data (all little endian). read_file also takes
// numpy's .npy files (npy_io.h), for the other dtypes.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "liteexport/runtime.h"
#include "npy_io.h"

namespace liteexport::tensor_io {

inline Tensor read_tensor(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  auto take = [&](void* dst, size_t n) {
    if (pos + n > bytes.size()) throw std::runtime_error(path + ": truncated tensor file");
    std::memcpy(dst, bytes.data() + pos, n);
    pos += n;
  };
  char magic[4];
  take(magic, 4);
  if (std::memcmp(magic, "LXT1", 4) != 0) throw std::runtime_error(path + ": not an LXT1 tensor file");
  uint32_t ndim = 0;
  take(&ndim, 4);
  if (ndim > 16) throw std::runtime_error(path + ": too many dimensions");
  Tensor t;
  t.shape.resize(ndim);
  int64_t count = 1;
  for (auto& d : t.shape) {
    take(&d, 8);
    if (d < 0 || d > (int64_t{1} << 32)) throw std::runtime_error(path + ": bad dimension");
    count *= d;
  }
  if (static_cast<size_t>(count) * 4 != bytes.size() - pos) throw std::runtime_error(path + ": wrong data size");
  t.data.resize(static_cast<size_t>(count));
  if (count) take(t.data.data(), static_cast<size_t>(count) * 4);
  return t;
}

// A tensor file of either format: numpy's .npy (float32, int64, int32, bool) by its name, else LXT1.
inline Tensor read_file(const std::string& path) {
  const std::string npy = ".npy";
  const bool is_npy = path.size() >= npy.size() && path.compare(path.size() - npy.size(), npy.size(), npy) == 0;
  return is_npy ? npy_io::read_npy(path) : read_tensor(path);
}

inline void write_tensor(const std::string& path, const Tensor& t) {
  std::ofstream out(path, std::ios::binary);
  uint32_t ndim = static_cast<uint32_t>(t.shape.size());
  out.write("LXT1", 4);
  out.write(reinterpret_cast<const char*>(&ndim), 4);
  out.write(reinterpret_cast<const char*>(t.shape.data()), static_cast<std::streamsize>(8 * t.shape.size()));
  out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(4 * t.data.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// max |a - b| - (atol + rtol * |b|) <= 0 for every element (numpy's allclose), same shapes;
// int64, int32 and bool values equal exactly, and the dtypes the same.
inline bool allclose(const Tensor& got, const Tensor& expected, double atol, double rtol, std::string* why) {
  if (got.shape != expected.shape) {
    *why = "shape mismatch";
    return false;
  }
  if (got.dtype != expected.dtype) {
    *why = std::string("dtype ") + dtype_name(got.dtype) + ", expected " + dtype_name(expected.dtype);
    return false;
  }
  if (got.dtype != DType::Float32) {
    const bool same = got.size() == expected.size() &&
                      std::memcmp(got.bytes(), expected.bytes(), got.size() * dtype_size(got.dtype)) == 0;
    if (!same) *why = std::string(dtype_name(got.dtype)) + " values differ";
    return same;
  }
  for (size_t i = 0; i < got.data.size(); ++i) {
    double a = got.data[i], b = expected.data[i];
    bool both_nan = a != a && b != b;
    if (!both_nan && !(std::abs(a - b) <= atol + rtol * std::abs(b))) {
      *why = "element " + std::to_string(i) + ": " + std::to_string(a) + " vs " + std::to_string(b);
      return false;
    }
  }
  return true;
}

}  // namespace liteexport::tensor_io
