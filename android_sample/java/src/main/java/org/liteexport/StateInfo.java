package org.liteexport;

import java.util.Arrays;

/**
 * One tensor a loaded {@link Module} keeps across calls (program state: a KV cache), as {@link
 * Module#states()} lists it: its name, dtype, shape and size in bytes.
 */
public final class StateInfo {
  private final String name;
  private final DType dtype;
  private final long[] shape;
  private final long bytes;

  StateInfo(String name, DType dtype, long[] shape, long bytes) {
    this.name = name;
    this.dtype = dtype;
    this.shape = shape;
    this.bytes = bytes;
  }

  // From the JNI bridge's text: the dtype's name ("float32"), the shape as "1,8,4" ("" for a scalar).
  static StateInfo parse(String name, String dtype, String shape, String bytes) {
    DType type = null;
    for (DType d : DType.values()) {
      if (d.toString().equals(dtype)) {
        type = d;
      }
    }
    if (type == null) {
      throw new LiteExportException("state " + name + " has dtype " + dtype + ", which Java does not know");
    }
    String[] sizes = shape.isEmpty() ? new String[0] : shape.split(",");
    long[] dims = new long[sizes.length];
    for (int i = 0; i < sizes.length; i++) {
      dims[i] = Long.parseLong(sizes[i]);
    }
    return new StateInfo(name, type, dims, Long.parseLong(bytes));
  }

  /** The state's name, as the exported model's buffer (e.g. {@code key_cache_0}). */
  public String name() {
    return name;
  }

  public DType dtype() {
    return dtype;
  }

  /** Its shape (a copy); empty for a scalar. */
  public long[] shape() {
    return shape.clone();
  }

  /** Its size in bytes. */
  public long bytes() {
    return bytes;
  }

  @Override
  public String toString() {
    return name + " " + dtype + " " + Arrays.toString(shape) + " (" + bytes + " bytes)";
  }
}
