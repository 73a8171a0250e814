package org.liteexport;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Where a method's time goes ({@link Module#profile}): one row per compiled instruction, most
 * expensive first, each mapped through the bundle's debug table to the line of the model's source
 * and the module it was compiled from, as {@code liteexport profile} prints it on the desktop.
 */
public final class Profile {
  /** One compiled instruction's cost over the profiled runs. */
  public static final class Instruction {
    /** The compiled program's method. */
    public final String method;
    /** The instruction's position in that program. */
    public final long index;
    /** The demo opcode, e.g. {@code CONV2D}. */
    public final String op;
    /** The TorchScript node it was compiled from, e.g. {@code aten::conv2d}; empty without a debug table. */
    public final String node;
    /** {@code file:line} in the model's code; empty without a debug table ({@code --strip-debug}). */
    public final String location;
    /** The module it belongs to, e.g. {@code top(TinyCNN).features(Sequential).0(Conv2d)}. */
    public final String moduleHierarchy;
    /** Seconds over all profiled runs. */
    public final double seconds;
    /** Times it ran: once per run, unless the model calls the method's program more often. */
    public final long calls;

    Instruction(String method, long index, String op, String node, String location, String moduleHierarchy,
        double seconds, long calls) {
      this.method = method;
      this.index = index;
      this.op = op;
      this.node = node;
      this.location = location;
      this.moduleHierarchy = moduleHierarchy;
      this.seconds = seconds;
      this.calls = calls;
    }
  }

  /** The profiled method. */
  public final String method;
  /** Profiled runs (after the unmeasured warm-up runs). */
  public final int runs;
  /** The method's wall time over the profiled runs. */
  public final double totalSeconds;
  /** Time outside compiled programs: the bytecode around them. */
  public final double otherSeconds;
  /** Every instruction that ran, most expensive first. */
  public final List<Instruction> instructions;

  private Profile(String method, int runs, double totalSeconds, double otherSeconds, List<Instruction> instructions) {
    this.method = method;
    this.runs = runs;
    this.totalSeconds = totalSeconds;
    this.otherSeconds = otherSeconds;
    this.instructions = Collections.unmodifiableList(instructions);
  }

  /** The share of the method's time that {@code seconds} is (0 to 1). */
  public double share(double seconds) {
    return totalSeconds > 0 ? seconds / totalSeconds : 0;
  }

  /** The {@code top} most expensive instructions, one line each: share, ms a run, op, source, module. */
  public String format(int top) {
    StringBuilder text = new StringBuilder(String.format(Locale.ROOT, "%s: %d runs, %.3f ms a run%n", method, runs,
        totalSeconds * 1e3 / runs));
    for (Instruction row : instructions.subList(0, Math.min(top, instructions.size()))) {
      text.append(String.format(Locale.ROOT, "%5.1f%%  %8.3f ms  %s #%d  %s  %s%n", 100 * share(row.seconds),
          row.seconds * 1e3 / runs, row.op, row.index, row.location.isEmpty() ? "(no debug table)" : row.location,
          row.moduleHierarchy));
    }
    return text.toString();
  }

  @Override
  public String toString() {
    return format(10);
  }

  // Called by the JNI bridge: per row, five strings (method, op, node, location, module
  // hierarchy), two longs (index, calls) and the seconds.
  static Profile fromNative(String method, int runs, double totalSeconds, double otherSeconds, String[] texts,
      long[] numbers, double[] seconds) {
    List<Instruction> rows = new ArrayList<>(seconds.length);
    for (int i = 0; i < seconds.length; i++) {
      rows.add(new Instruction(texts[5 * i], numbers[2 * i], texts[5 * i + 1], texts[5 * i + 2], texts[5 * i + 3],
          texts[5 * i + 4], seconds[i], numbers[2 * i + 1]));
    }
    return new Profile(method, runs, totalSeconds, otherSeconds, rows);
  }
}
