// A run's values (run_plan's slots) and how each is stored. A program's values are NCHW, of its
// dtypes; the XNNPACK path (xnn.h) keeps two kinds otherwise, converting them only when a reader
// needs the program's form:
// - NHWC: a slot written by an XNNPACK convolution or pooling is kept NHWC (its Array's shape is
//   then the physical [N, H, W, C]) as long as the steps reading it can take NHWC; the first step
//   that needs NCHW converts the slot in place, once.
// - int8 (issue 22): a value on an 8-bit grid (written by a FAKE_QUANTIZE or an int8 step,
//   xnn_int8.cpp) is kept as int8 values q standing for (q - zero_point) * scale. The first float
//   reader dequantizes it, once: exactly the floats FAKE_QUANTIZE's own kernel gives; the int8
//   values stay for the int8 readers after it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "../array.h"

namespace liteexport::demo_backend {

// The grid of an int8 value (XNNPACK's qs8): q in -128..127 stands for (q - zero_point) * scale.
struct Grid {
  float scale = 1.0f;
  int32_t zero_point = 0;  // -128..127
};

// An array of int8 values: one-byte elements in an Array (whose dtype, Bool, is only the size of
// its elements: Slots keeps the grid, and never hands such an array to a float or bool kernel).
Array int8_array(Shape shape, int8_t** out);
inline const int8_t* int8_data(const Array& a) { return reinterpret_cast<const int8_t*>(a.data_as<uint8_t>()); }

// The float values of int8 values on `grid`: exactly the floats FAKE_QUANTIZE gives.
Array dequantize(const Array& q, const Grid& grid);

class Slots {
 public:
  explicit Slots(uint32_t n) : values_(n) {}
  // A float (or other dtype) value, NHWC when `nhwc`.
  void set(uint32_t slot, Array value, bool nhwc);
  // An int8 value on `grid`, NHWC when `nhwc`.
  void set_int8(uint32_t slot, Array q, bool nhwc, Grid grid);
  void reset(uint32_t slot) { values_[slot] = Value{}; }

  // The layout of the value raw() gives.
  bool is_nhwc(uint32_t slot) const;
  // The value as stored (NHWC when is_nhwc), in its program dtype: an int8 value is dequantized, once.
  const Array& raw(uint32_t slot);
  // The value in NCHW (its program shape): an NHWC slot is converted in place, once.
  const Array& nchw(uint32_t slot);
  // A 4-D value in NHWC: an NCHW slot is converted in place, once.
  const Array& nhwc(uint32_t slot);
  // The program (NCHW) shape of the value.
  Shape logical_shape(uint32_t slot) const;

  // Whether the value has int8 values, and their grid.
  bool has_int8(uint32_t slot) const { return values_[slot].q.has_value(); }
  const Grid& grid(uint32_t slot) const { return values_[slot].grid; }
  // Its int8 values in NHWC (a 4-D value) or NCHW, converted in place, once.
  const Array& int8_nhwc(uint32_t slot);
  const Array& int8_nchw(uint32_t slot);

 private:
  struct Value {
    std::optional<Array> f;  // the program-dtype value (of an int8 value: once a reader needed it)
    bool f_nhwc = false;
    std::optional<Array> q;  // int8 values
    bool q_nhwc = false;
    Grid grid;
  };
  std::vector<Value> values_;
};

}  // namespace liteexport::demo_backend
