// Weights stored narrow: float16 (liteexport export --weights fp16) and per-channel or
// per-tensor qint8 (--quantize dynamic-int8, torch's quantized tensors) are float32 values
// stored smaller. float16 weights are widened to float32 at load, here, so every kernel sees
// float32, as runtime_py and the torch backend do. A qint8 weight is kept as stored (the int8
// convolutions of demo/xnn_int8.cpp read it in place) and widened once, when a float kernel
// first needs it: the load of an int8 model does not pay for widening weights no float kernel reads.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "array.h"
#include "bundle_verify.h"

namespace liteexport {

// c10::ScalarType numbers of the narrow storages the loader widens.
constexpr int kHalf = 5;
constexpr int kQInt8 = 12;

// Checks a quantized tensor's parameters (bundle_verify): qint8 only, per-tensor affine or per
// channel affine with a 1-d float64 scale and int64 zero point per index of its axis.
void check_quantized(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where);

// A qint8 weight as the bundle stores it: int8 values (in the mapped bundle) and their grid,
// value = (q - zero_point) * scale per tensor or per index of `axis`.
struct QuantizedWeight {
  Shape shape;
  const int8_t* values = nullptr;  // numel(shape), contiguous
  std::shared_ptr<const void> keepalive;
  std::vector<double> scales;        // one (per tensor) or one per index of `axis` (torch's float64)
  std::vector<int64_t> zero_points;  // as many
  int64_t axis = -1;                 // per channel: the channel axis; per tensor: -1

  // Every zero point 0 (torch's symmetric weights), as XNNPACK's int8 convolutions take them.
  bool symmetric() const;
  // The float32 values, as torch dequantizes them: computed on the first call, then shared.
  const Array& floats() const;

 private:
  mutable std::once_flag widened_once_;
  mutable Array widened_;
};

// The float32 Array of a verified float16 tensor (contiguous, as liteexport writes it).
Array widen_weight(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where);

// The Array of a verified qint8 tensor: its `quantized` is the weight as stored; its float32 `data`
// is null until float_values() widens it.
Array quantized_weight(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where,
                       std::shared_ptr<const void> keepalive);

// `a` with float32 values: a qint8 weight widened (once), any other array as it is.
const Array& float_values(const Array& a);

}  // namespace liteexport
