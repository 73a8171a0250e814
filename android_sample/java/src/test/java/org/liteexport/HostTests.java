package org.liteexport;

import static org.liteexport.TestRunner.check;
import static org.liteexport.TestRunner.expectThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.liteexport.sample.ErrorReport;

/**
 * Host tests of the Java API through the JNI library and the native core, against the answers
 * runtime_py gave on the same bundles and inputs (see make_host_test_vectors.py).
 *
 * <pre>java -Dliteexport.jni.path=.../libliteexport_jni.so -cp CLASSES org.liteexport.HostTests VECTORS_DIR [-v]</pre>
 */
public final class HostTests {
  // The parity suite's tolerance (numpy.testing.assert_allclose semantics).
  private static final double ATOL = 1e-5;
  private static final double RTOL = 1e-4;

  private final Vectors vectors;
  private final Map<String, Path> bundles = new HashMap<>();

  private HostTests(Vectors vectors) {
    this.vectors = vectors;
    for (Vectors.Record r : vectors.ofKind("bundle")) {
      bundles.put(r.field(0), vectors.path(r.field(1)));
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: HostTests VECTORS_DIR [-v]");
      System.exit(2);
    }
    HostTests tests = new HostTests(new Vectors(Path.of(args[0])));
    TestRunner runner = new TestRunner();
    tests.register(runner);
    int failed = runner.runAll(args.length > 1 && args[1].equals("-v"));
    System.exit(failed == 0 ? 0 : 1);
  }

  private void register(TestRunner runner) {
    check(!bundles.isEmpty(), "no bundles in the manifest");
    for (Vectors.Record r : vectors.ofKind("bundle")) {
      runner.add("methods " + r.field(0), () -> checkMethods(r));
    }
    int n = 0;
    for (Vectors.Record r : vectors.ofKind("run")) {
      runner.add("outputs " + r.field(0) + "." + r.field(1) + " #" + n++, () -> checkRun(r));
    }
    for (Vectors.Record r : vectors.ofKind("exec_error")) {
      runner.add("wrong shape " + r.field(0) + "." + r.field(1), () -> checkExecutionError(r));
      runner.add("error message " + r.field(0) + "." + r.field(1), () -> checkErrorMessage(r));
    }
    for (Vectors.Record r : vectors.ofKind("input_error")) {
      int inputs = r.field(2).isEmpty() ? 0 : r.field(2).split(" ").length;
      runner.add("bad call " + r.field(0) + "." + r.field(1) + " with " + inputs + " input(s)", () -> checkInputError(r));
    }
    for (Vectors.Record r : vectors.ofKind("malformed")) {
      runner.add("malformed " + r.field(0), () -> checkMalformed(r));
    }
    runner.add("missing file", this::missingFile);
    runner.add("directory", this::directory);
    runner.add("a FIFO is refused, not waited on", this::fifo);
    runner.add("a copying load survives truncating the file", this::copyingLoad);
    runner.add("memory budget", this::memoryBudget);
    runner.add("timeout", this::timeout);
    runner.add("threads option", this::threadsOption);
    runner.add("closed module", this::closedModule);
    runner.add("tensor validation", HostTests::tensorValidation);
    runner.add("tensors are copies", this::tensorsAreCopies);
    runner.add("None outputs are null", this::noneOutputsAreNull);
    runner.add("null inputs", this::nullInputs);
    runner.add("load/run/close many times", this::manyModules);
    runner.add("threads share a module", this::threads);
    runner.add("corrupted bundles fail cleanly", this::corruptedBundles);
    runner.add("app error report: library not loadable", HostTests::errorReportLinkError);
    runner.add("app error report: bundle errors and causes", this::errorReportBundleError);
    new LibraryTests(vectors).register(runner);  // what the Android library adds (LibraryTests.java)
    SamplerTests.register(runner);  // the token sampler, pure Java (SamplerTests.java)
    new StateTests(vectors, bundles).register(runner);  // program state (StateTests.java)
    new GenerationTests(vectors, bundles).register(runner);  // LlmModule (GenerationTests.java)
  }

