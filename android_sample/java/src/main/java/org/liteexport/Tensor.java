package org.liteexport;

import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.Arrays;

/**
 * A dense, row-major tensor: the inputs and outputs of {@link Module} methods. Shaped after
 * PyTorch Android's {@code org.pytorch.Tensor}.
 *
 * <p>A tensor made from a Java array ({@code fromBlob(float[]/long[]/int[]/byte[]/boolean[],
 * shape)}) is immutable: {@code fromBlob} copies the caller's array and the getters return
 * copies, so it can be shared between threads and reused as input any number of times.
 *
 * <p>A tensor made from a direct buffer ({@code fromBlob(ByteBuffer, shape, dtype)},
 * {@code fromBlob(FloatBuffer, shape)}, ...; see {@link #allocateFloatBuffer}) is a view of the
 * buffer, as in PyTorch Android: nothing is copied when it is made, and a run reads the buffer's
 * contents at the time of the call. Refill the buffer and run again to feed frame after frame
 * without allocating. Its elements are the buffer's from its position to its limit when the
 * tensor is made.
 *
 * <p>Every type can be made and read ({@link DType}). The runtime's methods take and return
 * {@link DType#FLOAT32}, {@link DType#INT64}, {@link DType#INT32} and {@link DType#BOOL} tensors,
 * each input of the type its method declares (token ids are int64, say): an input of another type
 * is refused by {@link Module#runMethod} with an {@link InputException} saying the expected and
 * the given type, never converted. INT8 and UINT8 tensors are refused as inputs naming their type.
 */
public final class Tensor {
  // Read (inputs) and written (outputs, through the private constructor) by liteexport_jni.cpp
  // by name and signature: keep both in sync with it (and with the library's consumer-rules.pro).
  private final float[] data;  // FLOAT32 from an array (and every output); null otherwise
  private final long[] shape;
  private final DType dtype;
  private final Buffer buffer;  // a direct buffer in native byte order (a view); null otherwise
  // The other types from an array: long[] (INT64), int[] (INT32), byte[] (INT8, UINT8, BOOL).
  private final Object values;

  /** Takes ownership of both arrays without copying: for fromBlob (after copying) and JNI. */
  private Tensor(float[] data, long[] shape) {
    this(DType.FLOAT32, shape, data, null, null);
  }

  private Tensor(DType dtype, long[] shape, float[] data, Object values, Buffer buffer) {
    this.dtype = dtype;
    this.shape = shape;
    this.data = data;
    this.values = values;
    this.buffer = buffer;
  }

  /**
   * An output of another type than float32, made by liteexport_jni.cpp (tensors.cpp): {@code values}
   * is a long[] (INT64), int[] (INT32) or byte[] (BOOL, 0 or 1), taken without copying.
   */
  private static Tensor ofValues(long[] shape, Object values) {
    DType dtype = values instanceof long[] ? DType.INT64 : values instanceof int[] ? DType.INT32 : DType.BOOL;
    return new Tensor(dtype, shape, null, values, null);
  }

  /**
   * A float32 tensor of the given shape holding a copy of {@code data} (row-major).
   *
   * @throws IllegalArgumentException if a dimension is negative or {@code data.length} is not
   *     the product of the dimensions
   */
  public static Tensor fromBlob(float[] data, long[] shape) {
    if (data == null || shape == null) {
      throw new NullPointerException("Tensor.fromBlob: data and shape must not be null");
    }
    checkLength(data.length, shape);
    return new Tensor(data.clone(), shape.clone());
  }

  /** An int64 tensor holding a copy of {@code data}; the same checks as {@link #fromBlob(float[], long[])}. */
  public static Tensor fromBlob(long[] data, long[] shape) {
    checkArray(data, data == null ? 0 : data.length, shape);
    return new Tensor(DType.INT64, shape.clone(), null, data.clone(), null);
  }

  /** An int32 tensor holding a copy of {@code data}. */
  public static Tensor fromBlob(int[] data, long[] shape) {
    checkArray(data, data == null ? 0 : data.length, shape);
    return new Tensor(DType.INT32, shape.clone(), null, data.clone(), null);
  }

  /** An int8 tensor holding a copy of {@code data} (as PyTorch Android's {@code fromBlob(byte[], shape)}). */
  public static Tensor fromBlob(byte[] data, long[] shape) {
    checkArray(data, data == null ? 0 : data.length, shape);
    return new Tensor(DType.INT8, shape.clone(), null, data.clone(), null);
  }

  /** A uint8 tensor holding a copy of {@code data}, each byte read as 0..255. */
  public static Tensor fromBlobUnsigned(byte[] data, long[] shape) {
    checkArray(data, data == null ? 0 : data.length, shape);
    return new Tensor(DType.UINT8, shape.clone(), null, data.clone(), null);
  }

