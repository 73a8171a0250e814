package org.liteexport;

import static org.liteexport.TestRunner.check;
import static org.liteexport.TestRunner.expectThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;

/**
 * Tests of the pure-Java token sampler ({@link Sampler}, {@link SamplingConfig}): its draws against
 * splitmix64 written as the usual sequential generator, its exp against {@link StrictMath#exp}, and
 * its choices on cases whose answer follows from the specification by hand. Registered by
 * {@link HostTests}; also runnable alone (no JNI library needed), which
 * tests/generation/test_sampler_engines.py does, with two more modes that print results for it to
 * compare with runtime_py and the native core:
 *
 * <pre>
 * java -cp CLASSES org.liteexport.SamplerTests [-v]
 * java -cp CLASSES org.liteexport.SamplerTests sample LOGITS.f32 ROWS VOCAB TEMPERATURE TOP_K TOP_P SEED FIRST_STEP
 *     LOGITS.f32: ROWS x VOCAB little-endian float32; prints one token id per row (row r at step FIRST_STEP + r)
 * java -cp CLASSES org.liteexport.SamplerTests exp X.i64
 *     X.i64: little-endian int64 bit patterns of doubles; prints the bits of Sampler.weightExp of each
 * </pre>
 */
final class SamplerTests {
  private static final float INF = Float.POSITIVE_INFINITY;

  private SamplerTests() {}

