package org.liteexport;

/**
 * The token sampler: one logits vector in, one token id out, bit-identical to runtime_py's
 * ({@code runtime_py/sampling.py}, whose docstring is the full specification; docs/reference.md,
 * "Sampling") and the native core's ({@code native/src/sampling.h}). Pure Java: sampling on the
 * device does not need the native library.
 *
 * <p>In short: {@code draw(seed, n)} is splitmix64's output function of
 * {@code seed + (n + 1) * 0x9E3779B97F4A7C15} (mod 2^64), {@code u = (draw >>> 11) * 2^-53}, n the
 * index of the generated token. Greedy (temperature 0): the first index of the largest logit (NaN
 * counts as -inf). Otherwise, in double: candidates sorted by logit descending, ties by index;
 * topK > 0 keeps the first k; weights {@code exp((logit - max) / temperature)} (1 where logit ==
 * max) with {@link #weightExp}; running sums left to right; topP < 1 keeps the shortest prefix
 * reaching {@code topP * total}; the token is the first kept candidate whose running sum exceeds
 * {@code u * keptTotal}. Only IEEE + - * /, {@code Math.rint} and {@code Math.scalb} are used (no
 * {@code Math.exp}, whose last bit differs between JVMs), so every engine gets the same bits.
 */
public final class Sampler {
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;
  // fdlibm e_exp.c's constants: ln2 split so that k * LN2_HI is exact, and the Remez coefficients.
  private static final double INV_LN2 = 1.44269504088896338700e+00;
  private static final double LN2_HI = 6.93147180369123816490e-01;
  private static final double LN2_LO = 1.90821492927058770002e-10;
  private static final double P1 = 1.66666666666666019037e-01;
  private static final double P2 = -2.77777777770155933842e-03;
  private static final double P3 = 6.61375632143793436117e-05;
  private static final double P4 = -1.65339022054652515390e-06;
  private static final double P5 = 4.13813679705723846039e-08;
  // below this exp(x) is not a normal double: the weight is 0 (it could never change a sum >= 1)
  private static final double EXP_CUTOFF = -708.0;
  // below this weightExp(x) < 2^-53 (e^-37 = 8.5e-17, within 1 ulp): adding it to a sum >= 1 changes nothing
  private static final double NO_EFFECT = -37.0;

  private Sampler() {}

  /** The uniform number in [0, 1) of token {@code step} for {@code seed} (both unsigned 64-bit). */
  public static double draw(long seed, long step) {
    long z = seed + (step + 1) * GOLDEN;  // long arithmetic wraps: mod 2^64, as unsigned
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    z ^= z >>> 31;
    return (z >>> 11) * 0x1.0p-53;  // exact: an integer below 2^53 times a power of two
  }

  /** exp(x) for x <= 0 by fdlibm's algorithm (within 1 ulp) in basic IEEE operations; 0 below -708. */
  public static double weightExp(double x) {
    if (!(x >= EXP_CUTOFF)) {
      return 0;
    }
    double k = Math.rint(x * INV_LN2);  // round half to even
    double hi = x - k * LN2_HI;
    double lo = k * LN2_LO;
    double r = hi - lo;
    double t = r * r;
    double c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    return Math.scalb(y, (int) k);  // exact: the result is a normal double
  }

  /** The token id for {@code logits} at generation step {@code step} (0 for the first new token). */
  public static int sample(float[] logits, SamplingConfig config, long step) {
    return sample(logits, 0, logits.length, config, step);
  }

