package org.liteexport;

import static org.liteexport.TestRunner.check;
import static org.liteexport.TestRunner.expectThrows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Generation through {@link LlmModule}, against runtime_py's generator on the same tiny Hugging
 * Face Llama (make_host_test_vectors.py add_generation_bundle): the same ids (greedy, seeded
 * sampling), stop reasons and input errors; tokens streamed as they come; {@link LlmModule#stop()};
 * a callback's exception. Registered by {@link HostTests}.
 */
final class GenerationTests {
  private final Vectors vectors;
  private final Map<String, Path> bundles;

  GenerationTests(Vectors vectors, Map<String, Path> bundles) {
    this.vectors = vectors;
    this.bundles = bundles;
  }

  void register(TestRunner runner) {
    List<Vectors.Record> records = vectors.ofKind("generate");
    runner.add("generation: cases in the manifest", () -> check(records.size() >= 8, records.size() + " generate records"));
    int n = 0;
    for (Vectors.Record r : records) {
      runner.add("generate " + r.field(0) + " #" + n++ + " (" + r.field(9) + ")", () -> checkGenerate(r));
    }
    runner.add("generation: stop() from the callback", this::stopFromCallback);
    runner.add("generation: a callback's exception ends it", this::callbackThrows);
    runner.add("generation: a bundle that cannot generate", this::cannotGenerate);
  }

  private Module load(String bundleId) {
    Path path = bundles.get(bundleId);
    check(path != null, "no bundle " + bundleId + " in the manifest");
    return Module.load(path.toString());
  }

  private static long[] ids(String text) {
    return text.isEmpty() ? new long[0] : Arrays.stream(text.split(",")).mapToLong(Long::parseLong).toArray();
  }

  private static GenerationConfig config(Vectors.Record r) {
    GenerationConfig config = new GenerationConfig().maxNewTokens(Long.parseLong(r.field(2)))
        .temperature(Double.parseDouble(r.field(3))).topK(Long.parseLong(r.field(4)))
        .topP(Double.parseDouble(r.field(5))).seed(Long.parseUnsignedLong(r.field(6)));
    return r.field(7).equals("bundle") ? config : config.stopIds(ids(r.field(7)));
  }

  private void checkGenerate(Vectors.Record r) throws Exception {
    try (Module module = load(r.field(0)); LlmModule llm = new LlmModule(module)) {
      long[] prompt = ids(r.field(1));
      if (r.field(9).equals("InputError")) {
        InputException e = expectThrows(InputException.class, () -> llm.generate(prompt, config(r), null));
        String expected = vectors.text(r.field(8));
        check(expected.equals(e.getMessage()), "message " + e.getMessage() + ", runtime_py: " + expected);
        return;
      }
      List<Long> streamed = new ArrayList<>();
      GenerationResult result = llm.generate(prompt, config(r), streamed::add);
      long[] expected = ids(r.field(8));
      check(Arrays.equals(result.tokens(), expected),
          "tokens " + Arrays.toString(result.tokens()) + ", runtime_py: " + Arrays.toString(expected));
      check(result.stopReason().equals(r.field(9)), "stop reason " + result.stopReason() + ", runtime_py: " + r.field(9));
      check(streamed.size() == expected.length, streamed.size() + " tokens streamed, " + expected.length + " returned");
      for (int i = 0; i < expected.length; i++) {
        check(streamed.get(i) == expected[i], "streamed token " + i + " differs");
      }
      check(result.promptTokens() == prompt.length && result.prefillTokensPerSecond() > 0, "prefill speed missing");
      // a second generation starts from the initial state again: the same ids
      check(Arrays.equals(llm.generate(prompt, config(r)).tokens(), expected), "a second generate differs");
    }
  }

  private Vectors.Record firstGreedy() {
    for (Vectors.Record r : vectors.ofKind("generate")) {
      if (r.field(9).equals("max_new_tokens") && r.field(3).equals("0.0")) {
        return r;
      }
    }
    throw new AssertionError("no greedy generate record");
  }

  private void stopFromCallback() throws Exception {
    Vectors.Record r = firstGreedy();
    try (Module module = load(r.field(0)); LlmModule llm = new LlmModule(module)) {
      List<Long> seen = new ArrayList<>();
      GenerationResult result = llm.generate(ids(r.field(1)), config(r), token -> {
        seen.add(token);
        if (seen.size() == 3) {
          llm.stop();
        }
      });
      check(result.stopReason().equals("stopped") && result.tokens().length == 3,
          "stop after 3: " + result.stopReason() + " " + Arrays.toString(result.tokens()));
      check(Arrays.equals(result.tokens(), Arrays.copyOf(ids(r.field(8)), 3)), "the first 3 tokens differ");
      llm.stop();  // no generation running: the next one is not affected
      check(llm.generate(ids(r.field(1)), config(r)).stopReason().equals(r.field(9)), "a stop() leaked into the next");
    }
  }

  private void callbackThrows() throws Exception {
    Vectors.Record r = firstGreedy();
    try (Module module = load(r.field(0)); LlmModule llm = new LlmModule(module)) {
      IllegalStateException e = expectThrows(IllegalStateException.class,
          () -> llm.generate(ids(r.field(1)), config(r), token -> {
            throw new IllegalStateException("app says no");
          }));
      check(e.getMessage().equals("app says no"), e.getMessage());
      check(Arrays.equals(llm.generate(ids(r.field(1)), config(r)).tokens(), ids(r.field(8))), "not usable after");
    }
  }

  private void cannotGenerate() throws Exception {
    try (Module module = load("state_row_cache")) {
      InputException e = expectThrows(InputException.class, () -> new LlmModule(module));
      check(e.getMessage().contains("cannot generate: it has no liteexport/generation.json"), e.getMessage());
    }
    Module closed = load("gen_llama");
    LlmModule llm = new LlmModule(closed);
    llm.close();
    expectThrows(IllegalStateException.class, () -> llm.generate(new long[] {1}, new GenerationConfig()));
    closed.close();
  }
}
