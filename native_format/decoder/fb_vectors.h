// Reading flatbuffers vectors of 8-byte scalars safely: the verifier checks a vector's length
// prefix for 4-byte alignment only, so a crafted buffer can place a [long]/[double] vector at
// an address that is not 8-byte aligned; the generated accessors would then do a misaligned
// load (undefined behaviour, a SIGBUS on some ARM cores). memcpy reads any alignment.
#pragma once

#include <cstring>
#include <vector>

#include "flatbuffers/flatbuffers.h"

namespace liteexport {

template <typename Out, typename T>
std::vector<Out> read_vector(const flatbuffers::Vector<T>* v) {
  std::vector<Out> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  const uint8_t* p = v->Data();
  for (size_t i = 0; i < v->size(); ++i) {
    T x;
    std::memcpy(&x, p + i * sizeof(T), sizeof(T));
    out.push_back(static_cast<Out>(flatbuffers::EndianScalar(x)));
  }
  return out;
}

}  // namespace liteexport