  private Module load(String bundleId) {
    Path path = bundles.get(bundleId);
    check(path != null, "no bundle " + bundleId + " in the manifest");
    return Module.load(path.toString());
  }

  /** The first bundle with a one-input forward (TinyCNN if present) and an input for it. */
  private Vectors.Record firstSingleInputRun() {
    Vectors.Record found = null;
    for (Vectors.Record r : vectors.ofKind("run")) {
      if (r.field(1).equals("forward") && !r.field(2).contains(" ")) {
        if (found == null || r.field(0).startsWith("tiny_cnn")) {
          found = r;
        }
      }
    }
    check(found != null, "no single-input forward in the manifest");
    return found;
  }

  // ---- parity with runtime_py -------------------------------------------------------------

  private void checkMethods(Vectors.Record r) {
    try (Module module = load(r.field(0))) {
      String[] expected = r.field(2).split(",");
      String[] got = module.methodNames();
      Arrays.sort(expected);
      Arrays.sort(got);
      check(Arrays.equals(expected, got),
          "methods " + Arrays.toString(got) + ", runtime_py: " + Arrays.toString(expected));
    }
  }

  private void checkRun(Vectors.Record r) throws Exception {
    Tensor[] inputs = vectors.tensors(r.field(2));
    Tensor[] expected = vectors.tensors(r.field(3));
    Tensor[] got;
    try (Module module = load(r.field(0))) {
      got = module.runMethod(r.field(1), inputs);
    }
    check(got.length == expected.length, got.length + " outputs, runtime_py: " + expected.length);
    for (int i = 0; i < got.length; i++) {
      assertClose(got[i], expected[i], "output " + i);
    }
  }

  static void assertClose(Tensor got, Tensor expected, String what) {
    if (got == null || expected == null) {  // None in a returned tuple
      check(got == expected, what + ": " + (got == null ? "null" : got) + ", runtime_py: "
          + (expected == null ? "None" : expected));
      return;
    }
    check(Arrays.equals(got.shape(), expected.shape()), what + ": shape " + Arrays.toString(got.shape())
        + ", runtime_py: " + Arrays.toString(expected.shape()));
    check(got.dtype() == expected.dtype(), what + ": dtype " + got.dtype() + ", runtime_py: " + expected.dtype());
    if (got.dtype() != DType.FLOAT32) {  // integers and bools: exactly
      boolean same = got.dtype() == DType.INT64 ? Arrays.equals(got.getDataAsLongArray(), expected.getDataAsLongArray())
          : got.dtype() == DType.INT32 ? Arrays.equals(got.getDataAsIntArray(), expected.getDataAsIntArray())
          : Arrays.equals(got.getDataAsByteArray(), expected.getDataAsByteArray());
      check(same, what + ": " + got.dtype() + " values differ from runtime_py's");
      return;
    }
    float[] g = got.getDataAsFloatArray();
    float[] e = expected.getDataAsFloatArray();
    int bad = 0;
    int firstBad = -1;
    for (int i = 0; i < g.length; i++) {
      boolean ok = Float.isNaN(e[i]) ? Float.isNaN(g[i]) : Math.abs((double) g[i] - e[i]) <= ATOL + RTOL * Math.abs(e[i]);
      if (!ok && bad++ == 0) {
        firstBad = i;
      }
    }
    check(bad == 0, what + ": " + bad + " of " + g.length + " elements differ; first at " + firstBad + ": "
        + (firstBad >= 0 ? g[firstBad] + " vs runtime_py " + e[firstBad] : ""));
  }

  private ExecutionException runExpectingExecutionError(Vectors.Record r) throws Exception {
    Tensor[] inputs = vectors.tensors(r.field(2));
    try (Module module = load(r.field(0))) {
      return expectThrows(ExecutionException.class, () -> module.runMethod(r.field(1), inputs));
    }
  }

