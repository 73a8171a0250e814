package org.liteexport.sample;

import org.liteexport.LiteExportException;

/**
 * The text MainActivity shows instead of crashing when the demo fails: any Throwable, whether
 * the bundle is bad (a LiteExportException, whose message is already source-mapped), the asset
 * cannot be copied, or the native library is missing for this device's ABI (UnsatisfiedLinkError).
 * Plain Java, no android.* imports: the host tests (android_sample/host_tests.sh) check it.
 */
public final class ErrorReport {
  // Causes are followed this deep at most: a cause chain may be long or even contain a cycle.
  private static final int MAX_CAUSES = 8;

  private ErrorReport() {}

  /** What failed, for a person: the error's type and message, a hint where one helps, its causes. */
  public static String describe(Throwable error) {
    StringBuilder out = new StringBuilder();
    if (error instanceof UnsatisfiedLinkError) {
      out.append("The native library (libliteexport_jni.so) could not be loaded: this APK may not be ")
          .append("built for this device's ABI (abiFilters in liteexport/build.gradle.kts).\n");
    }
    Throwable cause = error;
    for (int depth = 0; cause != null && depth < MAX_CAUSES; depth++) {
      out.append(depth == 0 ? "" : "caused by: ").append(line(cause)).append('\n');
      cause = cause.getCause() == cause ? null : cause.getCause();
    }
    return out.toString();
  }

  private static String line(Throwable t) {
    String message = t.getMessage() == null ? "" : t.getMessage();
    if (t instanceof LiteExportException) {
      return t.getClass().getSimpleName() + ":\n" + message;  // multi-line, source-mapped
    }
    return t.getClass().getName() + (message.isEmpty() ? "" : ": " + message);
  }
}
