// JNI bridge of org.liteexport.LlmModule: the native core's generation loop (liteexport::Generator,
// native/include/liteexport/generation.h) run in one JNI call per generation, reporting each token
// to the Java TokenCallback as it comes. The bridge's rules (liteexport_jni.cpp) hold here too.
#include <jni.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge.h"
#include "liteexport/generation.h"

namespace liteexport_jni {

namespace {

constexpr char kLlmModuleClass[] = "org/liteexport/LlmModule";

jclass g_generation_result = nullptr;
jmethodID g_generation_result_init = nullptr;  // GenerationResult(long[], String, long, double, double)
jmethodID g_on_token = nullptr;                // TokenCallback.onToken(long)

liteexport::Generator* generator_of(JNIEnv* env, jlong handle) {
  if (handle == 0) {  // LlmModule.java checks first; this only guards against misuse of the natives
    env->ThrowNew(g_refs.illegal_state_exception, "liteexport: LlmModule is closed");
    return nullptr;
  }
  return reinterpret_cast<liteexport::Generator*>(static_cast<intptr_t>(handle));
}

// A Java long[] as ids; false with a Java exception pending.
bool read_ids(JNIEnv* env, jlongArray array, std::vector<int64_t>* out) {
  const jsize n = env->GetArrayLength(array);
  std::vector<jlong> values(static_cast<size_t>(n));
  if (n > 0) env->GetLongArrayRegion(array, 0, n, values.data());
  if (env->ExceptionCheck()) return false;
  out->assign(values.begin(), values.end());
  return true;
}

jlong native_create(JNIEnv* env, jclass, jlong module_handle, jstring jname) {
  return guarded<jlong>(env, 0, [&]() -> jlong {
    liteexport::Module* module = module_of(env, module_handle);
    std::string name = "the bundle";
    if (module == nullptr || (jname != nullptr && !to_utf8(env, jname, &name))) return 0;
    auto generator = std::make_unique<liteexport::Generator>(*module, name);
    return static_cast<jlong>(reinterpret_cast<intptr_t>(generator.release()));
  });
}

jobject native_generate(JNIEnv* env, jclass, jlong handle, jlongArray jprompt, jlong max_new_tokens, jdouble temperature,
                        jlong top_k, jdouble top_p, jlong seed, jlongArray jstop_ids, jobject callback) {
  return guarded<jobject>(env, nullptr, [&]() -> jobject {
    liteexport::Generator* generator = generator_of(env, handle);
    if (generator == nullptr) return nullptr;
    std::vector<int64_t> prompt;
    if (!read_ids(env, jprompt, &prompt)) return nullptr;
    liteexport::GenerationConfig config;
    config.max_new_tokens = static_cast<int64_t>(max_new_tokens);
    config.temperature = temperature;
    config.top_k = static_cast<int64_t>(top_k);
    config.top_p = top_p;
    config.seed = static_cast<uint64_t>(seed);  // Java's negative longs: the upper half of uint64
    if (jstop_ids != nullptr) {
      config.stop_ids.emplace();
      if (!read_ids(env, jstop_ids, &*config.stop_ids)) return nullptr;
    }
    // a Java exception in the callback stops the generation; it is then what generate throws
    liteexport::Generator::TokenCallback on_token;
    if (callback != nullptr)
      on_token = [env, callback](int64_t token) {
        env->CallVoidMethod(callback, g_on_token, static_cast<jlong>(token));
        return !env->ExceptionCheck();
      };
    const liteexport::GenerationResult r = generator->generate(prompt, config, on_token);
    if (env->ExceptionCheck()) return nullptr;
    jlongArray tokens = env->NewLongArray(static_cast<jsize>(r.tokens.size()));
    if (tokens == nullptr) return nullptr;
    const std::vector<jlong> values(r.tokens.begin(), r.tokens.end());
    env->SetLongArrayRegion(tokens, 0, static_cast<jsize>(values.size()), values.data());
    jstring reason = to_jstring(env, r.stop_reason);
    if (reason == nullptr) return nullptr;
    return env->NewObject(g_generation_result, g_generation_result_init, tokens, reason,
                          static_cast<jlong>(r.prompt_tokens), r.prefill_seconds, r.decode_seconds);
  });
}

void native_stop(JNIEnv* env, jclass, jlong handle) {
  guarded<int>(env, 0, [&]() {
    if (liteexport::Generator* generator = generator_of(env, handle)) generator->stop();
    return 0;
  });
}

void native_destroy(JNIEnv* env, jclass, jlong handle) {
  guarded<int>(env, 0, [&]() {
    delete reinterpret_cast<liteexport::Generator*>(static_cast<intptr_t>(handle));
    return 0;
  });
}

}  // namespace

bool register_generation_natives(JNIEnv* env) {
  jclass result = env->FindClass("org/liteexport/GenerationResult");
  if (result == nullptr) return false;
  g_generation_result = static_cast<jclass>(env->NewGlobalRef(result));
  env->DeleteLocalRef(result);
  g_generation_result_init = env->GetMethodID(g_generation_result, "<init>", "([JLjava/lang/String;JDD)V");
  jclass callback = env->FindClass("org/liteexport/TokenCallback");
  if (g_generation_result_init == nullptr || callback == nullptr) return false;
  g_on_token = env->GetMethodID(callback, "onToken", "(J)V");
  env->DeleteLocalRef(callback);
  if (g_on_token == nullptr) return false;
  // Signatures must match the `native` declarations in LlmModule.java.
  const JNINativeMethod methods[] = {
      {const_cast<char*>("nativeCreate"), const_cast<char*>("(JLjava/lang/String;)J"),
       reinterpret_cast<void*>(native_create)},
      {const_cast<char*>("nativeGenerate"),
       const_cast<char*>("(J[JJDJDJ[JLorg/liteexport/TokenCallback;)Lorg/liteexport/GenerationResult;"),
       reinterpret_cast<void*>(native_generate)},
      {const_cast<char*>("nativeStop"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(native_stop)},
      {const_cast<char*>("nativeDestroy"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(native_destroy)},
  };
  jclass llm = env->FindClass(kLlmModuleClass);
  if (llm == nullptr) return false;
  const jint status = env->RegisterNatives(llm, methods, sizeof(methods) / sizeof(methods[0]));
  env->DeleteLocalRef(llm);
  return status == JNI_OK;
}

}  // namespace liteexport_jni