  private void checkExecutionError(Vectors.Record r) throws Exception {
    ExecutionException e = runExpectingExecutionError(r);
    long handle = Long.parseLong(r.field(3));
    check(e.getDebugHandle() == handle, "debug handle " + e.getDebugHandle() + ", runtime_py: " + handle);
    List<String> lines = Arrays.asList(String.valueOf(e.getMessage()).split("\n"));
    check(lines.contains(r.field(4)), "message lacks the line \"" + r.field(4) + "\":\n" + e.getMessage());
    checkStructured(e, r.field(6), r.field(7));
  }

  /** The structured form: runtime_py's code and fields (schema/demo_errors.toml), in order. */
  static void checkStructured(LiteExportException e, String code, String namesAndValues) {
    check(e.code().equals(code), "code " + e.code() + ", runtime_py: " + code);
    Map<String, String> fields = new LinkedHashMap<>();
    for (String pair : namesAndValues.split("\u001f")) {
      int eq = pair.indexOf('=');
      if (eq > 0) fields.put(pair.substring(0, eq), pair.substring(eq + 1));
    }
    check(e.fields().equals(fields), "fields " + e.fields() + ", runtime_py: " + fields);
    check(new java.util.ArrayList<>(e.fields().keySet()).equals(new java.util.ArrayList<>(fields.keySet())),
        "field order " + e.fields().keySet() + ", runtime_py: " + fields.keySet());
  }

  /** The whole source-mapped message, traceback included, is runtime_py's word for word. */
  private void checkErrorMessage(Vectors.Record r) throws Exception {
    ExecutionException e = runExpectingExecutionError(r);
    String expected = vectors.text(r.field(5));
    check(expected.equals(e.getMessage()), "message differs from runtime_py's.\n--- native:\n" + e.getMessage()
        + "\n--- runtime_py:\n" + expected);
  }

  private void checkInputError(Vectors.Record r) throws Exception {
    Tensor[] inputs = vectors.tensors(r.field(2));
    try (Module module = load(r.field(0))) {
      InputException e = expectThrows(InputException.class, () -> module.runMethod(r.field(1), inputs));
      check(e.getMessage() != null && !e.getMessage().isEmpty(), "empty message");
      // the same error as runtime_py's InputError: its debug handle, code and fields, and for an
      // error of the demo backend its whole message (the reader's Module hierarchy line included)
      long handle = Long.parseLong(r.field(3));
      check(e.getDebugHandle() == handle, "debug handle " + e.getDebugHandle() + ", runtime_py: " + handle);
      checkStructured(e, r.field(4), r.field(5));
      if (!r.field(6).isEmpty()) {
        String expected = vectors.text(r.field(6));
        check(expected.equals(e.getMessage()), "message differs from runtime_py's.\n--- native:\n" + e.getMessage()
            + "\n--- runtime_py:\n" + expected);
      }
    }
  }

  private void checkMalformed(Vectors.Record r) {
    FormatException e = expectThrows(FormatException.class, () -> Module.load(vectors.path(r.field(0)).toString()).close());
    check(e.getMessage() != null && !e.getMessage().isEmpty(), "empty message");
  }

  // ---- API behaviour ----------------------------------------------------------------------

  private void missingFile() throws Exception {
    Path missing = Files.createTempDirectory("liteexport").resolve("missing.ptl");
    expectThrows(FormatException.class, () -> Module.load(missing.toString()));
  }

  // The sample app's MainActivity shows ErrorReport.describe(e) for whatever its worker throws.
  private static void errorReportLinkError() {
    UnsatisfiedLinkError e = expectThrows(UnsatisfiedLinkError.class,
        () -> System.load("/nonexistent/libliteexport_jni.so"));  // a real one, as a phone of another ABI gives
    String text = ErrorReport.describe(e);
    check(text.contains("could not be loaded") && text.contains("ABI"), "no hint: " + text);
    check(text.contains("java.lang.UnsatisfiedLinkError: " + e.getMessage()), "no error line: " + text);
  }

