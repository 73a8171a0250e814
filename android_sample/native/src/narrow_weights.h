// Weights stored narrow: float16 (liteexport export --weights fp16) and per-channel or
// per-tensor qint8 (--quantize dynamic-int8, torch's quantized tensors) are float32 values
// stored smaller. The loader widens them to float32 once, here, so every kernel sees float32,
// as runtime_py and the torch backend do.
#pragma once

#include <string>

#include "array.h"
#include "bundle_verify.h"

namespace liteexport {

// c10::ScalarType numbers of the narrow storages the loader widens.
constexpr int kHalf = 5;
constexpr int kQInt8 = 12;

// Checks a quantized tensor's parameters (bundle_verify): qint8 only, per-tensor affine or per
// channel affine with a 1-d float64 scale and int64 zero point per index of its axis.
void check_quantized(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where);

// The float32 Array of a verified float16 or qint8 tensor (contiguous, as liteexport writes it).
Array widen_weight(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where);

}  // namespace liteexport
