// numpy's .npy files (one array) and .npz archives (a zip of .npy files) for the host tool, in the
// four dtypes of compiled values: float32 '<f4', int64 '<i8', int32 '<i4', bool '|b1'. The reader
// takes what np.save writes (format 1.0-3.0, C order); anything else is an input error naming the
// file (the host tool exits 6). The .npz writer stores its members uncompressed (zip method 0),
// which np.load reads.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "liteexport/runtime.h"

namespace liteexport::npy_io {

namespace detail {

[[noreturn]] inline void bad(const std::string& path, const std::string& why) {
  throw Error(ErrorKind::Input, path + ": not a usable .npy file: " + why);
}

// The value of `key` in the header dict's text ('descr': '<f4', 'shape': (2, 3), ...).
inline std::string field(const std::string& header, const std::string& key, const std::string& path) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) bad(path, "its header has no '" + key + "'");
  size_t start = header.find(':', at);
  if (start == std::string::npos) bad(path, "its header is malformed");
  ++start;
  while (start < header.size() && header[start] == ' ') ++start;
  const char open = start < header.size() ? header[start] : '\0';
  size_t end;
  if (open == '(') end = header.find(')', start) + 1;
  else if (open == '\'') end = header.find('\'', start + 1) + 1;
  else end = header.find_first_of(",}", start);
  if (end == std::string::npos || end == 0 || end <= start) bad(path, "its header is malformed");
  return header.substr(start, end - start);
}

inline std::vector<int64_t> parse_shape(const std::string& text, const std::string& path) {
  std::vector<int64_t> shape;
  size_t i = 1;  // after '('
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ')') break;
    int64_t d = 0;
    size_t digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
      if (d > (int64_t{1} << 40)) bad(path, "a dimension is too large");
      d = d * 10 + (text[i] - '0');
    }
    if (digits == 0) bad(path, "its shape " + text + " is not a tuple of sizes");
    shape.push_back(d);
    if (shape.size() > 16) bad(path, "it has more than 16 dimensions");
  }
  return shape;
}

inline uint32_t crc32(const uint8_t* data, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

template <typename T>
void put(std::vector<uint8_t>& out, T v) {  // little endian, as zip and numpy's '<' want
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
}

}  // namespace detail

inline const char* descr(DType dtype) {
  switch (dtype) {
    case DType::Int64: return "<i8";
    case DType::Int32: return "<i4";
    case DType::Bool: return "|b1";
    case DType::Float32: break;
  }
  return "<f4";
}

inline Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Input, "cannot open " + path);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) detail::bad(path, "no \\x93NUMPY magic");
  const uint8_t major = bytes[6];
  size_t header_len, pos;
  if (major == 1) {
    header_len = bytes[8] | (size_t{bytes[9]} << 8);
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) detail::bad(path, "truncated header");
    header_len = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    pos = 12;
  } else {
    detail::bad(path, "format version " + std::to_string(major) + " (this tool reads 1 to 3)");
  }
  if (header_len > bytes.size() - pos) detail::bad(path, "truncated header");
  const std::string header(bytes.begin() + static_cast<ptrdiff_t>(pos), bytes.begin() + static_cast<ptrdiff_t>(pos + header_len));
  pos += header_len;
  const std::string d = detail::field(header, "descr", path);
  if (detail::field(header, "fortran_order", path) != "False") detail::bad(path, "Fortran order (save a C-ordered array)");
  Tensor t;
  t.shape = detail::parse_shape(detail::field(header, "shape", path), path);
  bool known = false;
  for (DType dtype : {DType::Float32, DType::Int64, DType::Int32, DType::Bool})
    if (d == std::string("'") + descr(dtype) + "'" || (dtype == DType::Bool && d == "'<b1'")) {
      t.dtype = dtype;
      known = true;
    }
  if (!known) detail::bad(path, "dtype " + d + " (this tool takes float32 <f4, int64 <i8, int32 <i4 and bool |b1)");
  int64_t count = 1;
  for (int64_t dim : t.shape)
    if (__builtin_mul_overflow(count, dim, &count)) detail::bad(path, "its shape has too many elements");
  const size_t itemsize = dtype_size(t.dtype);
  if (static_cast<uint64_t>(count) > (bytes.size() - pos) / itemsize || (bytes.size() - pos) != static_cast<size_t>(count) * itemsize)
    detail::bad(path, "its data holds " + std::to_string(bytes.size() - pos) + " bytes, its shape needs " +
                          std::to_string(count) + " values of " + std::to_string(itemsize) + " bytes");
  const auto n = static_cast<size_t>(count);
  const uint8_t* data = bytes.data() + pos;
  switch (t.dtype) {
    case DType::Int64: t.int64_data.resize(n); std::memcpy(t.int64_data.data(), data, n * itemsize); break;
    case DType::Int32: t.int32_data.resize(n); std::memcpy(t.int32_data.data(), data, n * itemsize); break;
    case DType::Bool: t.bool_data.assign(data, data + n); break;
    case DType::Float32: t.data.resize(n); std::memcpy(t.data.data(), data, n * itemsize); break;
  }
  return t;
}

