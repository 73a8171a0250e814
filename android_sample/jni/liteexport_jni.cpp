// JNI bridge: the native methods of org.liteexport.Module on top of the liteexport core
// (native/include/liteexport/runtime.h).
//
// Rules kept throughout:
//  - no C++ exception crosses into the JVM: every native method body runs inside guarded(),
//    which turns liteexport::Error into the matching org.liteexport exception and anything
//    else into LiteExportException / OutOfMemoryError;
//  - after any JNI call that can throw, return at once if a Java exception is pending;
//  - local references created in loops are freed per iteration (DeleteLocalRef or a local
//    frame), so large inputs/outputs never exhaust the local reference table;
//  - Java arrays are copied with Get/Set<Type>ArrayRegion: the core owns its tensors'
//    memory anyway, and the region calls never pin arrays that would need a release mode.
#include <jni.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge.h"
#include "liteexport/runtime.h"

namespace liteexport_jni {

JavaRefs g_refs;

constexpr char kModuleClass[] = "org/liteexport/Module";

// ---- strings ------------------------------------------------------------------------------
// NewStringUTF/GetStringUTFChars use *modified* UTF-8 (and CheckJNI aborts on invalid input),
// while the core's messages (source lines of the user's model) are plain UTF-8 of unknown
// validity. Converting through UTF-16 ourselves handles both directions exactly.

std::u16string utf8_to_utf16(const std::string& in) {
  std::u16string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const auto b0 = static_cast<unsigned char>(in[i]);
    uint32_t cp = 0xFFFD;  // replacement character for any invalid sequence
    size_t len = 1;
    if (b0 < 0x80) {
      cp = b0;
    } else {
      size_t need = 0;
      uint32_t min = 0;
      if ((b0 & 0xE0) == 0xC0) { need = 1; cp = b0 & 0x1F; min = 0x80; }
      else if ((b0 & 0xF0) == 0xE0) { need = 2; cp = b0 & 0x0F; min = 0x800; }
      else if ((b0 & 0xF8) == 0xF0) { need = 3; cp = b0 & 0x07; min = 0x10000; }
      bool ok = need > 0 && i + need < in.size();  // all continuation bytes present
      for (size_t k = 1; ok && k <= need; ++k) {
        const auto b = static_cast<unsigned char>(in[i + k]);
        ok = (b & 0xC0) == 0x80;
        cp = (cp << 6) | (b & 0x3F);
      }
      ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
      if (ok) {
        len = need + 1;
      } else {
        cp = 0xFFFD;
      }
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Returns false (with a Java exception pending) if the string cannot be read.
bool to_utf8(JNIEnv* env, jstring s, std::string* out) {
  const jsize n = env->GetStringLength(s);
  std::u16string units(static_cast<size_t>(n), u'\0');
  env->GetStringRegion(s, 0, n, reinterpret_cast<jchar*>(&units[0]));
  if (env->ExceptionCheck()) return false;
  out->clear();
  out->reserve(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    uint32_t cp = units[i];
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < units.size() && units[i + 1] >= 0xDC00 &&
        units[i + 1] <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (units[i + 1] - 0xDC00);
      ++i;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      cp = 0xFFFD;  // lone surrogate
    }
    append_utf8(*out, cp);
  }
  return true;
}

jstring to_jstring(JNIEnv* env, const std::string& s) {
  const std::u16string units = utf8_to_utf16(s);
  if (units.size() > static_cast<size_t>(std::numeric_limits<jsize>::max())) {
    return to_jstring(env, s.substr(0, 1 << 20));  // absurdly long message: truncate
  }
  return env->NewString(reinterpret_cast<const jchar*>(units.data()), static_cast<jsize>(units.size()));
}

// A String[] of `names`, or nullptr with a Java exception pending.
jobjectArray to_jstring_array(JNIEnv* env, const std::vector<std::string>& names) {
  jobjectArray result = env->NewObjectArray(static_cast<jsize>(names.size()), g_refs.string, nullptr);
  if (result == nullptr) return nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    jstring name = to_jstring(env, names[i]);
    if (name == nullptr) return nullptr;
    env->SetObjectArrayElement(result, static_cast<jsize>(i), name);
    env->DeleteLocalRef(name);
  }
  return result;
}

// ---- exceptions ---------------------------------------------------------------------------

// Throws `cls(message)`. Only when no exception is pending: the first failure is the one to report.
void throw_java(JNIEnv* env, jclass cls, const std::string& message) {
  if (env->ExceptionCheck()) return;
  jstring jmessage = to_jstring(env, message);
  if (jmessage == nullptr) return;  // OutOfMemoryError pending
  jmethodID init = env->GetMethodID(cls, "<init>", "(Ljava/lang/String;)V");
  if (init == nullptr) return;
  auto* exception = static_cast<jthrowable>(env->NewObject(cls, init, jmessage));
  if (exception != nullptr) env->Throw(exception);
  env->DeleteLocalRef(exception);
  env->DeleteLocalRef(jmessage);
}

// Gives the pending exception the structured form of `error` (its code and fields), if any.
void set_structured(JNIEnv* env, const liteexport::Error& error) {
  if (error.code().empty() || !env->ExceptionCheck()) return;
  jthrowable exception = env->ExceptionOccurred();
  env->ExceptionClear();  // JNI calls need no exception pending; it is thrown again below
  if (!env->IsInstanceOf(exception, g_refs.lite_export_exception)) {  // e.g. OutOfMemoryError
    env->Throw(exception);
    env->DeleteLocalRef(exception);
    return;
  }
  jstring code = to_jstring(env, error.code());
  auto n = static_cast<jsize>(2 * error.fields().size());
  jobjectArray pairs = code ? env->NewObjectArray(n, g_refs.string, nullptr) : nullptr;
  for (jsize i = 0; pairs != nullptr && i < n; ++i) {
    const auto& [name, value] = error.fields()[static_cast<size_t>(i / 2)];
    jstring text = to_jstring(env, i % 2 ? value : name);
    if (text == nullptr) break;  // OutOfMemoryError pending: the core's error still gets thrown
    env->SetObjectArrayElement(pairs, i, text);
    env->DeleteLocalRef(text);
  }
  if (pairs != nullptr && !env->ExceptionCheck()) env->CallVoidMethod(exception, g_refs.set_structured, code, pairs);
  env->ExceptionClear();
  env->Throw(exception);
  env->DeleteLocalRef(pairs);
  env->DeleteLocalRef(code);
  env->DeleteLocalRef(exception);
}

void throw_core_error(JNIEnv* env, const liteexport::Error& error) {
  // Input and Execution errors carry the instruction's debug handle, as runtime_py's; all three
  // carry the code and fields (set_structured) when the demo backend raised them
  jclass cls = g_refs.execution_exception;
  jmethodID init = g_refs.execution_exception_init;
  switch (error.kind()) {
    case liteexport::ErrorKind::Format:
      throw_java(env, g_refs.format_exception, error.what());
      set_structured(env, error);
      return;
    case liteexport::ErrorKind::Input:
      cls = g_refs.input_exception;
      init = g_refs.input_exception_init;
      break;
    case liteexport::ErrorKind::Execution:
      break;
  }
  if (env->ExceptionCheck()) return;
  jstring jmessage = to_jstring(env, error.what());
  if (jmessage == nullptr) return;
  auto* exception = static_cast<jthrowable>(env->NewObject(cls, init, jmessage,
                                                           static_cast<jlong>(error.debug_handle())));
  if (exception != nullptr) env->Throw(exception);
  env->DeleteLocalRef(exception);
  env->DeleteLocalRef(jmessage);
  set_structured(env, error);
}

void throw_out_of_memory(JNIEnv* env) {
  // ThrowNew with a literal: nothing left to allocate on the C++ side.
  if (!env->ExceptionCheck()) env->ThrowNew(g_refs.out_of_memory_error, "liteexport: native allocation failed");
}

liteexport::Module* module_of(JNIEnv* env, jlong handle) {
  if (handle == 0) {  // Module.java checks first; this only guards against misuse of the natives
    env->ThrowNew(g_refs.illegal_state_exception, "liteexport: module is closed");
    return nullptr;
  }
  return reinterpret_cast<liteexport::Module*>(static_cast<intptr_t>(handle));
}

// ---- native methods of org.liteexport.Module ----------------------------------------------

jlong native_load(JNIEnv* env, jclass, jstring jpath, jboolean copy, jlong max_memory, jdouble timeout_seconds,
                  jint num_threads) {
  return guarded<jlong>(env, 0, [&]() -> jlong {
    std::string path;
    if (jpath == nullptr || !to_utf8(env, jpath, &path)) {
      if (!env->ExceptionCheck()) env->ThrowNew(g_refs.format_exception, "bundle path is null");
      return 0;
    }
    liteexport::LoadOptions options;  // LoadOptions.java has checked the values
    options.copy = copy == JNI_TRUE;
    options.max_memory = static_cast<uint64_t>(max_memory);
    options.timeout_seconds = timeout_seconds;
    options.num_threads = static_cast<int>(num_threads);
    std::unique_ptr<liteexport::Module> module = liteexport::Module::load(path, options);
    return static_cast<jlong>(reinterpret_cast<intptr_t>(module.release()));
  });
}

void native_destroy(JNIEnv* env, jclass, jlong handle) {
  guarded<int>(env, 0, [&]() {
    delete reinterpret_cast<liteexport::Module*>(static_cast<intptr_t>(handle));
    return 0;
  });
}

void native_set_num_threads(JNIEnv* env, jclass, jlong handle, jint num_threads) {
  guarded<int>(env, 0, [&]() {
    liteexport::Module* module = module_of(env, handle);
    if (module != nullptr) module->set_num_threads(static_cast<int>(num_threads));  // Input error -> InputException
    return 0;
  });
}

jobjectArray native_method_names(JNIEnv* env, jclass, jlong handle) {
  return guarded<jobjectArray>(env, nullptr, [&]() -> jobjectArray {
    liteexport::Module* module = module_of(env, handle);
    if (module == nullptr) return nullptr;
    return to_jstring_array(env, module->method_names());
  });
}

jobjectArray native_output_names(JNIEnv* env, jclass, jlong handle, jstring jname) {
  return guarded<jobjectArray>(env, nullptr, [&]() -> jobjectArray {
    liteexport::Module* module = module_of(env, handle);
    if (module == nullptr) return nullptr;
    std::string name;
    if (jname == nullptr) {
      throw_java(env, g_refs.input_exception, "method name must not be null");
      return nullptr;
    }
    if (!to_utf8(env, jname, &name)) return nullptr;
    return to_jstring_array(env, module->output_names(name));
  });
}

// Copies the Java Tensor[] `jinputs` into `inputs`; false with a Java exception pending on failure.
bool read_inputs(JNIEnv* env, jobjectArray jinputs, std::vector<liteexport::Tensor>* inputs) {
  const jsize n_inputs = env->GetArrayLength(jinputs);
  inputs->assign(static_cast<size_t>(n_inputs), liteexport::Tensor());
  for (jsize i = 0; i < n_inputs; ++i) {
    jobject tensor = env->GetObjectArrayElement(jinputs, i);
    const bool ok = !env->ExceptionCheck() && read_tensor(env, tensor, static_cast<size_t>(i), &(*inputs)[i]);
    env->DeleteLocalRef(tensor);
    if (!ok) return false;
  }
  return true;
}

jobjectArray native_run_method(JNIEnv* env, jclass, jlong handle, jstring jname, jobjectArray jinputs) {
  return guarded<jobjectArray>(env, nullptr, [&]() -> jobjectArray {
    liteexport::Module* module = module_of(env, handle);
    if (module == nullptr) return nullptr;
    std::string name;
    if (jname == nullptr || jinputs == nullptr) {
      throw_java(env, g_refs.input_exception, "method name and inputs must not be null");
      return nullptr;
    }
    if (!to_utf8(env, jname, &name)) return nullptr;

    std::vector<liteexport::Tensor> inputs;
    if (!read_inputs(env, jinputs, &inputs)) return nullptr;

    const std::vector<std::optional<liteexport::Tensor>> outputs = module->run_method(name, inputs);
    inputs.clear();  // the copies are not needed any more: free them before allocating outputs
    inputs.shrink_to_fit();

    jobjectArray result = env->NewObjectArray(static_cast<jsize>(outputs.size()), g_refs.tensor, nullptr);
    if (result == nullptr) return nullptr;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i]) continue;  // None in a returned tuple: the array's element stays null
      // Each output makes three local refs; the frame frees them whatever path is taken.
      if (env->PushLocalFrame(4) != 0) return nullptr;
      jobject tensor = new_tensor(env, *outputs[i]);
      if (tensor != nullptr) env->SetObjectArrayElement(result, static_cast<jsize>(i), tensor);
      env->PopLocalFrame(nullptr);
      if (tensor == nullptr || env->ExceptionCheck()) return nullptr;
    }
    return result;
  });
}

