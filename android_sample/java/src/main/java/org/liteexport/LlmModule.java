package org.liteexport;

/**
 * Text generation on a bundle that keeps its KV cache as program state: a decoder LM exported with
 * transformers' on-device recipe ({@code TorchExportableModuleForDecoderOnlyLM}), whose bundle
 * records how it generates ({@code liteexport/generation.json}). Takes and returns token ids
 * (tokenizing is the app's).
 * <pre>{@code
 * try (Module module = Module.load(path); LlmModule llm = new LlmModule(module)) {
 *   GenerationResult r = llm.generate(promptIds, new GenerationConfig().maxNewTokens(64).temperature(0.7f).seed(1),
 *       token -> publish(token));
 * }
 * }</pre>
 * <p>The loop is the native core's {@code liteexport::Generator} (native/include/liteexport/
 * generation.h, runtime_py's generator mirrored), reached through one JNI call per generation:
 * the prompt is prefilled in chunks, then one token per call is sampled and reported, until a stop
 * token, {@code maxNewTokens}, the end of the cache, or {@link #stop()}. The same prompt and
 * config give the same ids as runtime_py and the native core. Each generation starts from the
 * module's initial state ({@link Module#resetState()}).
 * <p>Closing this does not close the {@link Module}. One generation at a time per LlmModule;
 * while it runs, the module's other calls wait.
 */
public final class LlmModule implements AutoCloseable {
  private final Module module;
  private final Object handleLock = new Object();  // stop() and close(): not held while generating
  private long handle;  // the native liteexport::Generator*; 0 once closed

  /**
   * A generator over {@code module}.
   * @throws InputException if the bundle cannot generate (it has no generation record)
   * @throws FormatException if its generation record is malformed
   */
  public LlmModule(Module module) {
    if (module == null) {
      throw new NullPointerException("LlmModule: module must not be null");
    }
    this.module = module;
    synchronized (module) {
      this.handle = nativeCreate(module.liveHandle(), module.path());
    }
  }

  /** The module it generates with. */
  public Module module() {
    return module;
  }

  /**
   * Generates after {@code promptIds}; {@code callback} (may be null) sees each new id as it comes.
   * @throws InputException for an empty prompt, a prompt longer than the cache, {@code
   *     maxNewTokens < 1} or a bad sampling value, before anything runs
   * @throws ExecutionException if a call of the model fails
   * @throws IllegalStateException if this or the module is closed
   */
  public synchronized GenerationResult generate(long[] promptIds, GenerationConfig config, TokenCallback callback) {
    if (promptIds == null || config == null) {
      throw new NullPointerException("generate: promptIds and config must not be null");
    }
    synchronized (module) {  // the module is not closed under the native loop
      long h = liveHandle();
      module.liveHandle();
      return nativeGenerate(h, promptIds, config.maxNewTokens(), config.temperature(), config.topK(), config.topP(),
          config.seed(), config.stopIds(), callback);
    }
  }

  /** {@link #generate(long[], GenerationConfig, TokenCallback)} without a callback. */
  public GenerationResult generate(long[] promptIds, GenerationConfig config) {
    return generate(promptIds, config, null);
  }

  /**
   * Ends a running {@link #generate} after its current token (stop reason {@code "stopped"}); safe
   * from any thread, the callback included. Does nothing when no generation runs: a later one is
   * not affected.
   */
  public void stop() {
    synchronized (handleLock) {
      if (handle != 0) {
        nativeStop(handle);
      }
    }
  }

  /** Frees the native generator (not the module). Idempotent. */
  @Override
  public synchronized void close() {
    synchronized (handleLock) {
      if (handle != 0) {
        long h = handle;
        handle = 0;
        nativeDestroy(h);
      }
    }
  }

  private long liveHandle() {
    synchronized (handleLock) {
      if (handle == 0) {
        throw new IllegalStateException("LlmModule of " + module.path() + " is closed");
      }
      return handle;
    }
  }

  // Implemented in jni/liteexport_jni.cpp (registered in JNI_OnLoad).
  private static native long nativeCreate(long moduleHandle, String name);

  private static native GenerationResult nativeGenerate(long handle, long[] promptIds, long maxNewTokens,
      double temperature, long topK, double topP, long seed, long[] stopIds, TokenCallback callback);

  private static native void nativeStop(long handle);

  private static native void nativeDestroy(long handle);
}
