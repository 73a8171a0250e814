package org.liteexport;

/**
 * The call does not fit the bundle: an unknown method, the wrong number of inputs, or an input of
 * another dtype or shape than the method declares, or, for a method whose input shapes the bundle
 * does not declare (exported without {@code --input-shape}), one the instruction reading it cannot
 * take (runtime_py's {@code InputError}, exit 6 of the tools).
 *
 * <p>{@link #code()} and {@link #fields()} are runtime_py's: {@code INPUT_MISMATCH} (fields
 * {@code instruction}, {@code index}, {@code expected}, {@code got}), {@code INPUT_UNFIT}
 * ({@code instruction}, {@code index}, {@code got}, {@code reason}), {@code INPUT_COUNT},
 * {@code INPUT_DIM_RANGE}, {@code INPUT_DIM_AGREE}; "" for errors found in Java or the bridge
 * (a null input, an unsupported Java dtype).
 */
public class InputException extends LiteExportException {
  private static final long serialVersionUID = 1L;

  private final long debugHandle;

  public InputException(String message) {
    this(message, -1);
  }

  public InputException(String message, long debugHandle) {
    super(message);
    this.debugHandle = debugHandle;
  }

  /**
   * The debug handle of the instruction that reads the misfit input first (its module is named in
   * the message, as runtime_py's), or -1 when none does (a wrong count, an unread input).
   */
  public long getDebugHandle() {
    return debugHandle;
  }
}
