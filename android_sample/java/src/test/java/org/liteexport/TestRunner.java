package org.liteexport;

import java.util.ArrayList;
import java.util.List;

/**
 * A tiny test runner: the host tests must run with nothing but a JDK (no JUnit download).
 * Runs every registered test, prints one line per failure, then "N passed, M failed".
 */
final class TestRunner {
  /** A test body; throwing anything (an AssertionError from {@link #check}, say) fails it. */
  interface Body {
    void run() throws Exception;
  }

  private final List<String> names = new ArrayList<>();
  private final List<Body> bodies = new ArrayList<>();

  void add(String name, Body body) {
    names.add(name);
    bodies.add(body);
  }

  /** Runs all tests; returns the number of failures. */
  int runAll(boolean verbose) {
    int passed = 0;
    int failed = 0;
    for (int i = 0; i < names.size(); i++) {
      try {
        bodies.get(i).run();
        passed++;
        if (verbose) {
          System.out.println("PASS " + names.get(i));
        }
      } catch (Throwable t) {  // an Error from the API under test is a failure too, not a crash
        failed++;
        System.out.println("FAIL " + names.get(i) + ": " + describe(t));
      }
    }
    System.out.println(passed + " passed, " + failed + " failed");
    return failed;
  }

  private static String describe(Throwable t) {
    String text = t.getClass().getName() + ": " + t.getMessage();
    return t instanceof AssertionError ? String.valueOf(t.getMessage()) : text;
  }

  static void check(boolean condition, String message) {
    if (!condition) {
      throw new AssertionError(message);
    }
  }

  /** Runs {@code body}, requiring it to throw {@code type}; returns the exception. */
  static <T extends Throwable> T expectThrows(Class<T> type, Body body) {
    try {
      body.run();
    } catch (Throwable t) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
      throw new AssertionError("expected " + type.getSimpleName() + ", got " + t.getClass().getName()
          + ": " + t.getMessage(), t);
    }
    throw new AssertionError("expected " + type.getSimpleName() + ", nothing was thrown");
  }
}