// The bytes np.save writes for `t` (format 1.0; the header padded to a multiple of 64 bytes).
inline std::vector<uint8_t> npy_bytes(const Tensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  shape += t.shape.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + descr(t.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  detail::put(out, static_cast<uint16_t>(header.size()));
  out.insert(out.end(), header.begin(), header.end());
  const auto* data = static_cast<const uint8_t*>(t.bytes());
  out.insert(out.end(), data, data + t.size() * dtype_size(t.dtype));
  return out;
}

inline void write_npy(const std::string& path, const Tensor& t) {
  const std::vector<uint8_t> data = npy_bytes(t);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// An .npz of `members` (name without ".npy", tensor), stored uncompressed.
inline void write_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& members) {
  std::vector<uint8_t> zip, directory;
  for (const auto& [name, tensor] : members) {
    const std::vector<uint8_t> data = npy_bytes(tensor);
    const std::string file = name + ".npy";
    const uint32_t crc = detail::crc32(data.data(), data.size()), offset = static_cast<uint32_t>(zip.size());
    // local file header, then the central directory's record of the same member
    for (std::vector<uint8_t>* record : {&zip, &directory}) {
      const bool central = record == &directory;
      detail::put(*record, central ? uint32_t{0x02014b50} : uint32_t{0x04034b50});
      if (central) detail::put(*record, uint16_t{20});  // made by: zip 2.0
      detail::put(*record, uint16_t{20});               // needed to extract: 2.0
      detail::put(*record, uint16_t{0});                // flags
      detail::put(*record, uint16_t{0});                // method: stored
      detail::put(*record, uint32_t{0x00210000});       // time 00:00, date 1980-01-01
      detail::put(*record, crc);
      detail::put(*record, static_cast<uint32_t>(data.size()));
      detail::put(*record, static_cast<uint32_t>(data.size()));
      detail::put(*record, static_cast<uint16_t>(file.size()));
      detail::put(*record, uint16_t{0});  // extra field
      if (central) {
        detail::put(*record, uint16_t{0});  // comment
        detail::put(*record, uint16_t{0});  // disk
        detail::put(*record, uint16_t{0});  // internal attributes
        detail::put(*record, uint32_t{0});  // external attributes
        detail::put(*record, offset);
      }
      record->insert(record->end(), file.begin(), file.end());
    }
    zip.insert(zip.end(), data.begin(), data.end());
  }
  const auto directory_offset = static_cast<uint32_t>(zip.size());
  zip.insert(zip.end(), directory.begin(), directory.end());
  detail::put(zip, uint32_t{0x06054b50});
  detail::put(zip, uint16_t{0});
  detail::put(zip, uint16_t{0});
  detail::put(zip, static_cast<uint16_t>(members.size()));
  detail::put(zip, static_cast<uint16_t>(members.size()));
  detail::put(zip, static_cast<uint32_t>(directory.size()));
  detail::put(zip, directory_offset);
  detail::put(zip, uint16_t{0});  // comment
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(zip.data()), static_cast<std::streamsize>(zip.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace liteexport::npy_io
