package org.liteexport;

/**
 * A method failed while running on inputs that fit it, e.g. an id outside an embedding's table or a
 * run limit exceeded (runtime_py's {@code ExecutionError}); an input of the wrong shape or dtype is
 * an {@link InputException}.
 *
 * <p>When the failure is inside a compiled program, {@link #getDebugHandle()} is the failing
 * instruction's debug handle and the message is mapped through the bundle's debug table: the
 * instruction, then a {@code Module hierarchy:} line and a TorchScript-style traceback pointing
 * at the line of Python that produced the instruction, exactly as runtime_py formats it.
 */
public class ExecutionException extends LiteExportException {
  private static final long serialVersionUID = 1L;

  private final long debugHandle;

  public ExecutionException(String message, long debugHandle) {
    super(message);
    this.debugHandle = debugHandle;
  }

  /** The failing instruction's debug handle, or -1 when the failure is not inside a program. */
  public long getDebugHandle() {
    return debugHandle;
  }
}
