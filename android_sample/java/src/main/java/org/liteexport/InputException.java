package org.liteexport;

/**
 * The call does not fit the bundle: an unknown method, or the wrong number of inputs
 * (runtime_py's {@code InputError}).
 */
public class InputException extends LiteExportException {
  private static final long serialVersionUID = 1L;

  public InputException(String message) {
    super(message);
  }
}