  private void errorReportBundleError() throws Exception {
    Path missing = Files.createTempDirectory("liteexport").resolve("missing.ptl");
    FormatException e = expectThrows(FormatException.class, () -> Module.load(missing.toString()));
    String text = ErrorReport.describe(e);
    check(text.startsWith("FormatException:\n" + e.getMessage()), "bundle error not shown: " + text);
    RuntimeException outer = new RuntimeException("worker failed", new OutOfMemoryError("Java heap space"));
    text = ErrorReport.describe(outer);
    check(text.equals("java.lang.RuntimeException: worker failed\n"
        + "caused by: java.lang.OutOfMemoryError: Java heap space\n"), "causes not shown: " + text);
  }

  private void directory() throws Exception {
    Path dir = Files.createTempDirectory("liteexport");
    expectThrows(FormatException.class, () -> Module.load(dir.toString()));
  }

  // issue 18: before the fix, Module.load blocked in open() until a writer came
  private void fifo() throws Exception {
    Path fifo = Files.createTempDirectory("liteexport").resolve("bundle.ptl");
    Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
    check(mkfifo.waitFor() == 0, "mkfifo failed");
    for (boolean copy : new boolean[] {false, true}) {
      FormatException e = expectThrows(FormatException.class,
          () -> Module.load(fifo.toString(), new LoadOptions().copy(copy)));
      check(e.getMessage().contains("not a regular file"), e.getMessage());
    }
  }

  // The copying load reads the file once: truncating it afterwards (SIGBUS under the mapped
  // load) changes nothing.
  private void copyingLoad() throws Exception {
    Vectors.Record r = firstSingleInputRun();
    Tensor[] inputs = vectors.tensors(r.field(2));
    Path copy = Files.createTempDirectory("liteexport").resolve("copy.ptl");
    Files.copy(bundles.get(r.field(0)), copy);
    Tensor[] expected;
    try (Module mapped = Module.load(copy.toString())) {
      expected = mapped.runMethod(r.field(1), inputs);
    }
    try (Module module = Module.load(copy.toString(), new LoadOptions().copy(true))) {
      try (java.nio.channels.FileChannel f = java.nio.channels.FileChannel.open(copy,
          java.nio.file.StandardOpenOption.WRITE)) {
        f.truncate(0);
      }
      Tensor[] got = module.runMethod(r.field(1), inputs);
      for (int i = 0; i < got.length; i++) {
        check(Arrays.equals(got[i].getDataAsFloatArray(), expected[i].getDataAsFloatArray()), "output " + i);
      }
    }
  }

  private void memoryBudget() throws Exception {
    checkRunLimit(new LoadOptions().maxMemory(4), "exceeds the memory budget of 4 bytes");
    expectThrows(IllegalArgumentException.class, () -> new LoadOptions().maxMemory(-1));
  }

  private void timeout() throws Exception {
    // a nanosecond has passed by the first check, between instructions
    checkRunLimit(new LoadOptions().timeoutSeconds(1e-9), "exceeded its timeout");
    expectThrows(IllegalArgumentException.class, () -> new LoadOptions().timeoutSeconds(-1));
  }

  // A run past a limit of `options` is an ExecutionException whose message says which.
  private void checkRunLimit(LoadOptions options, String text) throws Exception {
    Vectors.Record r = firstSingleInputRun();
    Tensor[] inputs = vectors.tensors(r.field(2));
    try (Module module = Module.load(bundles.get(r.field(0)).toString(), options)) {
      ExecutionException e = expectThrows(ExecutionException.class, () -> module.runMethod(r.field(1), inputs));
      check(e.getMessage().contains(text), e.getMessage());
    }
  }

