package org.liteexport;

import java.nio.ByteBuffer;

/**
 * A liteexport bundle (.ptl) loaded by the native runtime, shaped after PyTorch Android's
 * {@code org.pytorch.Module}:
 *
 * <pre>{@code
 * try (Module module = Module.load(path)) {
 *   Tensor[] outputs = module.forward(Tensor.fromBlob(pixels, new long[] {1, 3, 32, 32}));
 *   float[] scores = outputs[0].getDataAsFloatArray();
 * }
 * }</pre>
 *
 * <p>Methods return {@code Tensor[]}: one tensor for a method that returns a Tensor, one per
 * element for a method that returns a tuple. An element that is None is {@code null}: googlenet
 * and inception_v3 return {@code (logits, None, None)} in eval mode, so {@code outputs[1]} and
 * {@code outputs[2]} are null (where PyTorch Android would give {@code IValue.optionalNull()}).
 * (PyTorch Android returns an IValue instead; this runtime's methods return only tensors and
 * None, so an array is all that is needed. A tuple holding another constant, an int, bool or
 * float, is an {@link ExecutionException} naming the output.)
 *
 * <p>Calls on one Module are serialized (its methods are synchronized); {@link #close()} frees the
 * native memory at once, and any later use throws {@link IllegalStateException}. Use separate
 * Modules to run in parallel.
 */
public final class Module implements AutoCloseable {
  static {
    NativeLoader.loadLibrary();
  }

  private final String path;
  private long handle;  // the native liteexport::Module*; 0 once closed

  private Module(long handle, String path) {
    this.handle = handle;
    this.path = path;
  }

  /**
   * Memory-maps, verifies and loads the bundle at {@code path} (a file path; for a bundle shipped
   * in an app's assets use {@code AndroidModules.load(context, assetName)}, which maps it inside
   * the APK).
   *
   * @throws FormatException if the file cannot be read or is not a valid bundle
   */
  public static Module load(String path) {
    return load(path, new LoadOptions());
  }

  /**
   * Loads the bundle at {@code path} with {@code options}: a copying load, a memory budget and a
   * timeout per call (see {@link LoadOptions}).
   *
   * @throws FormatException if the file cannot be read, is not a regular file, or is not a valid
   *     bundle
   */
  public static Module load(String path, LoadOptions options) {
    if (path == null || options == null) {
      throw new NullPointerException("Module.load: path and options must not be null");
    }
    return new Module(
        nativeLoad(path, options.copy(), options.maxMemory(), options.timeoutSeconds(), options.numThreads()), path);
  }

  /**
   * Loads the bundle stored as {@code length} bytes at {@code offset} of the open file {@code fd}:
   * a bundle inside a larger file, such as an uncompressed asset of an APK ({@code
   * AssetManager.openFd} gives the APK's descriptor, the asset's offset and its length; {@code
   * AndroidModules.load(context, assetName)} does this). The range is memory-mapped in place, as
   * {@link #load(String)} maps a file, unless {@code options.copy(true)} or the range does not
   * start 16-byte aligned (the alignment the format needs; an APK aligns uncompressed assets to 4
   * bytes only): then it is read into memory. Either way nothing is copied out to a file.
   *
   * <p>The descriptor stays the caller's: it may be closed once this returns.
   *
   * @throws FormatException if the descriptor is not an open regular file, the range lies
   *     outside it, or the range is not a valid bundle
   */
  public static Module load(int fd, long offset, long length, LoadOptions options) {
    if (options == null) {
      throw new NullPointerException("Module.load: options must not be null");
    }
    String where = "bundle at offset " + offset + " (" + length + " bytes) of descriptor " + fd;
    return withThreads(new Module(nativeLoadFd(fd, offset, length, options.copy(), options.maxMemory(),
        options.timeoutSeconds()), where), options);
  }

  // The loaders from a descriptor and from memory apply the thread count after loading.
  private static Module withThreads(Module module, LoadOptions options) {
    if (options.numThreads() != 1) {
      try {
        module.setNumThreads(options.numThreads());
      } catch (RuntimeException e) {
        module.close();
        throw e;
      }
    }
    return module;
  }

  /**
   * Loads a bundle from the bytes of {@code bundle} between its position and its limit (its
   * position is not moved). They are copied into the native runtime: the buffer may be reused
   * once this returns. For a bundle that is not a file, e.g. an asset stored compressed, read
   * through a stream. {@code options.copy} does not apply (the bytes are always copied).
   *
   * @throws FormatException if the bytes are not a valid bundle
   */
  public static Module load(ByteBuffer bundle, LoadOptions options) {
    if (bundle == null || options == null) {
      throw new NullPointerException("Module.load: bundle and options must not be null");
    }
    ByteBuffer direct = bundle.slice();  // from the position: the JNI bridge reads from the address
    if (!direct.isDirect()) {  // a heap buffer has no address to hand over: copy it once
      direct = ByteBuffer.allocateDirect(bundle.remaining());
      direct.put(bundle.duplicate());
      direct.clear();
    }
    return withThreads(new Module(nativeLoadBuffer(direct, direct.remaining(), options.maxMemory(),
        options.timeoutSeconds()), "bundle of " + direct.remaining() + " bytes in memory"), options);
  }

