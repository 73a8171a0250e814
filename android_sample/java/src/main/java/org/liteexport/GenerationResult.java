package org.liteexport;

/**
 * What {@link LlmModule#generate} produced: the new token ids (the prompt's not included), why it
 * ended ({@code "stop_token"}, {@code "max_new_tokens"}, {@code "cache_full"} or {@code
 * "stopped"}), and the speed of the prefill (the prompt) and of the decode (one token per call).
 */
public final class GenerationResult {
  private final long[] tokens;
  private final String stopReason;
  private final long promptTokens;
  private final double prefillSeconds;
  private final double decodeSeconds;

  // Made by the JNI bridge.
  GenerationResult(long[] tokens, String stopReason, long promptTokens, double prefillSeconds, double decodeSeconds) {
    this.tokens = tokens;
    this.stopReason = stopReason;
    this.promptTokens = promptTokens;
    this.prefillSeconds = prefillSeconds;
    this.decodeSeconds = decodeSeconds;
  }

  /** The generated ids, a copy. */
  public long[] tokens() {
    return tokens.clone();
  }

  public String stopReason() {
    return stopReason;
  }

  public long promptTokens() {
    return promptTokens;
  }

  public double prefillSeconds() {
    return prefillSeconds;
  }

  /** The time of the calls that produced tokens 1.. (token 0 comes from the prefill). */
  public double decodeSeconds() {
    return decodeSeconds;
  }

  public double prefillTokensPerSecond() {
    return prefillSeconds > 0 ? promptTokens / prefillSeconds : 0;
  }

  public double decodeTokensPerSecond() {
    return decodeSeconds > 0 ? Math.max(tokens.length - 1, 0) / decodeSeconds : 0;
  }
}