// Loading from a descriptor range or a copied buffer, and extra files (the Android library).

liteexport::LoadOptions load_options(jboolean copy, jlong max_memory, jdouble timeout_seconds) {
  liteexport::LoadOptions options;  // LoadOptions.java has checked the values
  options.copy = copy == JNI_TRUE;
  options.max_memory = static_cast<uint64_t>(max_memory);
  options.timeout_seconds = timeout_seconds;
  return options;
}

jlong native_load_fd(JNIEnv* env, jclass, jint fd, jlong offset, jlong length, jboolean copy, jlong max_memory,
                     jdouble timeout_seconds) {
  return guarded<jlong>(env, 0, [&]() -> jlong {
    std::unique_ptr<liteexport::Module> module = liteexport::Module::load_from_fd(
        fd, static_cast<int64_t>(offset), static_cast<int64_t>(length), load_options(copy, max_memory, timeout_seconds));
    return static_cast<jlong>(reinterpret_cast<intptr_t>(module.release()));
  });
}

jlong native_load_buffer(JNIEnv* env, jclass, jobject buffer, jint length, jlong max_memory, jdouble timeout_seconds) {
  return guarded<jlong>(env, 0, [&]() -> jlong {
    const void* address = buffer != nullptr ? env->GetDirectBufferAddress(buffer) : nullptr;
    const jlong capacity = buffer != nullptr ? env->GetDirectBufferCapacity(buffer) : -1;
    if (address == nullptr || length < 0 || capacity < length) {
      throw_java(env, g_refs.format_exception, "the bundle buffer is not a direct buffer of " + std::to_string(length) + " bytes");
      return 0;
    }
    // copied: the Java buffer may be reused or freed by the GC once this returns
    std::unique_ptr<liteexport::Module> module = liteexport::Module::load_from_copy(
        static_cast<const uint8_t*>(address), static_cast<size_t>(length),
        load_options(JNI_FALSE, max_memory, timeout_seconds));
    return static_cast<jlong>(reinterpret_cast<intptr_t>(module.release()));
  });
}

