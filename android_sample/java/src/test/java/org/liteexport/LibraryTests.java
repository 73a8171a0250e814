package org.liteexport;

import static org.liteexport.TestRunner.check;
import static org.liteexport.TestRunner.expectThrows;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Host tests of what the Android library adds to the API: loading from a descriptor range (an
 * APK asset) and from memory, typed and buffer-backed tensors (and their refusal as inputs), the
 * bundle's extra files, and the image normalization behind TensorImageUtils. Registered by
 * {@link HostTests}; the Android-only classes (AndroidModules, TensorImageUtils) cannot run here.
 */
final class LibraryTests {
  private final Vectors vectors;

  LibraryTests(Vectors vectors) {
    this.vectors = vectors;
  }

  void register(TestRunner runner) {
    runner.add("library: load from a descriptor range, mapped (16-byte aligned offset)", () -> loadFromFd(4096 + 48));
    runner.add("library: load from a descriptor range, read (offset 4 mod 16, as an APK may place it)",
        () -> loadFromFd(4100));
    runner.add("library: a descriptor range outside the file or not a bundle", this::badFdRanges);
    runner.add("library: load from a direct, sliced and heap ByteBuffer", this::loadFromBuffer);
    runner.add("library: extra files of a bundle exported with --extra-file", this::extraFiles);
    runner.add("library: no extra files, closed module", this::noExtraFiles);
    runner.add("library: profile names every instruction with its source line", this::profile);
    runner.add("library: a method returning a dict of tensors, as a Map", this::dictOutputs);
    runner.add("library: typed tensors from arrays", LibraryTests::typedArrays);
    runner.add("library: tensors viewing direct buffers", LibraryTests::bufferTensors);
    runner.add("library: buffer tensors are refused when not direct, misordered or mis-sized",
        LibraryTests::bufferRefusals);
    runner.add("library: float32 buffer inputs run as float[] inputs do", this::bufferInputsRun);
    runner.add("library: inputs of another type are refused saying expected vs got", this::typedInputsRefused);
    runner.add("library: int64 and bool inputs, float32/int64/int32/bool outputs", this::typedInputsRun);
    runner.add("library: image normalization (hand-computed)", LibraryTests::imageNormalization);
    runner.add("library: image normalization refusals", LibraryTests::imageNormalizationRefusals);
  }

  // ---- helpers ------------------------------------------------------------------------------

  private Path bundle(String id) {
    for (Vectors.Record r : vectors.ofKind("bundle")) {
      if (r.field(0).equals(id)) {
        return vectors.path(r.field(1));
      }
    }
    throw new AssertionError("no bundle " + id + " in the manifest");
  }