  public static void main(String[] args) throws IOException {
    if (args.length > 0 && args[0].equals("sample")) {
      printSamples(args);
    } else if (args.length > 0 && args[0].equals("exp")) {
      ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(Paths.get(args[1]))).order(ByteOrder.LITTLE_ENDIAN);
      StringBuilder out = new StringBuilder();
      while (bytes.remaining() >= 8) {
        out.append(Double.doubleToRawLongBits(Sampler.weightExp(Double.longBitsToDouble(bytes.getLong())))).append('\n');
      }
      System.out.print(out);
    } else {
      TestRunner runner = new TestRunner();
      register(runner);
      System.exit(runner.runAll(args.length > 0 && args[0].equals("-v")) == 0 ? 0 : 1);
    }
  }

  // Exit 6 for a bad config or bad logits (IllegalArgumentException), as the native tool's input errors.
  private static void printSamples(String[] args) throws IOException {
    int rows = Integer.parseInt(args[2]);
    int vocab = Integer.parseInt(args[3]);
    long firstStep = Long.parseUnsignedLong(args[8]);
    float[] logits = new float[rows * vocab];
    ByteBuffer.wrap(Files.readAllBytes(Paths.get(args[1]))).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(logits);
    StringBuilder out = new StringBuilder();
    try {
      SamplingConfig config = new SamplingConfig(Double.parseDouble(args[4]), Integer.parseInt(args[5]),
          Double.parseDouble(args[6]), Long.parseUnsignedLong(args[7]));
      for (int r = 0; r < rows; r++) {
        out.append(Sampler.sample(logits, r * vocab, vocab, config, firstStep + r)).append('\n');
      }
    } catch (IllegalArgumentException e) {
      System.out.print(out);
      System.out.println("Error: " + e.getMessage());
      System.exit(6);
    }
    System.out.print(out);
  }

  static void register(TestRunner runner) {
    runner.add("sampler: draws are splitmix64's outputs", SamplerTests::drawsAreSplitMix64Outputs);
    runner.add("sampler: exp within 1 ulp of StrictMath.exp", SamplerTests::expWithinOneUlp);
    runner.add("sampler: greedy is the first largest, NaN as -inf", SamplerTests::greedy);
    runner.add("sampler: two equal logits split at u = 0.5", SamplerTests::twoEqualLogits);
    runner.add("sampler: top-k keeps the k largest, ties by index", SamplerTests::topK);
    runner.add("sampler: top-p keeps the shortest prefix reaching p", SamplerTests::topP);
    runner.add("sampler: infinite logits", SamplerTests::infiniteLogits);
    runner.add("sampler: a row of a larger array", SamplerTests::offsetRow);
    runner.add("sampler: bad configs and logits", SamplerTests::badInput);
  }

  private static SamplingConfig config(double temperature, int topK, double topP, long seed) {
    return new SamplingConfig(temperature, topK, topP, seed);
  }

  // splitmix64 as Vigna's reference writes it: a state advanced by the golden gamma, then mixed
  private static void drawsAreSplitMix64Outputs() {
    for (long seed : new long[] {0, 1, 42, -1, 0x9E3779B97F4A7C15L}) {
      long state = seed;
      for (long n = 0; n < 1000; n++) {
        state += 0x9E3779B97F4A7C15L;
        long z = state;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z = z ^ (z >>> 31);
        double expected = Math.scalb((double) (z >>> 11), -53);
        check(Sampler.draw(seed, n) == expected, "seed " + Long.toUnsignedString(seed) + " step " + n);
      }
    }
    // the first two outputs of splitmix64 from seed 0 in Vigna's reference implementation
    check(Sampler.draw(0, 0) == Math.scalb((double) (0xE220A8397B1DCDAFL >>> 11), -53), "first output of seed 0");
    check(Sampler.draw(0, 1) == Math.scalb((double) (0x6E789E6AA1B965F4L >>> 11), -53), "second output of seed 0");
    check(Sampler.draw(5, -1) == Sampler.draw(5 - 0x9E3779B97F4A7C15L, 0), "step 2^64 - 1 wraps");
  }

  private static void expWithinOneUlp() {
    check(Sampler.weightExp(0.0) == 1.0 && Sampler.weightExp(-0.0) == 1.0, "exp(0) = 1");
    check(Sampler.weightExp(-708.5) == 0 && Sampler.weightExp(Double.NEGATIVE_INFINITY) == 0
        && Sampler.weightExp(Double.NaN) == 0, "0 below the cutoff, for -inf and NaN");
    for (int i = 0; i <= 200000; i++) {
      double x = -708.0 * i / 200000.0;
      double ours = Sampler.weightExp(x);
      double reference = StrictMath.exp(x);
      check(Math.abs(ours - reference) <= Math.ulp(reference), "x = " + x + ": " + ours + " vs " + reference);
    }
  }

  private static void greedy() {
    float[] logits = {1, Float.NaN, 3, Float.NEGATIVE_INFINITY, 3, 2};
    for (long step = 0; step < 5; step++) {
      check(Sampler.sample(logits, SamplingConfig.greedy(), step) == 2, "first of the two 3s");
    }
    check(Sampler.sample(new float[] {1, INF, INF}, SamplingConfig.greedy(), 0) == 1, "first +inf");
    float[] oneFinite = {Float.NaN, Float.NEGATIVE_INFINITY, -5};
    check(Sampler.sample(oneFinite, SamplingConfig.greedy(), 0) == 2, "the only finite logit");
    check(Sampler.sample(oneFinite, config(1, 0, 1, 7), 0) == 2, "the only nonzero weight");
  }

  // weights 1, 1, running sums 1, 2, target 2u: token 0 iff u < 0.5
  private static void twoEqualLogits() {
    int zeros = 0;
    for (long step = 0; step < 400; step++) {
      int expected = Sampler.draw(11, step) < 0.5 ? 0 : 1;
      check(Sampler.sample(new float[] {0.25f, 0.25f}, config(1, 0, 1, 11), step) == expected, "step " + step);
      zeros += expected == 0 ? 1 : 0;
    }
    check(zeros > 150 && zeros < 250, zeros + " zeros of 400");
  }

  private static Set<Integer> seen(float[] logits, SamplingConfig config, int steps) {
    Set<Integer> seen = new TreeSet<>();
    for (long step = 0; step < steps; step++) {
      seen.add(Sampler.sample(logits, config, step));
    }
    return seen;
  }

  private static void topK() {
    float[] logits = {1, 0, 5, 2, 5, 3, 5, -1, Float.NaN, 7};  // sorted: 9, 2, 4, 6, 5, ...
    check(seen(logits, config(5, 3, 1, 3), 2000).equals(new TreeSet<>(Arrays.asList(9, 2, 4))), "top 3");
    check(seen(logits, config(5, 1, 1, 3), 50).equals(new TreeSet<>(Arrays.asList(9))), "top 1");
    float[] signs = {-1, -3, 2, -0.0f, -2, 0.0f, Float.NEGATIVE_INFINITY};  // sorted: 2, 3, 5, 0, 4, 1 (-0.0 == 0.0)
    check(seen(signs, config(100, 3, 1, 4), 2000).equals(new TreeSet<>(Arrays.asList(2, 3, 5))), "top 3 of mixed signs");
    check(seen(signs, config(100, 5, 1, 4), 2000).equals(new TreeSet<>(Arrays.asList(2, 3, 5, 0, 4))), "top 5 of mixed signs");
  }

  // weights at temperature 1: 1, e^-1, e^-2, e^-3; total 1.55
  private static void topP() {
    float[] logits = {-3, 0, -1, -2};
    check(seen(logits, config(1, 0, 0.6, 1), 200).equals(new TreeSet<>(Arrays.asList(1))), "0.6: the top alone");
    check(seen(logits, config(1, 0, 0.8, 1), 400).equals(new TreeSet<>(Arrays.asList(1, 2))), "0.8: two");
  }

  private static void infiniteLogits() {
    float[] logits = {1, INF, Float.NEGATIVE_INFINITY, INF, 0};
    check(seen(logits, config(0.7, 0, 1, 9), 300).equals(new TreeSet<>(Arrays.asList(1, 3))), "+inf share the mass");
    float[] masked = {Float.NEGATIVE_INFINITY, 2, Float.NEGATIVE_INFINITY, Float.NaN, 2.5f};
    check(seen(masked, config(1.3, 0, 1, 9), 300).equals(new TreeSet<>(Arrays.asList(1, 4))), "-inf never drawn");
  }

  private static void offsetRow() {
    java.util.Random random = new java.util.Random(5);
    float[] rows = new float[3 * 50];
    for (int i = 0; i < rows.length; i++) {
      rows[i] = (float) random.nextGaussian();
    }
    SamplingConfig config = config(0.9, 10, 0.95, 77);
    for (long step = 0; step < 100; step++) {
      float[] row = Arrays.copyOfRange(rows, 50, 100);
      check(Sampler.sample(rows, 50, 50, config, step) == Sampler.sample(row, config, step), "step " + step);
    }
    expectThrows(IndexOutOfBoundsException.class, () -> Sampler.sample(rows, 120, 50, config, 0));
  }

  private static void badInput() {
    String[][] cases = {
      {"-1.0", "0", "1", "temperature must be a finite number >= 0 (0: greedy), got -1.0"},
      {"NaN", "0", "1", "temperature must be a finite number >= 0 (0: greedy), got NaN"},
      {"Infinity", "0", "1", "temperature must be a finite number >= 0 (0: greedy), got Infinity"},
      {"1", "-2", "1", "top_k must be >= 0 (0: off), got -2"},
      {"1", "0", "0", "top_p must be in (0, 1] (1: off), got 0.0"},
      {"1", "0", "1.5", "top_p must be in (0, 1] (1: off), got 1.5"},
      {"1", "0", "NaN", "top_p must be in (0, 1] (1: off), got NaN"},
    };
    for (String[] c : cases) {
      IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
          () -> new SamplingConfig(Double.parseDouble(c[0]), Integer.parseInt(c[1]), Double.parseDouble(c[2]), 0));
      check(e.getMessage().equals(c[3]), e.getMessage());
    }
    for (SamplingConfig config : new SamplingConfig[] {SamplingConfig.greedy(), config(1, 0, 1, 0)}) {
      IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
          () -> Sampler.sample(new float[] {Float.NaN, Float.NEGATIVE_INFINITY, Float.NaN}, config, 0));
      check(e.getMessage().equals("logits have no value above -inf: all 3 are NaN or -inf"), e.getMessage());
      e = expectThrows(IllegalArgumentException.class, () -> Sampler.sample(new float[0], config, 0));
      check(e.getMessage().equals("logits are empty"), e.getMessage());
    }
    check(config(1, 0, 1, -1).toString().contains("seed=18446744073709551615"), "the seed prints unsigned");
  }
}
