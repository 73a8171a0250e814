package org.liteexport;

/**
 * The element type of a {@link Tensor}, named as PyTorch Android's {@code org.pytorch.DType} names
 * them (plus {@link #BOOL}, which torch models take as masks).
 *
 * <p>The native runtime holds {@link #FLOAT32}, {@link #INT64}, {@link #INT32} and {@link #BOOL}
 * values (typed programs: issue 20): a method's inputs must have the types it declares and its
 * outputs have the types the model computes. An input of another type (or an {@link #INT8} or
 * {@link #UINT8} one) is refused by {@link Module#runMethod} with an {@link InputException}, never
 * converted.
 */
public enum DType {
  /** 8-bit unsigned integers ({@code torch.uint8}): {@code Tensor.fromBlobUnsigned(byte[], shape)}. */
  UINT8(1, 1, "uint8"),
  /** 8-bit signed integers ({@code torch.int8}): {@code Tensor.fromBlob(byte[], shape)}. */
  INT8(2, 1, "int8"),
  /** 32-bit signed integers ({@code torch.int32}). */
  INT32(3, 4, "int32"),
  /** 32-bit floats ({@code torch.float32}): what models compute in. */
  FLOAT32(4, 4, "float32"),
  /** 64-bit signed integers ({@code torch.int64}, {@code torch.long}): token ids, indices. */
  INT64(5, 8, "int64"),
  /** Booleans ({@code torch.bool}), one byte each (0 or 1). */
  BOOL(11, 1, "bool");

  /**
   * PyTorch Android's code for the type (its {@code DType.jniCode}; BOOL has c10's ScalarType
   * number). liteexport_jni.cpp reads this field by name: keep it in sync.
   */
  final int code;

  private final int byteSize;
  private final String torchName;

  DType(int code, int byteSize, String torchName) {
    this.code = code;
    this.byteSize = byteSize;
    this.torchName = torchName;
  }

  /** Bytes per element. */
  public int byteSize() {
    return byteSize;
  }

  /** torch's name of the type, e.g. {@code "int64"}. */
  @Override
  public String toString() {
    return torchName;
  }
}