  /** {@link #load(ByteBuffer, LoadOptions)} with the default options. */
  public static Module load(ByteBuffer bundle) {
    return load(bundle, new LoadOptions());
  }

  /** Runs {@code forward}; same as {@code runMethod("forward", inputs)}. */
  public Tensor[] forward(Tensor... inputs) {
    return runMethod("forward", inputs);
  }

  /**
   * Runs method {@code name} ({@code forward} or an {@code @torch.jit.export} method).
   *
   * @return the method's outputs: one tensor, or one per element of a returned tuple ({@code
   *     null} for an element that is None)
   * @throws InputException for an unknown method, the wrong number of inputs, or an input of
   *     another dtype or shape than the method declares (the message says expected vs got)
   * @throws ExecutionException if the method fails, e.g. on an id outside an embedding's table or
   *     a shape only a kernel refuses, or exceeds the memory budget or timeout of its
   *     {@link LoadOptions}
   * @throws IllegalStateException if the module is closed
   */
  public synchronized Tensor[] runMethod(String name, Tensor... inputs) {
    checkCall("runMethod", name, inputs);
    return nativeRunMethod(liveHandle(), name, inputs);
  }

  /**
   * Runs method {@code name} {@code warmup} times unmeasured, then {@code runs} times timing each
   * compiled instruction, and gives where the time went, by source line (see {@link Profile}).
   * The inputs and exceptions are {@link #runMethod}'s.
   *
   * <pre>{@code
   * Profile profile = module.profile("forward", 20, 2, input);
   * Log.i("model", profile.format(5));  // the five most expensive lines of the model
   * }</pre>
   *
   * @throws IllegalArgumentException if {@code runs < 1} or {@code warmup < 0}
   */
  public synchronized Profile profile(String name, int runs, int warmup, Tensor... inputs) {
    if (runs < 1 || warmup < 0) {
      throw new IllegalArgumentException("profile needs runs >= 1 and warmup >= 0, got " + runs + ", " + warmup);
    }
    checkCall("profile", name, inputs);
    return nativeProfile(liveHandle(), name, inputs, runs, warmup);
  }

  /**
   * The keys of method {@code name}'s result when it returns a dict of tensors (as torchvision's
   * segmentation models return {@code {"out": ...}}), in the order {@link #runMethod} returns its
   * values; an empty array for a method returning a tensor or a tuple.
   *
   * @throws InputException for an unknown method
   */
  public synchronized String[] outputNames(String name) {
    if (name == null) {
      throw new NullPointerException("outputNames: name must not be null");
    }
    return nativeOutputNames(liveHandle(), name);
  }

  /**
   * Runs method {@code name}, which returns a dict of tensors, and gives that dict: keys in the
   * model's order (a {@link java.util.LinkedHashMap}).
   *
   * @throws IllegalArgumentException if the method does not return a dict (use {@link #runMethod})
   * @see #runMethod for the other exceptions
   */
  public synchronized java.util.Map<String, Tensor> runMethodForMap(String name, Tensor... inputs) {
    String[] keys = outputNames(name);
    if (keys.length == 0) {
      throw new IllegalArgumentException(name + " does not return a dict of tensors: use runMethod");
    }
    Tensor[] values = runMethod(name, inputs);
    java.util.Map<String, Tensor> result = new java.util.LinkedHashMap<>();
    for (int i = 0; i < keys.length; i++) {
      result.put(keys[i], values[i]);
    }
    return result;
  }

  /**
   * The threads later calls compute on, 1 to {@link LoadOptions#MAX_THREADS} (as PyTorch Android's
   * {@code setNumThreads}; default 1, or {@link LoadOptions#numThreads(int)}).
   *
   * @throws IllegalArgumentException outside 1..{@link LoadOptions#MAX_THREADS}
   * @throws IllegalStateException if the module is closed
   */
  public synchronized void setNumThreads(int numThreads) {
    LoadOptions.checkThreads(numThreads);
    nativeSetNumThreads(liveHandle(), numThreads);
  }

  /** The methods that can be run: forward and the {@code @torch.jit.export} methods. */
  public synchronized String[] methodNames() {
    return nativeMethodNames(liveHandle());
  }

