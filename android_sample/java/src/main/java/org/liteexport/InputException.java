package org.liteexport;

/**
 * The call does not fit the bundle: an unknown method, the wrong number of inputs, or an input of
 * another dtype or shape than the method declares (runtime_py's {@code InputError}).
 */
public class InputException extends LiteExportException {
  private static final long serialVersionUID = 1L;

  public InputException(String message) {
    super(message);
  }
}
