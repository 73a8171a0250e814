package org.liteexport;

/**
 * The bundle is malformed, truncated, of an unsupported version, or cannot be read
 * (runtime_py's {@code FormatError}). Raised by {@link Module#load(String)}.
 */
public class FormatException extends LiteExportException {
  private static final long serialVersionUID = 1L;

  public FormatException(String message) {
    super(message);
  }
}
