package org.liteexport;

/**
 * Sees each token {@link LlmModule#generate} produces, as it comes (on the generating thread). To
 * end the generation early, call {@link LlmModule#stop()} (from here or another thread): the
 * generation then ends after this token with stop reason {@code "stopped"}. An exception thrown
 * here ends the generation too, and {@code generate} throws it.
 */
public interface TokenCallback {
  void onToken(long tokenId);
}