  /**
   * The names of the files stored with the bundle by its exporter ({@code liteexport export
   * --extra-file labels.txt=labels.txt}, or {@code extra_files=}): labels, normalization
   * constants and the like, as runtime_py's {@code Module.extra_files}. liteexport's own files
   * (named {@code liteexport/...}, e.g. the debug table) are not listed. Empty if there are none.
   */
  public synchronized String[] extraFileNames() {
    return nativeExtraFileNames(liveHandle());
  }

  /**
   * The content of the extra file {@code name} (see {@link #extraFileNames()}), or {@code null}
   * if the bundle has none of that name. Decode text with {@code new String(bytes,
   * StandardCharsets.UTF_8)}.
   */
  public synchronized byte[] extraFile(String name) {
    if (name == null) {
      throw new NullPointerException("extraFile: name must not be null");
    }
    return nativeExtraFile(liveHandle(), name);
  }

  /**
   * The tensors this module keeps across calls (program state, e.g. a KV cache written by each
   * call of an exported decoder LM): name, dtype, shape and bytes, in the order the methods declare
   * them; empty for a bundle without state. Each loaded Module has its own, allocated at load and
   * shared by all its methods (a {@code prefill} and a {@code decode} work on one copy). A call
   * that fails leaves the state as it was before the call.
   */
  public synchronized StateInfo[] states() {
    String[] texts = nativeStates(liveHandle());
    StateInfo[] states = new StateInfo[texts.length / 4];
    for (int i = 0; i < states.length; i++) {
      states[i] = StateInfo.parse(texts[4 * i], texts[4 * i + 1], texts[4 * i + 2], texts[4 * i + 3]);
    }
    return states;
  }

  /** The names of {@link #states()}. */
  public synchronized String[] stateNames() {
    StateInfo[] states = states();
    String[] names = new String[states.length];
    for (int i = 0; i < states.length; i++) {
      names[i] = states[i].name();
    }
    return names;
  }

  /**
   * A copy of the state tensor {@code name}'s values now, or {@code null} if the bundle has no
   * state of that name.
   */
  public synchronized Tensor state(String name) {
    if (name == null) {
      throw new NullPointerException("state: name must not be null");
    }
    return nativeState(liveHandle(), name);
  }

  /**
   * Every state tensor back to its initial value (the start of a new conversation): what the next
   * call sees is as after loading.
   */
  public synchronized void resetState() {
    nativeResetState(liveHandle());
  }

  /** The path this module was loaded from (for a descriptor or a buffer: a description of it). */
  public String path() {
    return path;
  }

  /** Whether {@link #close()} has been called. */
  public synchronized boolean isClosed() {
    return handle == 0;
  }

  /** Frees the native module (and unmaps the bundle). Idempotent. */
  @Override
  public synchronized void close() {
    if (handle != 0) {
      long h = handle;
      handle = 0;
      nativeDestroy(h);
    }
  }

  private static void checkCall(String call, String name, Tensor[] inputs) {
    if (name == null || inputs == null) {
      throw new NullPointerException(call + ": name and inputs must not be null");
    }
    for (int i = 0; i < inputs.length; i++) {
      if (inputs[i] == null) {
        throw new NullPointerException(call + "(" + name + "): input " + i + " is null");
      }
    }
  }

  long liveHandle() {  // package-private: LlmModule runs the native generator on it
    if (handle == 0) {
      throw new IllegalStateException("Module " + path + " is closed");
    }
    return handle;
  }

  // Implemented in jni/liteexport_jni.cpp (registered in JNI_OnLoad).
  private static native long nativeLoad(String path, boolean copy, long maxMemory, double timeoutSeconds,
      int numThreads);

  private static native void nativeSetNumThreads(long handle, int numThreads);

  private static native void nativeDestroy(long handle);

  // Loading from a descriptor range and from memory, and the bundle's extra files (the Android
  // library, issue 23); the thread count is applied after loading (withThreads).
  private static native long nativeLoadFd(int fd, long offset, long length, boolean copy, long maxMemory,
      double timeoutSeconds);

  private static native long nativeLoadBuffer(ByteBuffer direct, int length, long maxMemory, double timeoutSeconds);

  private static native String[] nativeExtraFileNames(long handle);

  private static native byte[] nativeExtraFile(long handle, String name);

  private static native String[] nativeMethodNames(long handle);

  private static native String[] nativeOutputNames(long handle, String name);

  // Program state (issue 34)
  private static native String[] nativeStates(long handle);

  private static native Tensor nativeState(long handle, String name);

  private static native void nativeResetState(long handle);

  private static native Tensor[] nativeRunMethod(long handle, String name, Tensor[] inputs);

  private static native Profile nativeProfile(long handle, String name, Tensor[] inputs, int runs, int warmup);
}