  /**
   * The token id for the {@code length} logits at {@code logits[offset...]} (a row of a larger
   * output), as an index into that row.
   *
   * @throws IllegalArgumentException for no logits or logits that are all NaN or -inf
   */
  public static int sample(float[] logits, int offset, int length, SamplingConfig config, long step) {
    if (offset < 0 || length < 0 || offset > logits.length - length) {
      throw new IndexOutOfBoundsException("logits[" + offset + ", " + offset + " + " + length + ") outside an array of "
          + logits.length);
    }
    if (length == 0) {
      throw new IllegalArgumentException("logits are empty");
    }
    int best = -1;  // the first largest, NaN as -inf
    for (int i = 0; i < length; i++) {
      float v = logits[offset + i];
      if (v > Float.NEGATIVE_INFINITY && (best < 0 || v > logits[offset + best])) {
        best = i;
      }
    }
    if (best < 0) {
      throw new IllegalArgumentException("logits have no value above -inf: all " + length + " are NaN or -inf");
    }
    if (config.isGreedy()) {
      return best;
    }
    double u = draw(config.seed(), step);
    double top = logits[offset + best];
    double temperature = config.temperature();
    // Only the candidates whose weight can change a running sum are sorted: x < NO_EFFECT gives a
    // weight below 2^-53, and every running sum starts at the top candidate's weight 1, so adding it
    // changes no sum; they sort after all others (NaN and -inf among them), so no topP prefix ends
    // on one and none is chosen. The result is the specification's, on fewer candidates.
    long[] keys = new long[length];
    int candidates = 0;
    for (int i = 0; i < length; i++) {
      float logit = logits[offset + i];
      if (logit == top || (logit - top) / temperature >= NO_EFFECT) {
        keys[candidates++] = candidateKey(logit, i);
      }
    }
    sortCandidates(keys, candidates);
    int count = config.topK() > 0 ? Math.min(config.topK(), candidates) : candidates;
    double[] running = new double[count];
    double sum = 0;
    for (int j = 0; j < count; j++) {
      float logit = logits[offset + (int) keys[j]];
      sum += logit == top ? 1.0 : weightExp((logit - top) / temperature);
      running[j] = sum;
    }
    if (config.topP() < 1) {
      double threshold = config.topP() * running[count - 1];
      int j = 0;
      while (j < count - 1 && running[j] < threshold) {  // the first running sum >= threshold
        j++;
      }
      count = j + 1;
    }
    double target = u * running[count - 1];
    int chosen = 0;
    while (chosen < count - 1 && !(running[chosen] > target)) {  // the first running sum > target, else the last
      chosen++;
    }
    return (int) keys[chosen];
  }

  /**
   * Sorts {@code keys[0, count)} ascending as unsigned numbers: a stable LSD radix sort on the high 32 bits (the
   * logit's), 8 bits a pass; the low 32 bits (the index) are ascending already, so ties keep index
   * order. Several times faster than {@code Arrays.sort} on a vocabulary's worth of keys.
   */
  private static void sortCandidates(long[] keys, int count) {
    long[] from = keys;
    long[] to = new long[count];
    for (int shift = 32; shift < 64; shift += 8) {
      int[] start = new int[257];
      for (int i = 0; i < count; i++) {
        start[(int) ((from[i] >>> shift) & 0xFF) + 1]++;
      }
      if (start[(int) ((from[0] >>> shift) & 0xFF) + 1] == count) {
        continue;  // all in one bucket: nothing moves
      }
      for (int b = 0; b < 256; b++) {
        start[b + 1] += start[b];
      }
      for (int i = 0; i < count; i++) {
        to[start[(int) ((from[i] >>> shift) & 0xFF)]++] = from[i];
      }
      long[] swap = from;
      from = to;
      to = swap;
    }
    if (from != keys) {
      System.arraycopy(from, 0, keys, 0, count);
    }
  }

  /**
   * A sort key: ascending unsigned order of the keys (as {@link #sortCandidates} sorts) is
   * descending logit, then ascending index (in the low 32 bits). NaN is -inf and -0.0 is 0.0 before
   * the float's bits are made order-preserving; the native core builds the same keys.
   */
  private static long candidateKey(float logit, int index) {
    if (Float.isNaN(logit)) {
      logit = Float.NEGATIVE_INFINITY;
    }
    if (logit == 0) {
      logit = 0;
    }
    int bits = Float.floatToRawIntBits(logit);
    // negative floats: all bits flipped (larger magnitude, smaller); others: the sign bit set
    int ascending = bits < 0 ? ~bits : bits | 0x80000000;
    return ((long) ~ascending << 32) | index;  // the shift drops the sign extension
  }
}