  // 1 and 2 threads compute the same within the parity tolerance (XNNPACK splits the work, not the
  // sums), through LoadOptions and setNumThreads; counts outside 1..64 are refused.
  private void threadsOption() throws Exception {
    for (Vectors.Record r : vectors.ofKind("run")) {
      Tensor[] inputs = vectors.tensors(r.field(2));
      Tensor[] expected = vectors.tensors(r.field(3));
      String path = bundles.get(r.field(0)).toString();
      try (Module two = Module.load(path, new LoadOptions().numThreads(2)); Module one = Module.load(path)) {
        Tensor[] a = two.runMethod(r.field(1), inputs);
        one.setNumThreads(2);
        Tensor[] b = one.runMethod(r.field(1), inputs);
        one.setNumThreads(1);
        Tensor[] c = one.runMethod(r.field(1), inputs);
        for (int i = 0; i < expected.length; i++) {
          assertClose(a[i], expected[i], r.field(0) + " output " + i + " at 2 threads (LoadOptions)");
          assertClose(b[i], expected[i], r.field(0) + " output " + i + " at 2 threads (setNumThreads)");
          assertClose(c[i], expected[i], r.field(0) + " output " + i + " at 1 thread");
        }
      }
    }
    IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> new LoadOptions().numThreads(0));
    check(e.getMessage().equals("numThreads must be between 1 and 64, got 0"), e.getMessage());
    expectThrows(IllegalArgumentException.class, () -> new LoadOptions().numThreads(65));
    Vectors.Record r = firstSingleInputRun();
    try (Module module = load(r.field(0))) {
      expectThrows(IllegalArgumentException.class, () -> module.setNumThreads(-1));
      module.setNumThreads(64);
      module.forward(vectors.tensors(r.field(2)));
    }
  }

  private void closedModule() throws Exception {
    Vectors.Record r = firstSingleInputRun();
    Tensor[] inputs = vectors.tensors(r.field(2));
    Module module = load(r.field(0));
    check(!module.isClosed(), "a new module is closed");
    module.forward(inputs);
    module.close();
    module.close();  // idempotent
    check(module.isClosed(), "isClosed() is false after close()");
    expectThrows(IllegalStateException.class, () -> module.forward(inputs));
    expectThrows(IllegalStateException.class, () -> module.runMethod("forward", inputs));
    expectThrows(IllegalStateException.class, module::methodNames);
  }

  private static void tensorValidation() {
    Tensor t = Tensor.fromBlob(new float[] {1, 2, 3, 4, 5, 6}, new long[] {2, 3});
    check(Arrays.equals(t.shape(), new long[] {2, 3}) && t.numel() == 6, "shape");
    check(Tensor.fromBlob(new float[] {7}, new long[0]).numel() == 1, "a scalar has one element");
    check(Tensor.fromBlob(new float[0], new long[] {0, 4}).numel() == 0, "an empty tensor");
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new float[5], new long[] {2, 3}));
    expectThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new float[0], new long[] {-1, 0}));
    expectThrows(IllegalArgumentException.class,
        () -> Tensor.fromBlob(new float[0], new long[] {Long.MAX_VALUE, Long.MAX_VALUE, 0}));
    expectThrows(NullPointerException.class, () -> Tensor.fromBlob((float[]) null, new long[] {1}));
    expectThrows(NullPointerException.class, () -> Tensor.fromBlob(new float[1], null));
  }

  /** googlenet-like (logits, None, None) and (x, None): the None elements are null. */
  private void noneOutputsAreNull() throws Exception {
    int seen = 0;
    for (Vectors.Record r : vectors.ofKind("run")) {
      if (!r.field(0).startsWith("auxiliary_heads")) {
        continue;
      }
      Tensor[] got;
      try (Module module = load(r.field(0))) {
        got = module.runMethod(r.field(1), vectors.tensors(r.field(2)));
      }
      boolean forward = r.field(1).equals("forward");
      check(got.length == (forward ? 3 : 2), r.field(1) + ": " + got.length + " outputs");
      check(got[0] != null && got[1] == null && (!forward || got[2] == null),
          r.field(1) + ": outputs " + Arrays.toString(got));
      seen++;
    }
    check(seen > 0, "no auxiliary_heads runs in the manifest");
  }

  private void tensorsAreCopies() throws Exception {
    float[] data = {1, 2};
    long[] shape = {2};
    Tensor t = Tensor.fromBlob(data, shape);
    data[0] = 100;
    shape[0] = 5;
    check(t.getDataAsFloatArray()[0] == 1 && t.shape()[0] == 2, "fromBlob must copy");
    t.getDataAsFloatArray()[1] = 100;
    t.shape()[0] = 9;
    check(t.getDataAsFloatArray()[1] == 2 && t.shape()[0] == 2, "getters must return copies");

    // The same input tensor used twice gives the same outputs (the native side does not write to it).
    Vectors.Record r = firstSingleInputRun();
    Tensor[] inputs = vectors.tensors(r.field(2));
    try (Module module = load(r.field(0))) {
      Tensor[] first = module.forward(inputs);
      Tensor[] second = module.forward(inputs);
      check(Arrays.equals(first[0].getDataAsFloatArray(), second[0].getDataAsFloatArray()), "not deterministic");
    }
  }

  private void nullInputs() throws Exception {
    Vectors.Record r = firstSingleInputRun();
    try (Module module = load(r.field(0))) {
      expectThrows(NullPointerException.class, () -> module.forward((Tensor) null));
      expectThrows(NullPointerException.class, () -> module.forward((Tensor[]) null));
      expectThrows(NullPointerException.class, () -> module.runMethod(null, vectors.tensors(r.field(2))));
    }
    expectThrows(NullPointerException.class, () -> Module.load((String) null));
  }

  private void manyModules() throws Exception {
    Vectors.Record r = firstSingleInputRun();
    Tensor[] inputs = vectors.tensors(r.field(2));
    Tensor[] expected = vectors.tensors(r.field(3));
    for (int i = 0; i < 200; i++) {
      try (Module module = load(r.field(0))) {
        assertClose(module.forward(inputs)[0], expected[0], "run " + i);
      }
    }
  }

  private void threads() throws Exception {
    Vectors.Record r = firstSingleInputRun();
    Tensor[] inputs = vectors.tensors(r.field(2));
    Tensor[] expected = vectors.tensors(r.field(3));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (Module module = load(r.field(0))) {
      List<Future<Tensor[]>> results = new ArrayList<>();
      for (int i = 0; i < 32; i++) {
        results.add(pool.submit(() -> module.forward(inputs)));
      }
      for (Future<Tensor[]> f : results) {
        assertClose(f.get()[0], expected[0], "threaded run");
      }
    } finally {
      pool.shutdown();
    }
  }

  /**
   * Random byte corruptions of a valid bundle: the runtime may accept some (a changed weight is
   * still a valid bundle) but must never crash or throw anything but a LiteExportException.
   */
  private void corruptedBundles() throws Exception {
    Vectors.Record r = firstSingleInputRun();
    byte[] good = Files.readAllBytes(bundles.get(r.field(0)));
    Tensor[] inputs = vectors.tensors(r.field(2));
    Path file = Files.createTempFile("liteexport-corrupt", ".ptl");
    Random random = new Random(1234);
    int rejected = 0;
    try {
      for (int i = 0; i < 300; i++) {
        byte[] bad = good.clone();
        int flips = 1 + random.nextInt(4);
        for (int k = 0; k < flips; k++) {
          bad[random.nextInt(bad.length)] = (byte) random.nextInt(256);
        }
        Files.write(file, bad);
        try (Module module = Module.load(file.toString())) {
          module.forward(inputs);
        } catch (LiteExportException e) {
          rejected++;
        }
      }
    } finally {
      Files.deleteIfExists(file);
    }
    check(rejected > 0, "no corruption out of 300 was detected");
  }
}
