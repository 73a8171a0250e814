package org.liteexport;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Base of every error the liteexport runtime reports: catch this one type to handle them all.
 *
 * <p>Unchecked, like PyTorch Android's errors: a bad bundle or a bad input is usually a
 * programming error in the app, not something each call site should have to declare.
 */
public class LiteExportException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private String code = "";
  private Map<String, String> fields = Collections.emptyMap();

  public LiteExportException(String message) {
    super(message);
  }

  /**
   * The error's code when the demo backend raised it (e.g. {@code "INPUT_MISMATCH"}, see
   * schema/demo_errors.toml), the same as runtime_py's {@code error.code}; "" for other errors.
   */
  public String code() {
    return code;
  }

  /** The code's named fields (values as text, in order), as runtime_py's {@code error.fields}. */
  public Map<String, String> fields() {
    return fields;
  }

  /** Set by the JNI bridge: the code and the fields as name, value, name, value, ... */
  void setStructured(String code, String[] namesAndValues) {
    Map<String, String> map = new LinkedHashMap<>();
    for (int i = 0; i + 1 < namesAndValues.length; i += 2) {
      map.put(namesAndValues[i], namesAndValues[i + 1]);
    }
    this.code = code;
    this.fields = Collections.unmodifiableMap(map);
  }
}
