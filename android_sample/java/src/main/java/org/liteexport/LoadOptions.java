package org.liteexport;

/**
 * How {@link Module#load(String, LoadOptions)} loads a bundle and what each of the module's calls
 * may use (the native core's {@code liteexport::LoadOptions}):
 *
 * <pre>{@code
 * Module module = Module.load(path, new LoadOptions().copy(true).maxMemory(256L << 20).timeoutSeconds(2));
 * }</pre>
 *
 * <p>A call that exceeds its memory budget or its timeout throws {@link ExecutionException} naming
 * the instruction; the module stays usable.
 */
public final class LoadOptions {
  private boolean copy = false;
  private long maxMemory = 1L << 30;
  private double timeoutSeconds = 0;
  private int numThreads = 1;

  /** Most threads a module may compute on. */
  public static final int MAX_THREADS = 64;

  /**
   * {@code true}: read the file into memory (independent of later changes to it). {@code false}
   * (the default): memory-map it and use its weights in place; the file must then stay unchanged
   * while the module is open (truncating it crashes the process with SIGBUS, rewriting it changes
   * the outputs).
   */
  public LoadOptions copy(boolean copy) {
    this.copy = copy;
    return this;
  }

  /** Bytes of results alive at once during a call; 0 = no budget. Default 1 GiB. */
  public LoadOptions maxMemory(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("maxMemory must be >= 0 (0: no budget), got " + bytes);
    }
    this.maxMemory = bytes;
    return this;
  }

  /** Wall-clock seconds a call may run; 0 (the default) = no limit. */
  public LoadOptions timeoutSeconds(double seconds) {
    if (!(seconds >= 0) || Double.isInfinite(seconds)) {
      throw new IllegalArgumentException("timeoutSeconds must be finite and >= 0 (0: none), got " + seconds);
    }
    this.timeoutSeconds = seconds;
    return this;
  }

  /**
   * Threads each call computes on (convolutions, linear layers, pooling and elementwise ops split
   * their work), 1 to {@link #MAX_THREADS}. Default 1, as PyTorch Android's; {@link
   * Module#setNumThreads(int)} changes it on a loaded module.
   */
  public LoadOptions numThreads(int threads) {
    this.numThreads = checkThreads(threads);
    return this;
  }

  static int checkThreads(int threads) {
    if (threads < 1 || threads > MAX_THREADS) {
      throw new IllegalArgumentException("numThreads must be between 1 and " + MAX_THREADS + ", got " + threads);
    }
    return threads;
  }

  public int numThreads() {
    return numThreads;
  }

  public boolean copy() {
    return copy;
  }

  public long maxMemory() {
    return maxMemory;
  }

  public double timeoutSeconds() {
    return timeoutSeconds;
  }
}
