package org.liteexport;

/**
 * Loads the JNI library once, before the first native call.
 *
 * <p>On Android the library is packaged in the APK and found by name. On a desktop JVM (the
 * host tests) set the system property {@code liteexport.jni.path} to the library file, e.g.
 * {@code -Dliteexport.jni.path=build/jni/libliteexport_jni.so}; otherwise the name is looked up
 * on {@code java.library.path}.
 */
public final class NativeLoader {
  /** System property naming the JNI library file to load instead of looking it up by name. */
  public static final String PATH_PROPERTY = "liteexport.jni.path";

  /** The library's name as System.loadLibrary takes it (file: libliteexport_jni.so). */
  public static final String LIBRARY_NAME = "liteexport_jni";

  private static boolean loaded;

  private NativeLoader() {}

  /** Loads the library if it is not loaded yet; safe to call from any thread, any number of times. */
  public static synchronized void loadLibrary() {
    if (loaded) {
      return;
    }
    String path = System.getProperty(PATH_PROPERTY);
    if (path != null && !path.isEmpty()) {
      System.load(new java.io.File(path).getAbsolutePath());  // System.load needs an absolute path
    } else {
      System.loadLibrary(LIBRARY_NAME);
    }
    loaded = true;
  }
}
