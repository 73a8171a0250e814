package org.liteexport;

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
   * Memory-maps, verifies and loads the bundle at {@code path} (a file path: on Android, copy a
   * bundle shipped in the assets to the files directory first).
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

  /** Runs {@code forward}; same as {@code runMethod("forward", inputs)}. */
  public Tensor[] forward(Tensor... inputs) {
    return runMethod("forward", inputs);
  }

  /**
   * Runs method {@code name} ({@code forward} or an {@code @torch.jit.export} method).
   *
   * @return the method's outputs: one tensor, or one per element of a returned tuple ({@code
   *     null} for an element that is None)
   * @throws InputException for an unknown method or the wrong number of inputs
   * @throws ExecutionException if the method fails, e.g. on an input of the wrong shape, or
   *     exceeds the memory budget or timeout of its {@link LoadOptions}
   * @throws IllegalStateException if the module is closed
   */
  public synchronized Tensor[] runMethod(String name, Tensor... inputs) {
    if (name == null || inputs == null) {
      throw new NullPointerException("runMethod: name and inputs must not be null");
    }
    for (int i = 0; i < inputs.length; i++) {
      if (inputs[i] == null) {
        throw new NullPointerException("runMethod(" + name + "): input " + i + " is null");
      }
    }
    return nativeRunMethod(liveHandle(), name, inputs);
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

  /** The path this module was loaded from. */
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

  private long liveHandle() {
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

  private static native String[] nativeMethodNames(long handle);

  private static native Tensor[] nativeRunMethod(long handle, String name, Tensor[] inputs);
}
