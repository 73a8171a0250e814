package org.liteexport;

/**
 * How {@link Sampler#sample} picks a token: {@code temperature} (finite, >= 0; 0 = greedy),
 * {@code topK} (>= 0; 0 = off), {@code topP} (in (0, 1]; 1 = off) and {@code seed} (the 64 bits of
 * an unsigned seed: a seed s >= 2^63 given to runtime_py or the native core is {@code s - 2^64}
 * here). Immutable; checked on construction.
 *
 * <pre>{@code
 * SamplingConfig config = new SamplingConfig(0.7, 40, 0.9, 1234L);
 * int token = Sampler.sample(logits, config, step);
 * }</pre>
 */
public final class SamplingConfig {
  private final double temperature;
  private final int topK;
  private final double topP;
  private final long seed;

  /** @throws IllegalArgumentException naming the field and its value when one is out of range */
  public SamplingConfig(double temperature, int topK, double topP, long seed) {
    if (!(temperature >= 0) || Double.isInfinite(temperature)) {
      throw new IllegalArgumentException("temperature must be a finite number >= 0 (0: greedy), got " + temperature);
    }
    if (topK < 0) {
      throw new IllegalArgumentException("top_k must be >= 0 (0: off), got " + topK);
    }
    if (!(topP > 0 && topP <= 1)) {
      throw new IllegalArgumentException("top_p must be in (0, 1] (1: off), got " + topP);
    }
    this.temperature = temperature;
    this.topK = topK;
    this.topP = topP;
    this.seed = seed;
  }

  /** Greedy decoding: the first index of the largest logit. */
  public static SamplingConfig greedy() {
    return new SamplingConfig(0, 0, 1, 0);
  }

  public double temperature() {
    return temperature;
  }

  public int topK() {
    return topK;
  }

  public double topP() {
    return topP;
  }

  public long seed() {
    return seed;
  }

  public boolean isGreedy() {
    return temperature == 0;
  }

  @Override
  public String toString() {
    return "SamplingConfig(temperature=" + temperature + ", topK=" + topK + ", topP=" + topP + ", seed="
        + Long.toUnsignedString(seed) + ")";
  }
}
