package org.liteexport;

/**
 * Base of every error the liteexport runtime reports: catch this one type to handle them all.
 *
 * <p>Unchecked, like PyTorch Android's errors: a bad bundle or a bad input is usually a
 * programming error in the app, not something each call site should have to declare.
 */
public class LiteExportException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LiteExportException(String message) {
    super(message);
  }
}