jobjectArray native_extra_file_names(JNIEnv* env, jclass, jlong handle) {
  return guarded<jobjectArray>(env, nullptr, [&]() -> jobjectArray {
    liteexport::Module* module = module_of(env, handle);
    if (module == nullptr) return nullptr;
    return to_jstring_array(env, module->extra_file_names());
  });
}

jbyteArray native_extra_file(JNIEnv* env, jclass, jlong handle, jstring jname) {
  return guarded<jbyteArray>(env, nullptr, [&]() -> jbyteArray {
    liteexport::Module* module = module_of(env, handle);
    std::string name;
    if (module == nullptr || jname == nullptr || !to_utf8(env, jname, &name)) return nullptr;
    const std::optional<std::string> content = module->extra_file(name);
    if (!content) return nullptr;  // no such file: Java's null
    if (content->size() > static_cast<size_t>(std::numeric_limits<jsize>::max())) {
      throw_java(env, g_refs.lite_export_exception, "extra file " + name + " does not fit a Java array");
      return nullptr;
    }
    const auto size = static_cast<jsize>(content->size());
    jbyteArray result = env->NewByteArray(size);
    if (result == nullptr) return nullptr;
    env->SetByteArrayRegion(result, 0, size, reinterpret_cast<const jbyte*>(content->data()));
    return result;
  });
}

