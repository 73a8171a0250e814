// Slots (slots.h): layout conversions and the dequantization of int8 values.
#include "slots.h"

#include <algorithm>

namespace liteexport::demo_backend {

namespace {

// [N, C, H, W] <-> [N, H, W, C] of float or int8 elements. A value with one pixel (H * W == 1) or
// one channel has the same memory in both: only its shape changes.
template <typename T>
Array transpose_4d(const Array& x, bool to_nhwc) {
  const Shape& s = x.shape;
  const int64_t n = s[0];
  const int64_t c = to_nhwc ? s[1] : s[3], h = to_nhwc ? s[2] : s[1], w = to_nhwc ? s[3] : s[2];
  Shape shape = to_nhwc ? Shape{n, h, w, c} : Shape{n, c, h, w};
  if (h * w == 1 || c == 1) return x.reshaped(std::move(shape));
  T* y;
  Array out;
  if constexpr (std::is_same_v<T, int8_t>)
    out = int8_array(std::move(shape), &y);
  else
    out = Array::uninitialized(std::move(shape), &y);
  const T* p = static_cast<const T*>(x.data.get());
  const int64_t hw = h * w;
  for (int64_t b = 0; b < n; ++b) {
    const T* src = p + b * c * hw;
    T* dst = y + b * c * hw;
    // blocks of 8 channels x 64 pixels: both sides stay in cache
    for (int64_t c0 = 0; c0 < c; c0 += 8)
      for (int64_t p0 = 0; p0 < hw; p0 += 64) {
        const int64_t c1 = std::min(c, c0 + 8), p1 = std::min(hw, p0 + 64);
        for (int64_t ch = c0; ch < c1; ++ch)
          for (int64_t px = p0; px < p1; ++px) {
            if (to_nhwc)
              dst[px * c + ch] = src[ch * hw + px];
            else
              dst[ch * hw + px] = src[px * c + ch];
          }
      }
  }
  return out;
}

}  // namespace

// (q - zero_point) * scale, as FAKE_QUANTIZE's kernel computes it (grid_rounding.h: the integer
// difference, exact in float, times the float scale).
Array dequantize(const Array& q, const Grid& grid) {
  float* y;
  Array out = Array::uninitialized(q.shape, &y);
  const int8_t* p = int8_data(q);
  for (int64_t i = 0, n = q.size(); i < n; ++i) y[i] = static_cast<float>(int32_t{p[i]} - grid.zero_point) * grid.scale;
  return out;
}

Array int8_array(Shape shape, int8_t** out) {
  uint8_t* bytes;
  Array a = Array::uninitialized(std::move(shape), &bytes);
  *out = reinterpret_cast<int8_t*>(bytes);
  return a;
}

void Slots::set(uint32_t slot, Array value, bool nhwc) {
  values_[slot] = Value{std::move(value), nhwc, std::nullopt, false, Grid{}};
}

void Slots::set_int8(uint32_t slot, Array q, bool nhwc, Grid grid) {
  values_[slot] = Value{std::nullopt, false, std::move(q), nhwc, grid};
}

bool Slots::is_nhwc(uint32_t slot) const {
  const Value& v = values_[slot];
  return v.f ? v.f_nhwc : v.q_nhwc;
}

const Array& Slots::raw(uint32_t slot) {
  Value& v = values_[slot];
  if (!v.f) {
    v.f = dequantize(*v.q, v.grid);
    v.f_nhwc = v.q_nhwc;
  }
  return *v.f;
}

const Array& Slots::nchw(uint32_t slot) {
  raw(slot);
  Value& v = values_[slot];
  if (v.f_nhwc) {
    v.f = transpose_4d<float>(*v.f, false);
    v.f_nhwc = false;
  }
  return *v.f;
}

const Array& Slots::nhwc(uint32_t slot) {
  raw(slot);
  Value& v = values_[slot];
  if (!v.f_nhwc) {
    v.f = transpose_4d<float>(*v.f, true);
    v.f_nhwc = true;
  }
  return *v.f;
}

Shape Slots::logical_shape(uint32_t slot) const {
  const Value& v = values_[slot];
  const Shape& s = v.f ? v.f->shape : v.q->shape;
  return is_nhwc(slot) ? Shape{s[0], s[3], s[1], s[2]} : s;
}

const Array& Slots::int8_nhwc(uint32_t slot) {
  Value& v = values_[slot];
  if (!v.q_nhwc) {
    v.q = transpose_4d<int8_t>(*v.q, true);
    v.q_nhwc = true;
  }
  return *v.q;
}

const Array& Slots::int8_nchw(uint32_t slot) {
  Value& v = values_[slot];
  if (v.q_nhwc) {
    v.q = transpose_4d<int8_t>(*v.q, false);
    v.q_nhwc = false;
  }
  return *v.q;
}

}  // namespace liteexport::demo_backend