  /** A bool tensor holding {@code data} (stored one byte per element, 0 or 1, as torch does). */
  public static Tensor fromBlob(boolean[] data, long[] shape) {
    checkArray(data, data == null ? 0 : data.length, shape);
    byte[] bytes = new byte[data.length];
    for (int i = 0; i < data.length; i++) {
      bytes[i] = data[i] ? (byte) 1 : (byte) 0;
    }
    return new Tensor(DType.BOOL, shape.clone(), null, bytes, null);
  }

  /**
   * A tensor of type {@code dtype} viewing the direct buffer {@code data}, from its position to
   * its limit (see the class comment: not copied; runs read its contents at the time of the
   * call). Its byte order must be the platform's ({@code ByteOrder.nativeOrder()}, as
   * {@link #allocateByteBuffer} sets it) when elements are wider than a byte.
   *
   * @throws IllegalArgumentException if the buffer is not direct, is in the other byte order, or
   *     does not hold exactly the shape's elements
   */
  public static Tensor fromBlob(ByteBuffer data, long[] shape, DType dtype) {
    if (data == null || shape == null || dtype == null) {
      throw new NullPointerException("Tensor.fromBlob: data, shape and dtype must not be null");
    }
    checkDirect(data);
    if (dtype.byteSize() > 1 && data.order() != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException("Tensor.fromBlob: a " + dtype + " buffer must be in the native byte order ("
          + ByteOrder.nativeOrder() + "), got " + data.order() + "; call buffer.order(ByteOrder.nativeOrder()) first");
    }
    long count = numel(shape);
    if (data.remaining() % dtype.byteSize() != 0 || data.remaining() / dtype.byteSize() != count) {
      throw new IllegalArgumentException("Tensor.fromBlob: shape " + Arrays.toString(shape) + " holds " + count + " "
          + dtype + " elements (" + count * dtype.byteSize() + " bytes), but the buffer has " + data.remaining()
          + " bytes remaining");
    }
    // slice(): the view starts at the position (the JNI bridge reads from the buffer's address);
    // it is big-endian whatever the original was, so the order is set again
    return new Tensor(dtype, shape.clone(), null, null, data.slice().order(ByteOrder.nativeOrder()));
  }

  /** A float32 tensor viewing the direct buffer {@code data} (from {@link #allocateFloatBuffer}, say). */
  public static Tensor fromBlob(FloatBuffer data, long[] shape) {
    checkBuffer(data, shape, DType.FLOAT32);
    return new Tensor(DType.FLOAT32, shape.clone(), null, null, data.slice());
  }

  /** An int64 tensor viewing the direct buffer {@code data}. */
  public static Tensor fromBlob(LongBuffer data, long[] shape) {
    checkBuffer(data, shape, DType.INT64);
    return new Tensor(DType.INT64, shape.clone(), null, null, data.slice());
  }

  /** An int32 tensor viewing the direct buffer {@code data}. */
  public static Tensor fromBlob(IntBuffer data, long[] shape) {
    checkBuffer(data, shape, DType.INT32);
    return new Tensor(DType.INT32, shape.clone(), null, null, data.slice());
  }

  /** A direct buffer of {@code numElements} floats in the native byte order, for {@link #fromBlob(FloatBuffer, long[])}. */
  public static FloatBuffer allocateFloatBuffer(int numElements) {
    return allocateByteBuffer(checkedBytes(numElements, 4)).asFloatBuffer();
  }

  /** A direct buffer of {@code numElements} longs in the native byte order. */
  public static LongBuffer allocateLongBuffer(int numElements) {
    return allocateByteBuffer(checkedBytes(numElements, 8)).asLongBuffer();
  }

  /** A direct buffer of {@code numElements} ints in the native byte order. */
  public static IntBuffer allocateIntBuffer(int numElements) {
    return allocateByteBuffer(checkedBytes(numElements, 4)).asIntBuffer();
  }

