// Verification of a PTMF buffer before anything reads it: the flatbuffers verifier for
// offsets/lengths/union tags, then the index checks of runtime_py's ptmf_verify.py for what
// the format leaves to convention (ivalue, storage, object-type, constant, register and jump
// indexes, tensor extents, no value containing itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mobile_bytecode_generated.h"

namespace liteexport {

namespace ser = torch::jit::mobile::serialization;

constexpr uint32_t kBytecodeVersion = 9;

// Bytes per element of a c10::ScalarType runtime_py knows, 0 for an unknown one.
size_t scalar_type_size(int scalar_type);

// One tensor's extent: its storage index, sizes and strides, and its elements within the storage.
void check_tensor_extent(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where);

// check_tensor_extent, then a quantized tensor's parameters (narrow_weights.h).
void check_tensor(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where);

// Throws Error(Format) naming what is wrong and where; returns the verified root.
// `name` names the bundle in messages (its path, or "bundle").
const ser::Module* verify_bundle(const uint8_t* data, size_t size, const std::string& name);

// ivalue indexes `value` refers to (container items, object state/attrs/setstate, enum
// value, function constants): the edges of the acyclicity check and of the loader's build order.
std::vector<uint32_t> ivalue_children(const ser::IValue* value);

}  // namespace liteexport
