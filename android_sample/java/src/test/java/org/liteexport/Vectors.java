package org.liteexport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the test vectors written by android_sample/scripts/make_host_test_vectors.py:
 * manifest.tsv (see the script for its records) and little-endian tensor files (.f32, .i64, .i32,
 * .b8: float32, int64, int32, bool).
 */
final class Vectors {
  /** One manifest line, split on tabs. */
  static final class Record {
    final String kind;
    final String[] fields;  // after the kind

    Record(String kind, String[] fields) {
      this.kind = kind;
      this.fields = fields;
    }

    String field(int i) {
      return i < fields.length ? fields[i] : "";
    }
  }

  final Path dir;
  final List<Record> records = new ArrayList<>();

  Vectors(Path dir) throws IOException {
    this.dir = dir;
    for (String line : Files.readAllLines(dir.resolve("manifest.tsv"), StandardCharsets.UTF_8)) {
      if (line.isEmpty()) {
        continue;
      }
      String[] parts = line.split("\t", -1);
      String[] fields = new String[parts.length - 1];
      System.arraycopy(parts, 1, fields, 0, fields.length);
      records.add(new Record(parts[0], fields));
    }
  }

  List<Record> ofKind(String kind) {
    List<Record> result = new ArrayList<>();
    for (Record r : records) {
      if (r.kind.equals(kind)) {
        result.add(r);
      }
    }
    return result;
  }

  Path path(String name) {
    return dir.resolve(name);
  }

  String text(String name) throws IOException {
    return new String(Files.readAllBytes(path(name)), StandardCharsets.UTF_8);
  }

  /**
   * Tensors of a field like "[2,3]:t00001.f32 [4]:t00002.i64" (empty: no tensors); "none" is a
   * None element of a returned tuple, read as null.
   */
  Tensor[] tensors(String field) throws IOException {
    if (field.isEmpty()) {
      return new Tensor[0];
    }
    String[] items = field.split(" ");
    Tensor[] result = new Tensor[items.length];
    for (int i = 0; i < items.length; i++) {
      if (items[i].equals("none")) {
        continue;
      }
      int colon = items[i].indexOf("]:");
      String dims = items[i].substring(1, colon);
      String[] parts = dims.isEmpty() ? new String[0] : dims.split(",");
      long[] shape = new long[parts.length];
      for (int d = 0; d < parts.length; d++) {
        shape[d] = Long.parseLong(parts[d]);
      }
      String file = items[i].substring(colon + 2);
      result[i] = tensor(Files.readAllBytes(path(file)), file.substring(file.lastIndexOf('.') + 1), shape);
    }
    return result;
  }

  /** A tensor of the raw little-endian values of a file whose suffix names the dtype. */
  private static Tensor tensor(byte[] bytes, String suffix, long[] shape) {
    ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    switch (suffix) {
      case "i64": {
        long[] data = new long[bytes.length / 8];
        buffer.asLongBuffer().get(data);
        return Tensor.fromBlob(data, shape);
      }
      case "i32": {
        int[] data = new int[bytes.length / 4];
        buffer.asIntBuffer().get(data);
        return Tensor.fromBlob(data, shape);
      }
      case "b8": {
        boolean[] data = new boolean[bytes.length];
        for (int k = 0; k < bytes.length; k++) {
          data[k] = bytes[k] != 0;
        }
        return Tensor.fromBlob(data, shape);
      }
      case "f32": {
        float[] data = new float[bytes.length / 4];
        buffer.asFloatBuffer().get(data);
        return Tensor.fromBlob(data, shape);
      }
      default:
        throw new IllegalArgumentException("tensor file of unknown type ." + suffix);
    }
  }
}