  /** A direct buffer of {@code numBytes} bytes in the native byte order, for {@link #fromBlob(ByteBuffer, long[], DType)}. */
  public static ByteBuffer allocateByteBuffer(int numBytes) {
    if (numBytes < 0) {
      throw new IllegalArgumentException("a buffer of " + numBytes + " bytes");
    }
    return ByteBuffer.allocateDirect(numBytes).order(ByteOrder.nativeOrder());
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

  /** The element type. */
  public DType dtype() {
    return dtype;
  }

  /**
   * A copy of the elements, row-major.
   *
   * @throws IllegalStateException if the tensor is not float32
   */
  public float[] getDataAsFloatArray() {
    requireType("getDataAsFloatArray", DType.FLOAT32);
    if (data != null) {
      return data.clone();
    }
    float[] out = new float[elementCount()];
    floatView().get(out);
    return out;
  }

  /** A copy of the elements of an int64 tensor; {@link IllegalStateException} for another type. */
  public long[] getDataAsLongArray() {
    requireType("getDataAsLongArray", DType.INT64);
    if (values != null) {
      return ((long[]) values).clone();
    }
    long[] out = new long[elementCount()];
    LongBuffer view = buffer instanceof LongBuffer ? ((LongBuffer) buffer).duplicate() : nativeBytes().asLongBuffer();
    view.get(out);
    return out;
  }

  /** A copy of the elements of an int32 tensor; {@link IllegalStateException} for another type. */
  public int[] getDataAsIntArray() {
    requireType("getDataAsIntArray", DType.INT32);
    if (values != null) {
      return ((int[]) values).clone();
    }
    int[] out = new int[elementCount()];
    IntBuffer view = buffer instanceof IntBuffer ? ((IntBuffer) buffer).duplicate() : nativeBytes().asIntBuffer();
    view.get(out);
    return out;
  }

  /**
   * A copy of the bytes of an int8, uint8 (read them with {@code b & 0xFF}) or bool (0 or 1)
   * tensor; {@link IllegalStateException} for another type.
   */
  public byte[] getDataAsByteArray() {
    requireType("getDataAsByteArray", DType.INT8, DType.UINT8, DType.BOOL);
    if (values != null) {
      return ((byte[]) values).clone();
    }
    byte[] out = new byte[elementCount()];
    nativeBytes().get(out);
    return out;
  }

  /** The elements of a bool tensor (a nonzero byte is true); {@link IllegalStateException} for another type. */
  public boolean[] getDataAsBooleanArray() {
    requireType("getDataAsBooleanArray", DType.BOOL);
    byte[] bytes = getDataAsByteArray();
    boolean[] out = new boolean[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      out[i] = bytes[i] != 0;
    }
    return out;
  }

  /** A copy of the shape. */
  public long[] shape() {
    return shape.clone();
  }

  /** The number of elements. */
  public long numel() {
    return numel(shape);
  }

  @Override
  public String toString() {
    return "Tensor(shape=" + Arrays.toString(shape) + ", dtype=" + dtype + ")";
  }

  // ---- helpers ------------------------------------------------------------------------------

  private static void checkArray(Object data, int length, long[] shape) {
    if (data == null || shape == null) {
      throw new NullPointerException("Tensor.fromBlob: data and shape must not be null");
    }
    checkLength(length, shape);
  }

  private static void checkLength(int length, long[] shape) {
    long count = numel(shape);
    if (count != length) {
      throw new IllegalArgumentException("Tensor.fromBlob: shape " + Arrays.toString(shape) + " holds "
          + count + " elements, but data has " + length);
    }
  }

  private static void checkDirect(Buffer data) {
    if (!data.isDirect()) {
      throw new IllegalArgumentException("Tensor.fromBlob: the buffer must be direct (Tensor.allocate*Buffer, "
          + "ByteBuffer.allocateDirect); for a Java array use fromBlob(array, shape)");
    }
  }

  private static void checkBuffer(Buffer data, long[] shape, DType dtype) {
    if (data == null || shape == null) {
      throw new NullPointerException("Tensor.fromBlob: data and shape must not be null");
    }
    checkDirect(data);
    ByteOrder order = data instanceof FloatBuffer ? ((FloatBuffer) data).order()
        : data instanceof LongBuffer ? ((LongBuffer) data).order() : ((IntBuffer) data).order();
    if (order != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException("Tensor.fromBlob: a " + dtype + " buffer must be in the native byte order ("
          + ByteOrder.nativeOrder() + "), got " + order + "; make it with Tensor.allocate*Buffer");
    }
    long count = numel(shape);
    if (data.remaining() != count) {
      throw new IllegalArgumentException("Tensor.fromBlob: shape " + Arrays.toString(shape) + " holds " + count
          + " elements, but the buffer has " + data.remaining() + " remaining");
    }
  }

  private static int checkedBytes(int numElements, int size) {
    if (numElements < 0 || numElements > Integer.MAX_VALUE / size) {
      throw new IllegalArgumentException("a buffer of " + numElements + " elements of " + size + " bytes");
    }
    return numElements * size;
  }

  private void requireType(String getter, DType... accepted) {
    for (DType t : accepted) {
      if (dtype == t) {
        return;
      }
    }
    throw new IllegalStateException(getter + ": the tensor is " + dtype + ", not " + (accepted.length == 1
        ? accepted[0].toString() : Arrays.toString(accepted)));
  }

  private int elementCount() {
    long count = numel(shape);
    if (count > Integer.MAX_VALUE) {
      throw new IllegalStateException("a tensor of " + count + " elements does not fit a Java array");
    }
    return (int) count;
  }

  /** The buffer (a ByteBuffer) from its start, in native order: duplicate() resets the order. */
  private ByteBuffer nativeBytes() {
    return ((ByteBuffer) buffer).duplicate().order(ByteOrder.nativeOrder());
  }

  private FloatBuffer floatView() {
    return buffer instanceof FloatBuffer ? ((FloatBuffer) buffer).duplicate() : nativeBytes().asFloatBuffer();
  }
}