// Module.profile: the rows go to Java as parallel arrays, which Profile.fromNative assembles.
jobject native_profile(JNIEnv* env, jclass, jlong handle, jstring jname, jobjectArray jinputs, jint runs, jint warmup) {
  return guarded<jobject>(env, nullptr, [&]() -> jobject {
    liteexport::Module* module = module_of(env, handle);
    std::string name;
    std::vector<liteexport::Tensor> inputs;
    if (module == nullptr || !to_utf8(env, jname, &name) || !read_inputs(env, jinputs, &inputs)) return nullptr;
    const liteexport::MethodProfile profile = module->profile(name, inputs, runs, warmup);
    std::vector<std::string> texts;  // per row: method, op, node, location, module hierarchy
    std::vector<jlong> numbers;      // per row: index, calls
    std::vector<jdouble> seconds;
    for (const liteexport::InstructionProfile& row : profile.instructions) {
      texts.insert(texts.end(), {row.method, row.op, row.node, row.location, row.module_hierarchy});
      numbers.insert(numbers.end(), {static_cast<jlong>(row.index), static_cast<jlong>(row.calls)});
      seconds.push_back(row.seconds);
    }
    jobjectArray jtexts = to_jstring_array(env, texts);
    jlongArray jnumbers = jtexts != nullptr ? env->NewLongArray(static_cast<jsize>(numbers.size())) : nullptr;
    jdoubleArray jseconds = jnumbers != nullptr ? env->NewDoubleArray(static_cast<jsize>(seconds.size())) : nullptr;
    jstring jmethod = jseconds != nullptr ? to_jstring(env, profile.method) : nullptr;
    if (jmethod == nullptr) return nullptr;
    env->SetLongArrayRegion(jnumbers, 0, static_cast<jsize>(numbers.size()), numbers.data());
    env->SetDoubleArrayRegion(jseconds, 0, static_cast<jsize>(seconds.size()), seconds.data());
    return env->CallStaticObjectMethod(g_refs.profile, g_refs.profile_from_native, jmethod, static_cast<jint>(profile.runs),
                                       profile.total_seconds, profile.other_seconds, jtexts, jnumbers, jseconds);
  });
}

