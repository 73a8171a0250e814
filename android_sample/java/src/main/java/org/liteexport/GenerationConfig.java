package org.liteexport;

/**
 * How {@link LlmModule#generate} picks tokens and when it ends: the number of new tokens, the
 * sampler's temperature (0: greedy, the default), top-k (0: off), top-p (1: off) and seed, and the
 * stop tokens (default: those the bundle was exported with). The same seed gives the same tokens
 * as runtime_py's and the native core's generators. A bad value is an {@link InputException} from
 * {@code generate}, before anything runs (the sampler's own messages).
 */
public final class GenerationConfig {
  private long maxNewTokens = 32;
  private double temperature = 0;
  private long topK = 0;
  private double topP = 1;
  private long seed = 0;
  private long[] stopIds = null;

  /** At most this many new tokens (>= 1; default 32). */
  public GenerationConfig maxNewTokens(long n) {
    this.maxNewTokens = n;
    return this;
  }

  /** Softmax temperature, finite and >= 0; 0 (the default) picks the most likely token. */
  public GenerationConfig temperature(double t) {
    this.temperature = t;
    return this;
  }

  /** Sample among the k most likely tokens only (>= 0; 0, the default, is off). */
  public GenerationConfig topK(long k) {
    this.topK = k;
    return this;
  }

  /** Sample among the most likely tokens whose probabilities add up to p, in (0, 1] (1, the default, is off). */
  public GenerationConfig topP(double p) {
    this.topP = p;
    return this;
  }

  /** The sampler's seed (any 64-bit value; Java's negative longs are the upper half of uint64). */
  public GenerationConfig seed(long seed) {
    this.seed = seed;
    return this;
  }

  /** The tokens that end a generation, instead of the bundle's; {@code null} for the bundle's. */
  public GenerationConfig stopIds(long... ids) {
    this.stopIds = ids == null ? null : ids.clone();
    return this;
  }

  public long maxNewTokens() {
    return maxNewTokens;
  }

  public double temperature() {
    return temperature;
  }

  public long topK() {
    return topK;
  }

  public double topP() {
    return topP;
  }

  public long seed() {
    return seed;
  }

  /** The stop tokens that replace the bundle's, or {@code null}. */
  public long[] stopIds() {
    return stopIds == null ? null : stopIds.clone();
  }
}
