// Tensors across the JNI bridge: org.liteexport.Tensor (float32, int64, int32 or bool, from a Java
// array or viewing a direct buffer) into the core's Tensor for inputs, and the core's outputs back
// into new Java Tensors. The values are copied with the Get/Set<Type>ArrayRegion calls (or from a
// direct buffer's address): the core owns its tensors' memory, and nothing is pinned.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bridge.h"

namespace liteexport_jni {

namespace {

// DType.code (DType.java, PyTorch Android's codes) -> the core's dtype; false for the types the
// core does not compute in (int8, uint8), which are refused by name, never converted: an id or a
// pixel silently reinterpreted would change what the model computes.
bool core_dtype(jint code, liteexport::DType* out) {
  switch (code) {
    case 3: *out = liteexport::DType::Int32; return true;
    case 4: *out = liteexport::DType::Float32; return true;
    case 5: *out = liteexport::DType::Int64; return true;
    case 11: *out = liteexport::DType::Bool; return true;
    default: return false;
  }
}

std::string java_dtype_name(jint code) {
  switch (code) {
    case 1: return "uint8";
    case 2: return "int8";
    default: {
      liteexport::DType dtype;
      return core_dtype(code, &dtype) ? liteexport::dtype_name(dtype) : "dtype " + std::to_string(code);
    }
  }
}

// The vector of `out` that holds values of its dtype, resized to `count`: its bytes.
void* resize_values(liteexport::Tensor* out, size_t count) {
  switch (out->dtype) {
    case liteexport::DType::Int64: out->int64_data.resize(count); return out->int64_data.data();
    case liteexport::DType::Int32: out->int32_data.resize(count); return out->int32_data.data();
    case liteexport::DType::Bool: out->bool_data.resize(count); return out->bool_data.data();
    case liteexport::DType::Float32: break;
  }
  out->data.resize(count);
  return out->data.data();
}

// Copies a Tensor that views a direct buffer into a core tensor (out->dtype set): Tensor.java made
// the buffer's view start at its first element and hold exactly product(shape) elements; the
// capacity is checked again here, as the bytes are read from a raw address.
bool read_buffer_tensor(JNIEnv* env, jobject tensor, jlongArray shape, size_t index, liteexport::Tensor* out) {
  jobject buffer = env->GetObjectField(tensor, g_refs.tensor_buffer);
  const jsize rank = env->GetArrayLength(shape);
  out->shape.resize(static_cast<size_t>(rank));
  env->GetLongArrayRegion(shape, 0, rank, reinterpret_cast<jlong*>(out->shape.data()));
  size_t count = 1;
  for (int64_t dim : out->shape) count *= dim > 0 ? static_cast<size_t>(dim) : 0;
  const size_t itemsize = liteexport::dtype_size(out->dtype);
  const void* address = buffer != nullptr ? env->GetDirectBufferAddress(buffer) : nullptr;
  const jlong capacity = buffer != nullptr ? env->GetDirectBufferCapacity(buffer) : -1;
  // GetDirectBufferCapacity counts the buffer's elements: bytes for a ByteBuffer, floats for a
  // FloatBuffer, longs for a LongBuffer (a typed buffer's element is the tensor's dtype)
  const bool bytes = buffer != nullptr && env->IsInstanceOf(buffer, g_refs.byte_buffer);
  const size_t capacity_bytes = capacity < 0 ? 0 : static_cast<size_t>(capacity) * (bytes ? 1 : itemsize);
  env->DeleteLocalRef(buffer);
  if (env->ExceptionCheck()) return false;
  if (address == nullptr || capacity_bytes < count * itemsize) {
    throw_java(env, g_refs.input_exception, "input " + std::to_string(index) +
               " has no data (a tensor viewing a buffer that is not direct, or too small for its shape)");
    return false;
  }
  void* values = resize_values(out, count);
  if (count != 0) std::memcpy(values, address, count * itemsize);
  return true;
}

// Copies the Java array `values` (float[], long[], int[] or byte[] as out->dtype says) into `out`.
void read_array(JNIEnv* env, jarray values, liteexport::Tensor* out) {
  static_assert(sizeof(jlong) == sizeof(int64_t) && sizeof(jint) == sizeof(int32_t) && sizeof(jfloat) == sizeof(float) &&
                    sizeof(jbyte) == sizeof(uint8_t),
                "JNI type sizes");
  const jsize count = env->GetArrayLength(values);
  void* dst = resize_values(out, static_cast<size_t>(count));
  switch (out->dtype) {
    case liteexport::DType::Int64:
      env->GetLongArrayRegion(static_cast<jlongArray>(values), 0, count, static_cast<jlong*>(dst));
      return;
    case liteexport::DType::Int32:
      env->GetIntArrayRegion(static_cast<jintArray>(values), 0, count, static_cast<jint*>(dst));
      return;
    case liteexport::DType::Bool:
      env->GetByteArrayRegion(static_cast<jbyteArray>(values), 0, count, static_cast<jbyte*>(dst));
      return;
    case liteexport::DType::Float32: break;
  }
  env->GetFloatArrayRegion(static_cast<jfloatArray>(values), 0, count, static_cast<jfloat*>(dst));
}

// A new Java array holding `t`'s values: float[], long[], int[] or byte[] (bool).
jarray new_array(JNIEnv* env, const liteexport::Tensor& t, jsize count) {
  switch (t.dtype) {
    case liteexport::DType::Int64: {
      jlongArray a = env->NewLongArray(count);
      if (a != nullptr) env->SetLongArrayRegion(a, 0, count, reinterpret_cast<const jlong*>(t.int64_data.data()));
      return a;
    }
    case liteexport::DType::Int32: {
      jintArray a = env->NewIntArray(count);
      if (a != nullptr) env->SetIntArrayRegion(a, 0, count, reinterpret_cast<const jint*>(t.int32_data.data()));
      return a;
    }
    case liteexport::DType::Bool: {
      jbyteArray a = env->NewByteArray(count);
      if (a != nullptr) env->SetByteArrayRegion(a, 0, count, reinterpret_cast<const jbyte*>(t.bool_data.data()));
      return a;
    }
    case liteexport::DType::Float32: break;
  }
  jfloatArray a = env->NewFloatArray(count);
  if (a != nullptr) env->SetFloatArrayRegion(a, 0, count, reinterpret_cast<const jfloat*>(t.data.data()));
  return a;
}

}  // namespace

bool read_tensor(JNIEnv* env, jobject tensor, size_t index, liteexport::Tensor* out) {
  if (tensor == nullptr) {
    throw_java(env, g_refs.input_exception, "input " + std::to_string(index) + " is null");
    return false;
  }
  jobject dtype = env->GetObjectField(tensor, g_refs.tensor_dtype);
  const jint code = dtype != nullptr ? env->GetIntField(dtype, g_refs.dtype_code) : 0;
  env->DeleteLocalRef(dtype);
  if (env->ExceptionCheck()) return false;
  if (!core_dtype(code, &out->dtype)) {
    throw_java(env, g_refs.input_exception, "input " + std::to_string(index) + " has dtype " + java_dtype_name(code) +
                                                "; the native runtime takes float32, int64, int32 and bool inputs");
    return false;
  }
  // float32 from an array is in `data`, the other dtypes' arrays in `values`
  auto* values = static_cast<jarray>(env->GetObjectField(
      tensor, out->dtype == liteexport::DType::Float32 ? g_refs.tensor_data : g_refs.tensor_values));
  auto* shape = static_cast<jlongArray>(env->GetObjectField(tensor, g_refs.tensor_shape));
  if (values == nullptr && shape != nullptr) {  // a view of a direct buffer (Tensor.fromBlob(FloatBuffer/ByteBuffer/...))
    const bool ok = read_buffer_tensor(env, tensor, shape, index, out);
    env->DeleteLocalRef(shape);
    return ok;
  }
  bool ok = values != nullptr && shape != nullptr;
  if (ok) {
    const jsize rank = env->GetArrayLength(shape);
    out->shape.resize(static_cast<size_t>(rank));
    env->GetLongArrayRegion(shape, 0, rank, reinterpret_cast<jlong*>(out->shape.data()));
    read_array(env, values, out);
    ok = !env->ExceptionCheck();
  } else {
    throw_java(env, g_refs.input_exception, "input " + std::to_string(index) + " has no data");
  }
  env->DeleteLocalRef(values);
  env->DeleteLocalRef(shape);
  return ok;
}

jobject new_tensor(JNIEnv* env, const liteexport::Tensor& t) {
  constexpr auto kMaxJavaArray = static_cast<size_t>(std::numeric_limits<jsize>::max());
  if (t.size() > kMaxJavaArray || t.shape.size() > kMaxJavaArray) {
    throw_java(env, g_refs.lite_export_exception, "output of " + std::to_string(t.size()) +
                                                      " elements does not fit a Java array");
    return nullptr;
  }
  size_t expected = 1;
  for (int64_t dim : t.shape) expected *= dim >= 0 ? static_cast<size_t>(dim) : 0;
  if (expected != t.size()) {  // Tensor's invariant, relied on by every Java caller
    throw_java(env, g_refs.lite_export_exception, "internal error in the liteexport runtime: an output's shape "
               "does not match its " + std::to_string(t.size()) + " elements");
    return nullptr;
  }
  const auto rank = static_cast<jsize>(t.shape.size());
  jarray values = new_array(env, t, static_cast<jsize>(t.size()));
  if (values == nullptr) return nullptr;
  jlongArray shape = env->NewLongArray(rank);
  if (shape == nullptr) return nullptr;  // the caller's local frame frees `values`
  env->SetLongArrayRegion(shape, 0, rank, reinterpret_cast<const jlong*>(t.shape.data()));
  // float32 (the common case) through the constructor that takes both arrays as they are
  jobject tensor = t.dtype == liteexport::DType::Float32
                       ? env->NewObject(g_refs.tensor, g_refs.tensor_init, values, shape)
                       : env->CallStaticObjectMethod(g_refs.tensor, g_refs.tensor_of_values, shape, values);
  if (env->ExceptionCheck()) tensor = nullptr;  // checked before any other JNI call (-Xcheck:jni)
  env->DeleteLocalRef(values);
  env->DeleteLocalRef(shape);
  return tensor;
}

}  // namespace liteexport_jni