// Program state (issue 34): listed as 4 strings per state (name, dtype, shape "1,8,4", bytes),
// which Module.states parses into StateInfo; a state's values as a Tensor copy; reset.
jobjectArray native_states(JNIEnv* env, jclass, jlong handle) {
  return guarded<jobjectArray>(env, nullptr, [&]() -> jobjectArray {
    liteexport::Module* module = module_of(env, handle);
    if (module == nullptr) return nullptr;
    std::vector<std::string> texts;
    for (const liteexport::StateInfo& s : module->states()) {
      std::string shape;
      for (int64_t d : s.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
      texts.insert(texts.end(), {s.name, liteexport::dtype_name(s.dtype), shape, std::to_string(s.bytes)});
    }
    return to_jstring_array(env, texts);
  });
}

jobject native_state(JNIEnv* env, jclass, jlong handle, jstring jname) {
  return guarded<jobject>(env, nullptr, [&]() -> jobject {
    liteexport::Module* module = module_of(env, handle);
    std::string name;
    if (module == nullptr || jname == nullptr || !to_utf8(env, jname, &name)) return nullptr;
    const std::optional<liteexport::Tensor> value = module->state(name);
    return value ? new_tensor(env, *value) : nullptr;  // no such state: Java's null
  });
}

void native_reset_state(JNIEnv* env, jclass, jlong handle) {
  guarded<int>(env, 0, [&]() {
    liteexport::Module* module = module_of(env, handle);
    if (module != nullptr) module->reset_state();
    return 0;
  });
}

// ---- registration -------------------------------------------------------------------------

// A global reference to `name`, or nullptr (with NoClassDefFoundError pending).
jclass global_class(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) return nullptr;
  auto* global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

bool init_refs(JNIEnv* env) {
  JavaRefs& r = g_refs;
  r.tensor = global_class(env, "org/liteexport/Tensor");
  if (r.tensor == nullptr) return false;
  r.tensor_init = env->GetMethodID(r.tensor, "<init>", "([F[J)V");
  r.tensor_data = env->GetFieldID(r.tensor, "data", "[F");
  r.tensor_shape = env->GetFieldID(r.tensor, "shape", "[J");
  r.tensor_dtype = env->GetFieldID(r.tensor, "dtype", "Lorg/liteexport/DType;");
  r.tensor_buffer = env->GetFieldID(r.tensor, "buffer", "Ljava/nio/Buffer;");
  r.tensor_values = env->GetFieldID(r.tensor, "values", "Ljava/lang/Object;");
  r.tensor_of_values = env->GetStaticMethodID(r.tensor, "ofValues", "([JLjava/lang/Object;)Lorg/liteexport/Tensor;");
  jclass dtype = env->FindClass("org/liteexport/DType");
  r.dtype_code = dtype != nullptr ? env->GetFieldID(dtype, "code", "I") : nullptr;
  env->DeleteLocalRef(dtype);
  r.byte_buffer = global_class(env, "java/nio/ByteBuffer");
  r.string = global_class(env, "java/lang/String");
  r.lite_export_exception = global_class(env, "org/liteexport/LiteExportException");
  if (r.lite_export_exception != nullptr) {
    r.set_structured =
        env->GetMethodID(r.lite_export_exception, "setStructured", "(Ljava/lang/String;[Ljava/lang/String;)V");
  }
  r.format_exception = global_class(env, "org/liteexport/FormatException");
  r.input_exception = global_class(env, "org/liteexport/InputException");
  if (r.input_exception != nullptr) {
    r.input_exception_init = env->GetMethodID(r.input_exception, "<init>", "(Ljava/lang/String;J)V");
  }
  r.execution_exception = global_class(env, "org/liteexport/ExecutionException");
  if (r.execution_exception != nullptr) {
    r.execution_exception_init = env->GetMethodID(r.execution_exception, "<init>", "(Ljava/lang/String;J)V");
  }
  r.profile = global_class(env, "org/liteexport/Profile");
  r.profile_from_native = r.profile != nullptr
      ? env->GetStaticMethodID(r.profile, "fromNative",
                               "(Ljava/lang/String;IDD[Ljava/lang/String;[J[D)Lorg/liteexport/Profile;")
      : nullptr;
  r.illegal_state_exception = global_class(env, "java/lang/IllegalStateException");
  r.out_of_memory_error = global_class(env, "java/lang/OutOfMemoryError");
  return !env->ExceptionCheck() && r.tensor_init && r.tensor_data && r.tensor_shape && r.tensor_dtype &&
         r.tensor_buffer && r.tensor_values && r.tensor_of_values && r.dtype_code && r.byte_buffer && r.string &&
         r.lite_export_exception && r.set_structured && r.format_exception && r.input_exception_init && r.execution_exception_init &&
         r.profile_from_native && r.illegal_state_exception && r.out_of_memory_error;
}

}  // namespace liteexport_jni

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* /*reserved*/) {
  using namespace liteexport_jni;
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  if (!init_refs(env)) return JNI_ERR;  // System.loadLibrary then throws with the pending error

  // Signatures must match the `native` declarations in Module.java.
  const JNINativeMethod methods[] = {
      {const_cast<char*>("nativeLoad"), const_cast<char*>("(Ljava/lang/String;ZJDI)J"),
       reinterpret_cast<void*>(native_load)},
      {const_cast<char*>("nativeSetNumThreads"), const_cast<char*>("(JI)V"),
       reinterpret_cast<void*>(native_set_num_threads)},
      {const_cast<char*>("nativeDestroy"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(native_destroy)},
      // the Android library's loaders and extra files
      {const_cast<char*>("nativeLoadFd"), const_cast<char*>("(IJJZJD)J"), reinterpret_cast<void*>(native_load_fd)},
      {const_cast<char*>("nativeLoadBuffer"), const_cast<char*>("(Ljava/nio/ByteBuffer;IJD)J"),
       reinterpret_cast<void*>(native_load_buffer)},
      {const_cast<char*>("nativeExtraFileNames"), const_cast<char*>("(J)[Ljava/lang/String;"),
       reinterpret_cast<void*>(native_extra_file_names)},
      {const_cast<char*>("nativeExtraFile"), const_cast<char*>("(JLjava/lang/String;)[B"),
       reinterpret_cast<void*>(native_extra_file)},
      {const_cast<char*>("nativeMethodNames"), const_cast<char*>("(J)[Ljava/lang/String;"),
       reinterpret_cast<void*>(native_method_names)},
      {const_cast<char*>("nativeOutputNames"), const_cast<char*>("(JLjava/lang/String;)[Ljava/lang/String;"),
       reinterpret_cast<void*>(native_output_names)},
      {const_cast<char*>("nativeProfile"),
       const_cast<char*>("(JLjava/lang/String;[Lorg/liteexport/Tensor;II)Lorg/liteexport/Profile;"),
       reinterpret_cast<void*>(native_profile)},
      {const_cast<char*>("nativeStates"), const_cast<char*>("(J)[Ljava/lang/String;"),
       reinterpret_cast<void*>(native_states)},
      {const_cast<char*>("nativeState"), const_cast<char*>("(JLjava/lang/String;)Lorg/liteexport/Tensor;"),
       reinterpret_cast<void*>(native_state)},
      {const_cast<char*>("nativeResetState"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(native_reset_state)},
      {const_cast<char*>("nativeRunMethod"),
       const_cast<char*>("(JLjava/lang/String;[Lorg/liteexport/Tensor;)[Lorg/liteexport/Tensor;"),
       reinterpret_cast<void*>(native_run_method)},
  };
  jclass module_class = env->FindClass(kModuleClass);
  if (module_class == nullptr) return JNI_ERR;
  const jint status = env->RegisterNatives(module_class, methods, sizeof(methods) / sizeof(methods[0]));
  env->DeleteLocalRef(module_class);
  if (status != JNI_OK) return JNI_ERR;
  return register_generation_natives(env) ? JNI_VERSION_1_6 : JNI_ERR;
}
