#include "narrow_weights.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "errors.h"

namespace liteexport {

namespace {

constexpr int kPerTensorAffine = 0, kPerChannelAffine = 1;  // c10::QScheme
constexpr int kDouble = 7, kLong = 4;

// IEEE binary16 to binary32, exactly (every half is a float): normal, subnormal, zero, inf, NaN.
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: shift the mantissa up to an implicit leading one
    uint32_t shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((113u - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

Shape sizes_of(const ser::TensorMetadata* t) {
  Shape shape;
  if (t->sizes() != nullptr) shape.assign(t->sizes()->begin(), t->sizes()->end());
  return shape;
}

// The first byte of a verified tensor's elements.
const uint8_t* elements(const ser::TensorMetadata* t, const ser::Module* m) {
  return m->storage_data()->Get(t->storage_location_index())->data()->data() +
         static_cast<size_t>(t->storage_offset()) * scalar_type_size(t->scalar_type());
}

template <typename T>
std::vector<T> read_vector(const ser::TensorMetadata* t, const ser::Module* m) {
  std::vector<T> out(static_cast<size_t>(numel(sizes_of(t))));
  if (!out.empty()) std::memcpy(out.data(), elements(t, m), out.size() * sizeof(T));  // may be misaligned
  return out;
}

}  // namespace

void check_quantized(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where) {
  const ser::QuantizedSchema* q = t->quantized_schema();
  if (t->scalar_type() != kQInt8)
    throw_format("quantized tensors of scalar type " + std::to_string(t->scalar_type()) +
                 " are not supported by the native runtime (only qint8 weights)", where);
  if (q->qscheme() == kPerTensorAffine) return;
  if (q->qscheme() != kPerChannelAffine)
    throw_format("quantization scheme " + std::to_string(q->qscheme()) +
                 " is not supported by the native runtime (per-tensor or per-channel affine)", where);
  const Shape shape = sizes_of(t);
  if (q->axis() < 0 || static_cast<size_t>(q->axis()) >= shape.size())
    throw_format("per-channel axis " + std::to_string(q->axis()) + " is out of range for a tensor of " +
                 std::to_string(shape.size()) + " dims", where);
  const int64_t channels = shape[static_cast<size_t>(q->axis())];
  for (const auto& [params, type, what] : {std::tuple{q->scales(), kDouble, "scales"},
                                           std::tuple{q->zero_points(), kLong, "zero_points"}}) {
    const std::string at = where + ".quantized_schema." + what;
    if (params == nullptr) throw_format(std::string("per-channel quantization without ") + what, at);
    if (params->quantized_schema() != nullptr) throw_format("quantization parameters that are quantized", at);
    check_tensor_extent(params, m, at);
    if (params->scalar_type() != type || sizes_of(params) != Shape{channels})
      throw_format(std::string(what) + " must be a 1-d " + (type == kDouble ? "float64" : "int64") + " tensor of " +
                   std::to_string(channels) + " entries", at);
  }
}

namespace {

void check_contiguous(const ser::TensorMetadata* t, const Shape& shape, const std::string& where) {
  const auto expected = contiguous_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && t->strides()->Get(static_cast<flatbuffers::uoffset_t>(d)) != expected[d])
      throw_format("a float16 or quantized weight must be contiguous (liteexport writes it so)", where);
}

}  // namespace

Array widen_weight(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where) {
  const Shape shape = sizes_of(t);
  check_contiguous(t, shape, where);
  std::vector<float> out(static_cast<size_t>(numel(shape)));
  const std::vector<uint16_t> halves = read_vector<uint16_t>(t, m);
  for (size_t i = 0; i < out.size(); ++i) out[i] = half_to_float(halves[i]);
  return Array::from_vector(shape, std::move(out));
}

Array quantized_weight(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where,
                       std::shared_ptr<const void> keepalive) {
  const ser::QuantizedSchema* schema = t->quantized_schema();
  if (schema == nullptr) throw_format("a qint8 tensor without its quantization parameters", where);
  auto q = std::make_shared<QuantizedWeight>();
  q->shape = sizes_of(t);
  check_contiguous(t, q->shape, where);
  q->values = numel(q->shape) == 0 ? nullptr : reinterpret_cast<const int8_t*>(elements(t, m));
  q->keepalive = std::move(keepalive);
  if (schema->qscheme() == kPerTensorAffine) {
    q->scales = {schema->scale()};
    q->zero_points = {schema->zero_point()};
  } else {
    q->scales = read_vector<double>(schema->scales(), m);
    q->zero_points = read_vector<int64_t>(schema->zero_points(), m);
    q->axis = schema->axis();
  }
  Array a{q->shape, nullptr, DType::Float32};
  a.quantized = std::move(q);
  return a;
}

bool QuantizedWeight::symmetric() const {
  return std::all_of(zero_points.begin(), zero_points.end(), [](int64_t z) { return z == 0; });
}

const Array& QuantizedWeight::floats() const {
  std::call_once(widened_once_, [this] {
    std::vector<float> out(static_cast<size_t>(numel(shape)));
    if (axis < 0) {  // as torch: the integer difference times the scale, in float
      const float scale = static_cast<float>(scales[0]);
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(int64_t{values[i]} - zero_points[0]) * scale;
    } else {  // per channel: (q - zero_point) * scale in double, then rounded to float (torch's double scales)
      int64_t inner = 1;
      for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
      const int64_t channels = shape[static_cast<size_t>(axis)];
      for (size_t i = 0; i < out.size(); ++i) {
        const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
        out[i] = static_cast<float>(static_cast<double>(int64_t{values[i]} - zero_points[c]) * scales[c]);
      }
    }
    widened_ = Array::from_vector(shape, std::move(out));
  });
  return widened_;
}

const Array& float_values(const Array& a) { return a.quantized ? a.quantized->floats() : a; }

}  // namespace liteexport
