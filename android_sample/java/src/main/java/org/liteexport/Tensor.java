package org.liteexport;

import java.util.Arrays;

/**
 * A dense, row-major float32 tensor: the inputs and outputs of {@link Module} methods.
 *
 * <p>Immutable: {@link #fromBlob} copies the caller's arrays and the getters return copies, so
 * a tensor can be shared between threads and reused as input any number of times.
 */
public final class Tensor {
  // Read (inputs) and written (outputs, through the private constructor) by liteexport_jni.cpp
  // by name and signature: keep both in sync with it (and with the app's proguard rules).
  private final float[] data;
  private final long[] shape;

  /** Takes ownership of both arrays without copying: for fromBlob (after copying) and JNI. */
  private Tensor(float[] data, long[] shape) {
    this.data = data;
    this.shape = shape;
  }

  /**
   * A tensor of the given shape holding a copy of {@code data} (row-major).
   *
   * @throws IllegalArgumentException if a dimension is negative or {@code data.length} is not
   *     the product of the dimensions
   */
  public static Tensor fromBlob(float[] data, long[] shape) {
    if (data == null || shape == null) {
      throw new NullPointerException("Tensor.fromBlob: data and shape must not be null");
    }
    long count = numel(shape);
    if (count != data.length) {
      throw new IllegalArgumentException("Tensor.fromBlob: shape " + Arrays.toString(shape) + " holds "
          + count + " elements, but data has " + data.length);
    }
    return new Tensor(data.clone(), shape.clone());
  }

  /**
   * The number of elements of a tensor of this shape (1 for the scalar shape {@code []}).
   *
   * @throws IllegalArgumentException if a dimension is negative or the product overflows
   */
  public static long numel(long[] shape) {
    long count = 1;
    for (long dim : shape) {
      if (dim < 0) {
        throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(shape));
      }
      try {
        count = Math.multiplyExact(count, dim);
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " has too many elements");
      }
    }
    return count;
  }

  /** A copy of the elements, row-major. */
  public float[] getDataAsFloatArray() {
    return data.clone();
  }

  /** A copy of the shape. */
  public long[] shape() {
    return shape.clone();
  }

  /** The number of elements. */
  public long numel() {
    return data.length;
  }

  @Override
  public String toString() {
    return "Tensor(shape=" + Arrays.toString(shape) + ", dtype=float32)";
  }
}