  private static Tensor sampleInput() {
    float[] values = new float[3 * 32 * 32];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) Math.sin(i * 0.37);
    }
    return Tensor.fromBlob(values, new long[] {1, 3, 32, 32});
  }

  private static float[] run(Module module, Tensor input) {
    Tensor[] out = module.forward(input);
    check(out.length == 1 && out[0] != null, out.length + " outputs");
    return out[0].getDataAsFloatArray();
  }

  /** The outputs of the bundle at {@code path} loaded as a file: what every other load must give. */
  private static float[] runFile(Path path, Tensor input) {
    try (Module module = Module.load(path.toString())) {
      return run(module, input);
    }
  }

  /**
   * The int descriptor of an open stream: Android hands it over as an int
   * (ParcelFileDescriptor.getFd()); a desktop JVM hides it in a private field, opened to the
   * tests by host_tests.sh (--add-opens java.base/java.io=ALL-UNNAMED).
   */
  private static int fdOf(FileInputStream in) throws Exception {
    Field field = FileDescriptor.class.getDeclaredField("fd");
    field.setAccessible(true);
    return field.getInt(in.getFD());
  }

  /** A temporary file: {@code prefix} bytes of 0x5A, the bundle, then 100 bytes of 0x33. */
  private static Path embed(byte[] bundle, int prefix) throws IOException {
    byte[] content = new byte[prefix + bundle.length + 100];
    Arrays.fill(content, (byte) 0x5A);
    System.arraycopy(bundle, 0, content, prefix, bundle.length);
    Arrays.fill(content, prefix + bundle.length, content.length, (byte) 0x33);
    Path file = Files.createTempFile("liteexport-embedded", ".apk");
    Files.write(file, content);
    return file;
  }

  // ---- loading ------------------------------------------------------------------------------

  private void loadFromFd(int prefix) throws Exception {
    Path path = bundle("tiny_cnn_static");
    byte[] bytes = Files.readAllBytes(path);
    Tensor input = sampleInput();
    float[] expected = runFile(path, input);
    Path file = embed(bytes, prefix);
    try {
      for (boolean copy : new boolean[] {false, true}) {
        Module module;
        try (FileInputStream in = new FileInputStream(file.toFile())) {
          module = Module.load(fdOf(in), prefix, bytes.length, new LoadOptions().copy(copy));
        }  // the descriptor is closed here: the module must not need it
        try {
          check(Arrays.equals(run(module, input), expected), "outputs differ from the file load (copy " + copy + ")");
          check(module.path().contains("offset " + prefix), "path(): " + module.path());
        } finally {
          module.close();
        }
      }
    } finally {
      Files.delete(file);
    }
  }

  private void badFdRanges() throws Exception {
    byte[] bytes = Files.readAllBytes(bundle("tiny_cnn_static"));
    Path file = embed(bytes, 64);
    try (FileInputStream in = new FileInputStream(file.toFile())) {
      int fd = fdOf(in);
      long total = 64 + bytes.length + 100;
      FormatException e = expectThrows(FormatException.class, () -> Module.load(fd, 64, bytes.length + 101, new LoadOptions()));
      check(e.getMessage().contains("lies outside the file of " + total + " bytes"), e.getMessage());
      e = expectThrows(FormatException.class, () -> Module.load(fd, 0, bytes.length, new LoadOptions()));
      check(e.getMessage().contains("not a PTMF bundle"), e.getMessage());
      e = expectThrows(FormatException.class, () -> Module.load(fd, -1, bytes.length, new LoadOptions()));
      check(e.getMessage().contains("offset must be >= 0"), e.getMessage());
      e = expectThrows(FormatException.class, () -> Module.load(-1, 0, bytes.length, new LoadOptions()));
      check(e.getMessage().contains("invalid file descriptor -1"), e.getMessage());
      expectThrows(NullPointerException.class, () -> Module.load(fd, 64, bytes.length, null));
    } finally {
      Files.delete(file);
    }
  }

  private void loadFromBuffer() throws Exception {
    Path path = bundle("tiny_cnn_static");
    byte[] bytes = Files.readAllBytes(path);
    Tensor input = sampleInput();
    float[] expected = runFile(path, input);
    ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length);
    direct.put(bytes).flip();
    ByteBuffer sliced = ByteBuffer.allocateDirect(bytes.length + 7);  // the bundle from position 3
    sliced.position(3);
    sliced.put(bytes).position(3).limit(3 + bytes.length);
    ByteBuffer heap = ByteBuffer.wrap(bytes.clone());
    for (ByteBuffer buffer : new ByteBuffer[] {direct, sliced, heap}) {
      int position = buffer.position();
      try (Module module = Module.load(buffer)) {
        check(buffer.position() == position, "the buffer's position moved");
        // the runtime holds a copy: clearing the caller's buffer changes nothing
        for (int i = buffer.position(); i < buffer.limit(); i++) {
          buffer.put(i, (byte) 0);
        }
        check(Arrays.equals(run(module, input), expected), "outputs differ from the file load");
      }
    }
    ByteBuffer garbage = ByteBuffer.allocateDirect(64);
    expectThrows(FormatException.class, () -> Module.load(garbage));
    expectThrows(NullPointerException.class, () -> Module.load((ByteBuffer) null));
  }

  // ---- dict outputs -------------------------------------------------------------------------

  private void dictOutputs() throws Exception {
    int seen = 0;
    for (Vectors.Record r : vectors.ofKind("dict_keys")) {
      String[] keys = r.field(2).split(",");
      try (Module module = Module.load(bundle(r.field(0)).toString())) {
        check(Arrays.equals(module.outputNames(r.field(1)), keys), "outputNames: " + Arrays.toString(module.outputNames(r.field(1))));
        Tensor input = Tensor.fromBlob(new float[3 * 8 * 8], new long[] {1, 3, 8, 8});
        Tensor[] values = module.runMethod(r.field(1), input);
        java.util.Map<String, Tensor> map = module.runMethodForMap(r.field(1), input);
        check(Arrays.equals(map.keySet().toArray(new String[0]), keys), "map keys in the model's order: " + map.keySet());
        for (int i = 0; i < keys.length; i++) {
          check(Arrays.equals(map.get(keys[i]).getDataAsFloatArray(), values[i].getDataAsFloatArray()),
              keys[i] + ": the map's value is runMethod's output " + i);
        }
        expectThrows(InputException.class, () -> module.outputNames("nope"));
      }
      try (Module plain = Module.load(bundle("tiny_cnn_static").toString())) {
        check(plain.outputNames("forward").length == 0, "a Tensor-returning method has no output names");
        expectThrows(IllegalArgumentException.class,
            () -> plain.runMethodForMap("forward", Tensor.fromBlob(new float[3 * 32 * 32], new long[] {1, 3, 32, 32})));
      }
      seen++;
    }
    check(seen == 1, "dict_keys records: " + seen);
  }

  // ---- profile ------------------------------------------------------------------------------

  private void profile() {
    try (Module module = Module.load(bundle("tiny_cnn_static").toString())) {
      Profile profile = module.profile("forward", 3, 1, sampleInput());
      check(profile.method.equals("forward") && profile.runs == 3, profile.method + " " + profile.runs);
      // the tiny CNN compiles to six instructions: each once per run, most expensive first
      long[] indices = profile.instructions.stream().mapToLong(i -> i.index).sorted().toArray();
      check(Arrays.equals(indices, new long[] {0, 1, 2, 3, 4, 5}), "indices " + Arrays.toString(indices));
      double previous = Double.MAX_VALUE;
      double sum = 0;
      for (Profile.Instruction row : profile.instructions) {
        check(row.calls == 3 && row.seconds > 0 && row.seconds <= previous, row.op + " " + row.calls + " " + row.seconds);
        previous = row.seconds;
        sum += row.seconds;
        if (row.op.equals("CONV2D")) {
          check(row.node.equals("aten::conv2d") && row.location.endsWith("examples/tiny_cnn.py:47")
              && row.moduleHierarchy.startsWith("top(TinyCNN).features(Sequential)."), row.location);
        }
      }
      check(sum <= profile.totalSeconds * 1.02 && profile.otherSeconds >= 0, sum + " of " + profile.totalSeconds);
      String text = profile.format(2);
      check(text.startsWith("forward: 3 runs, ") && text.split("\n").length == 3, text);
      expectThrows(IllegalArgumentException.class, () -> module.profile("forward", 0, 0, sampleInput()));
      expectThrows(InputException.class,
          () -> module.profile("forward", 1, 0, Tensor.fromBlob(new float[4], new long[] {1, 4})));
    }
  }

  // ---- extra files --------------------------------------------------------------------------

  private void extraFiles() throws Exception {
    int seen = 0;
    for (Vectors.Record r : vectors.ofKind("extra_file")) {
      byte[] expected = Files.readAllBytes(vectors.path(r.field(2)));
      try (Module module = Module.load(bundle(r.field(0)).toString())) {
        check(Arrays.equals(module.extraFileNames(), new String[] {r.field(1)}),
            "extraFileNames: " + Arrays.toString(module.extraFileNames()));
        byte[] got = module.extraFile(r.field(1));
        check(got != null && Arrays.equals(got, expected), r.field(1) + ": " + (got == null ? "null"
            : new String(got, StandardCharsets.UTF_8)));
        check(new String(got, StandardCharsets.UTF_8).contains("éléphant"), "UTF-8 text");
        check(module.extraFile("nope.txt") == null, "an absent file is not null");
        // liteexport's own file is in the bundle (the debug table maps errors) but not the user's
        check(new String(Files.readAllBytes(bundle(r.field(0))), StandardCharsets.ISO_8859_1).contains("liteexport/debug_table"),
            "the bundle has no debug table");
        check(module.extraFile("liteexport/debug_table") == null, "liteexport's own file is listed as the user's");
        expectThrows(NullPointerException.class, () -> module.extraFile(null));
      }
      seen++;
    }
    check(seen == 1, seen + " extra_file records in the manifest");
  }

  private void noExtraFiles() {
    Module module = Module.load(bundle("tiny_cnn_static").toString());
    check(module.extraFileNames().length == 0, "extraFileNames: " + Arrays.toString(module.extraFileNames()));
    check(module.extraFile("labels.txt") == null, "labels.txt in a bundle without it");
    module.close();
    expectThrows(IllegalStateException.class, module::extraFileNames);
    expectThrows(IllegalStateException.class, () -> module.extraFile("labels.txt"));
  }

  // ---- typed tensors ------------------------------------------------------------------------

  private static void typedArrays() {
    long[] shape = {2, 2};
    long[] longs = {1, -2, Long.MAX_VALUE, Long.MIN_VALUE};
    Tensor t = Tensor.fromBlob(longs, shape);
    check(t.dtype() == DType.INT64 && Arrays.equals(t.getDataAsLongArray(), longs), "int64");
    longs[0] = 99;  // copied at fromBlob
    check(t.getDataAsLongArray()[0] == 1, "int64 tensor shares the caller's array");
    t.getDataAsLongArray()[1] = 99;  // getters return copies
    check(t.getDataAsLongArray()[1] == -2, "int64 getter returns the tensor's array");
    check(t.toString().equals("Tensor(shape=[2, 2], dtype=int64)"), t.toString());
    expectThrows(IllegalStateException.class, t::getDataAsFloatArray);
    expectThrows(IllegalStateException.class, t::getDataAsIntArray);
    expectThrows(IllegalStateException.class, t::getDataAsByteArray);

    int[] ints = {7, -8, Integer.MIN_VALUE};
    t = Tensor.fromBlob(ints, new long[] {3});
    check(t.dtype() == DType.INT32 && Arrays.equals(t.getDataAsIntArray(), ints) && t.numel() == 3, "int32");
    expectThrows(IllegalStateException.class, t::getDataAsLongArray);

    byte[] bytes = {-1, 0, 127};
    t = Tensor.fromBlob(bytes, new long[] {1, 3});
    check(t.dtype() == DType.INT8 && Arrays.equals(t.getDataAsByteArray(), bytes), "int8");
    t = Tensor.fromBlobUnsigned(bytes, new long[] {3});
    check(t.dtype() == DType.UINT8 && (t.getDataAsByteArray()[0] & 0xFF) == 255, "uint8");
    expectThrows(IllegalStateException.class, t::getDataAsBooleanArray);

    t = Tensor.fromBlob(new boolean[] {true, false, true}, new long[] {3});
    check(t.dtype() == DType.BOOL && Arrays.equals(t.getDataAsBooleanArray(), new boolean[] {true, false, true}), "bool");
    check(Arrays.equals(t.getDataAsByteArray(), new byte[] {1, 0, 1}), "bool as bytes");

    check(Tensor.fromBlob(new float[] {1}, new long[0]).dtype() == DType.FLOAT32, "float32");
    check(DType.INT64.byteSize() == 8 && DType.BOOL.byteSize() == 1 && DType.INT32.byteSize() == 4, "byte sizes");

    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new long[3], new long[] {2, 2}));
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new int[3], new long[] {-3}));
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new byte[1], new long[] {2}));
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlobUnsigned(new byte[1], new long[] {2}));
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new boolean[1], new long[] {2}));
    expectThrows(NullPointerException.class, () -> Tensor.fromBlob((long[]) null, new long[] {1}));
    expectThrows(NullPointerException.class, () -> Tensor.fromBlob(new int[1], null));
  }

  private static void bufferTensors() {
    FloatBuffer floats = Tensor.allocateFloatBuffer(4);
    check(floats.isDirect() && floats.order() == ByteOrder.nativeOrder() && floats.capacity() == 4, "allocateFloatBuffer");
    floats.put(new float[] {1, 2, 3, 4}).rewind();
    Tensor t = Tensor.fromBlob(floats, new long[] {2, 2});
    check(t.dtype() == DType.FLOAT32 && Arrays.equals(t.getDataAsFloatArray(), new float[] {1, 2, 3, 4}), "FloatBuffer");
    floats.put(0, 10);  // a view: the buffer's later contents are the tensor's
    check(t.getDataAsFloatArray()[0] == 10, "FloatBuffer tensor is not a view");
    check(floats.position() == 0, "reading moved the buffer");

    LongBuffer longs = Tensor.allocateLongBuffer(3);
    longs.put(new long[] {5, 6, 7}).rewind();
    t = Tensor.fromBlob(longs, new long[] {3});
    check(t.dtype() == DType.INT64 && Arrays.equals(t.getDataAsLongArray(), new long[] {5, 6, 7}), "LongBuffer");
    IntBuffer ints = Tensor.allocateIntBuffer(2);
    ints.put(new int[] {8, 9}).rewind();
    t = Tensor.fromBlob(ints, new long[] {2});
    check(t.dtype() == DType.INT32 && Arrays.equals(t.getDataAsIntArray(), new int[] {8, 9}), "IntBuffer");

    // a ByteBuffer with every type, from its position
    ByteBuffer raw = Tensor.allocateByteBuffer(8 + 2 * 8);
    raw.position(8);
    raw.putLong(-3).putLong(4).position(8);
    t = Tensor.fromBlob(raw, new long[] {2}, DType.INT64);
    check(Arrays.equals(t.getDataAsLongArray(), new long[] {-3, 4}), "ByteBuffer int64 from position 8: "
        + Arrays.toString(t.getDataAsLongArray()));
    raw.clear();
    raw.putFloat(0, 1.5f).putFloat(4, -2f);
    raw.limit(8);
    t = Tensor.fromBlob(raw, new long[] {2}, DType.FLOAT32);
    check(Arrays.equals(t.getDataAsFloatArray(), new float[] {1.5f, -2f}), "ByteBuffer float32");
    raw.clear();
    raw.putInt(0, 42);
    raw.limit(4);
    check(Tensor.fromBlob(raw, new long[] {1}, DType.INT32).getDataAsIntArray()[0] == 42, "ByteBuffer int32");
    raw.clear();
    raw.put(0, (byte) 200).put(1, (byte) 0).limit(2);
    check((Tensor.fromBlob(raw, new long[] {2}, DType.UINT8).getDataAsByteArray()[0] & 0xFF) == 200, "ByteBuffer uint8");
    check(Arrays.equals(Tensor.fromBlob(raw, new long[] {2}, DType.BOOL).getDataAsBooleanArray(), new boolean[] {true, false}),
        "ByteBuffer bool");
    check(Tensor.fromBlob(raw, new long[] {2}, DType.INT8).getDataAsByteArray()[0] == (byte) 200, "ByteBuffer int8");
    // one-byte types need no byte order
    ByteBuffer bigEndian = ByteBuffer.allocateDirect(2).order(ByteOrder.BIG_ENDIAN);
    check(Tensor.fromBlob(bigEndian, new long[] {2}, DType.UINT8).numel() == 2, "uint8 in either order");
    check(Tensor.allocateByteBuffer(3).order() == ByteOrder.nativeOrder(), "allocateByteBuffer order");
  }

  private static void bufferRefusals() {
    IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
        () -> Tensor.fromBlob(FloatBuffer.wrap(new float[4]), new long[] {4}));
    check(e.getMessage().contains("must be direct"), e.getMessage());
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(ByteBuffer.allocate(16), new long[] {4}, DType.FLOAT32));
    ByteOrder other = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
    e = expectThrows(IllegalArgumentException.class,
        () -> Tensor.fromBlob(ByteBuffer.allocateDirect(16).order(other), new long[] {4}, DType.FLOAT32));
    check(e.getMessage().contains("native byte order"), e.getMessage());
    e = expectThrows(IllegalArgumentException.class,
        () -> Tensor.fromBlob(ByteBuffer.allocateDirect(16).order(other).asFloatBuffer(), new long[] {4}));
    check(e.getMessage().contains("native byte order"), e.getMessage());
    e = expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(Tensor.allocateByteBuffer(15), new long[] {4}, DType.FLOAT32));
    check(e.getMessage().contains("15 bytes remaining"), e.getMessage());
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(Tensor.allocateFloatBuffer(5), new long[] {4}));
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(Tensor.allocateLongBuffer(3), new long[] {4}));
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(Tensor.allocateIntBuffer(3), new long[] {4}));
    expectThrows(IllegalArgumentException.class, () -> Tensor.allocateFloatBuffer(-1));
    expectThrows(IllegalArgumentException.class, () -> Tensor.allocateLongBuffer(Integer.MAX_VALUE));
    expectThrows(NullPointerException.class, () -> Tensor.fromBlob(Tensor.allocateByteBuffer(4), new long[] {1}, null));
  }

  private void bufferInputsRun() throws Exception {
    Tensor input = sampleInput();
    float[] values = input.getDataAsFloatArray();
    FloatBuffer floats = Tensor.allocateFloatBuffer(values.length);
    floats.put(values).rewind();
    ByteBuffer bytes = Tensor.allocateByteBuffer(4 * values.length + 12);
    bytes.position(12);
    bytes.asFloatBuffer().put(values);  // after position 12: the tensor must start there
    try (Module module = Module.load(bundle("tiny_cnn_static").toString())) {
      float[] expected = run(module, input);
      check(Arrays.equals(run(module, Tensor.fromBlob(floats, input.shape())), expected), "FloatBuffer input");
      check(Arrays.equals(run(module, Tensor.fromBlob(bytes, input.shape(), DType.FLOAT32)), expected), "ByteBuffer input");
      // a view: refilling the buffer changes the next run's input
      Tensor view = Tensor.fromBlob(floats, input.shape());
      floats.put(0, values[0] + 1);
      check(!Arrays.equals(run(module, view), expected), "a refilled buffer gave the old input's outputs");
    }
  }

  private void typedInputsRefused() {
    long[] shape = {1, 3, 32, 32};
    int n = 3 * 32 * 32;
    // types the core holds: the program's input check refuses them, saying expected vs got
    Tensor[] held = {
      Tensor.fromBlob(new long[n], shape), Tensor.fromBlob(new int[n], shape), Tensor.fromBlob(new boolean[n], shape),
      Tensor.fromBlob(Tensor.allocateLongBuffer(n), shape),
    };
    // types it does not: refused by the bridge, naming the type
    Tensor[] other = {Tensor.fromBlob(new byte[n], shape), Tensor.fromBlobUnsigned(new byte[n], shape)};
    try (Module module = Module.load(bundle("tiny_cnn_static").toString())) {
      for (Tensor t : held) {
        InputException e = expectThrows(InputException.class, () -> module.forward(t));
        String expected = "input 0: expected float32 of shape (1, 3, 32, 32), got " + t.dtype() + " of shape (1, 3, 32, 32)";
        check(e.getMessage().contains(expected), e.getMessage());
      }
      for (Tensor t : other) {
        InputException e = expectThrows(InputException.class, () -> module.forward(t));
        check(e.getMessage().equals("input 0 has dtype " + t.dtype()
            + "; the native runtime takes float32, int64, int32 and bool inputs"), e.getMessage());
      }
      check(run(module, sampleInput()).length == 10, "the module is usable after a refusal");
    }
  }

  private void typedInputsRun() {
    long[] shape = {3};
    try (Module module = Module.load(bundle("typed_io").toString())) {
      Tensor[] arrays = module.forward(Tensor.fromBlob(new long[] {1, 7, 9}, shape),
          Tensor.fromBlob(new boolean[] {true, false, true}, shape));
      check(arrays.length == 4 && arrays[0].dtype() == DType.FLOAT32 && arrays[1].dtype() == DType.INT64
          && arrays[2].dtype() == DType.INT32 && arrays[3].dtype() == DType.BOOL, Arrays.toString(arrays));
      // by hand: positions = cumsum([1, 0, 1]) + [0, 1, 2]; ids > 4 and the mask
      check(Arrays.equals(arrays[1].getDataAsLongArray(), new long[] {1, 2, 4}), Arrays.toString(arrays[1].getDataAsLongArray()));
      check(Arrays.equals(arrays[2].getDataAsIntArray(), new int[] {2, 4, 8}), Arrays.toString(arrays[2].getDataAsIntArray()));
      check(Arrays.equals(arrays[3].getDataAsBooleanArray(), new boolean[] {false, false, true}), "ids > 4 & mask");
      // the same from direct buffers: a LongBuffer and a bool ByteBuffer
      LongBuffer ids = Tensor.allocateLongBuffer(3);
      ids.put(new long[] {1, 7, 9});
      ids.rewind();
      ByteBuffer mask = Tensor.allocateByteBuffer(3);
      mask.put(new byte[] {1, 0, 1});
      mask.rewind();
      Tensor[] buffers = module.forward(Tensor.fromBlob(ids, shape), Tensor.fromBlob(mask, shape, DType.BOOL));
      for (int i = 0; i < 4; i++) {
        check(buffers[i].toString().equals(arrays[i].toString()), "output " + i + ": " + buffers[i]);
      }
      check(Arrays.equals(buffers[0].getDataAsFloatArray(), arrays[0].getDataAsFloatArray())
          && Arrays.equals(buffers[1].getDataAsLongArray(), arrays[1].getDataAsLongArray()), "buffer inputs run as arrays do");
      InputException e = expectThrows(InputException.class,
          () -> module.forward(Tensor.fromBlob(new int[] {1, 7, 9}, shape), Tensor.fromBlob(new boolean[3], shape)));
      check(e.getMessage().contains("input 0: expected int64 of shape (3,), got int32 of shape (3,)"), e.getMessage());
    }
  }

  // ---- image normalization ------------------------------------------------------------------

  private static void imageNormalization() {
    // 2x1 image: pixel 0 = ARGB(255, 255, 0, 51), pixel 1 = ARGB(0, 0, 255, 102)
    int[] pixels = {0xFFFF0033, 0x0000FF66};
    float[] mean = {0.5f, 0.25f, 0.0f};
    float[] std = {0.5f, 0.25f, 2.0f};
    float[] got = ImageNormalization.fromArgb(pixels, 2, 1, mean, std);
    // by hand: R (1 - .5)/.5 = 1, (0 - .5)/.5 = -1; G (0 - .25)/.25 = -1, (1 - .25)/.25 = 3;
    // B (0.2 - 0)/2 = 0.1, (0.4 - 0)/2 = 0.2
    float[] expected = {1f, -1f, -1f, 3f, 0.1f, 0.2f};
    check(got.length == 6, got.length + " values");
    for (int i = 0; i < expected.length; i++) {
      check(Math.abs(got[i] - expected[i]) <= 1e-6f, "value " + i + ": " + got[i] + ", by hand " + expected[i]);
    }
    // NCHW order on a 2x2 image: the red plane first, row by row
    int[] square = {0x00010000, 0x00020000, 0x00030000, 0x00040000};
    float[] plane = ImageNormalization.fromArgb(square, 2, 2, new float[3], new float[] {1, 1, 1});
    check(plane[0] < plane[1] && plane[1] < plane[2] && plane[2] < plane[3] && plane[4] == 0, "layout "
        + Arrays.toString(plane));
    check(Math.abs(plane[3] - 4 / 255f) < 1e-7f, "pixel 3 red " + plane[3]);
    Tensor t = ImageNormalization.toTensor(pixels, 2, 1, mean, std);
    check(Arrays.equals(t.shape(), new long[] {1, 3, 1, 2}) && Arrays.equals(t.getDataAsFloatArray(), got), "toTensor");
    check(ImageNormalization.TORCHVISION_NORM_MEAN_RGB.length == 3 && ImageNormalization.TORCHVISION_NORM_STD_RGB[2] == 0.225f,
        "torchvision constants");
  }

  private static void imageNormalizationRefusals() {
    float[] ones = {1, 1, 1};
    expectThrows(IllegalArgumentException.class, () -> ImageNormalization.fromArgb(new int[3], 2, 2, ones, ones));
    expectThrows(IllegalArgumentException.class, () -> ImageNormalization.fromArgb(new int[0], 0, 0, ones, ones));
    expectThrows(IllegalArgumentException.class, () -> ImageNormalization.fromArgb(new int[4], 2, 2, new float[2], ones));
    IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
        () -> ImageNormalization.fromArgb(new int[4], 2, 2, ones, new float[] {1, 0, 1}));
    check(e.getMessage().contains("nonzero"), e.getMessage());
    expectThrows(NullPointerException.class, () -> ImageNormalization.fromArgb(null, 2, 2, ones, ones));
  }
}
