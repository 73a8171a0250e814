// What the JNI bridge's files share: the Java classes and member ids looked up once in JNI_OnLoad
// (liteexport_jni.cpp), throwing a Java exception, and the tensor conversions (tensors.cpp).
#pragma once

#include <jni.h>

#include <new>
#include <string>

#include "liteexport/runtime.h"

namespace liteexport_jni {

// Classes and member ids looked up once in JNI_OnLoad. FindClass must run there (or on a
// thread started from Java): on Android it uses the class loader of the calling Java frame.
struct JavaRefs {
  jclass tensor = nullptr;
  jmethodID tensor_init = nullptr;  // private Tensor(float[] data, long[] shape)
  jmethodID tensor_of_values = nullptr;  // private static Tensor ofValues(long[] shape, Object values)
  jfieldID tensor_data = nullptr;
  jfieldID tensor_shape = nullptr;
  jfieldID tensor_dtype = nullptr;   // DType dtype
  jfieldID tensor_buffer = nullptr;  // java.nio.Buffer buffer: a direct buffer, or null
  jfieldID tensor_values = nullptr;  // Object values: long[], int[] or byte[] of the other dtypes, or null
  jfieldID dtype_code = nullptr;     // DType.code (PyTorch Android's dtype codes)
  jclass byte_buffer = nullptr;
  jclass string = nullptr;
  jclass lite_export_exception = nullptr;
  jmethodID set_structured = nullptr;  // LiteExportException.setStructured(String, String[])
  jclass format_exception = nullptr;
  jclass input_exception = nullptr;
  jmethodID input_exception_init = nullptr;  // InputException(String, long)
  jclass execution_exception = nullptr;
  jmethodID execution_exception_init = nullptr;  // ExecutionException(String, long)
  jclass profile = nullptr;
  jmethodID profile_from_native = nullptr;  // static Profile.fromNative(String, int, double, double, String[], long[], double[])
  jclass illegal_state_exception = nullptr;
  jclass out_of_memory_error = nullptr;
};

extern JavaRefs g_refs;

// Throws `cls(message)`. Only when no exception is pending: the first failure is the one to report.
void throw_java(JNIEnv* env, jclass cls, const std::string& message);

// Strings between Java (UTF-16) and the core (UTF-8); to_utf8 is false with a Java exception pending.
bool to_utf8(JNIEnv* env, jstring s, std::string* out);
jstring to_jstring(JNIEnv* env, const std::string& s);

// The Java exception of a core error (its kind, message, debug handle, code and fields).
void throw_core_error(JNIEnv* env, const liteexport::Error& error);
void throw_out_of_memory(JNIEnv* env);

// The Module of a Java handle, or nullptr with IllegalStateException pending (a closed one).
liteexport::Module* module_of(JNIEnv* env, jlong handle);

// Registers LlmModule's natives (generation_jni.cpp); false with a Java exception pending.
bool register_generation_natives(JNIEnv* env);

// Runs `body`, converting every C++ exception into a pending Java exception; returns
// `on_error` in that case (the JVM ignores the return value while an exception is pending).
template <typename T, typename Body>
T guarded(JNIEnv* env, T on_error, Body&& body) noexcept {
  try {
    try {
      return body();
    } catch (const liteexport::Error& error) {
      throw_core_error(env, error);
    } catch (const std::bad_alloc&) {
      throw_out_of_memory(env);
    } catch (const std::exception& error) {
      throw_java(env, g_refs.lite_export_exception,
                 std::string("internal error in the liteexport runtime: ") + error.what());
    } catch (...) {
      throw_java(env, g_refs.lite_export_exception, "internal error in the liteexport runtime: unknown C++ exception");
    }
  } catch (...) {  // building the Java exception itself failed: only memory can run out there
    throw_out_of_memory(env);
  }
  return on_error;
}

// Copies a Java Tensor (input `index`) into a core tensor; false with a Java exception pending on failure.
bool read_tensor(JNIEnv* env, jobject tensor, size_t index, liteexport::Tensor* out);

// A new org.liteexport.Tensor holding a copy of `t`, or nullptr with a Java exception pending.
jobject new_tensor(JNIEnv* env, const liteexport::Tensor& t);

}  // namespace liteexport_jni
