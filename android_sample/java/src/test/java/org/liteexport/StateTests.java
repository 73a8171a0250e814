package org.liteexport;

import static org.liteexport.TestRunner.check;
import static org.liteexport.TestRunner.expectThrows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Program state (issue 34) through the Java API: a bundle's state tensors listed as runtime_py has
 * them, and runtime_py's sequence of calls on one loaded module (state carried from call to call,
 * a refused cache position, a call failing part-way, {@link Module#resetState()}) replayed on one
 * {@link Module}: every output, error and state equal to runtime_py's (make_host_test_vectors.py
 * add_state_bundles). Registered by {@link HostTests}.
 */
final class StateTests {
  private final Vectors vectors;
  private final Map<String, Path> bundles;

  StateTests(Vectors vectors, Map<String, Path> bundles) {
    this.vectors = vectors;
    this.bundles = bundles;
  }

  void register(TestRunner runner) {
    Map<String, List<Vectors.Record>> steps = new LinkedHashMap<>();
    for (Vectors.Record r : vectors.ofKind("state_step")) {
      steps.computeIfAbsent(r.field(0), k -> new ArrayList<>()).add(r);
    }
    Map<String, List<Vectors.Record>> infos = new LinkedHashMap<>();
    for (Vectors.Record r : vectors.ofKind("state_info")) {
      infos.computeIfAbsent(r.field(0), k -> new ArrayList<>()).add(r);
    }
    runner.add("state: bundles in the manifest", () -> check(steps.size() == 2 && infos.size() == 2,
        "state records of " + steps.keySet() + " and " + infos.keySet()));
    for (Map.Entry<String, List<Vectors.Record>> e : infos.entrySet()) {
      runner.add("state listed " + e.getKey(), () -> checkListed(e.getKey(), e.getValue()));
    }
    for (Map.Entry<String, List<Vectors.Record>> e : steps.entrySet()) {
      runner.add("state sequence " + e.getKey(), () -> checkSequence(e.getKey(), e.getValue()));
    }
    runner.add("state: separate per loaded module", this::separateModules);
  }

  private Module load(String bundleId) {
    Path path = bundles.get(bundleId);
    check(path != null, "no bundle " + bundleId + " in the manifest");
    return Module.load(path.toString());
  }

  private void checkListed(String bundleId, List<Vectors.Record> expected) {
    try (Module module = load(bundleId)) {
      StateInfo[] states = module.states();
      check(states.length == expected.size(), states.length + " states, runtime_py: " + expected.size());
      for (int i = 0; i < states.length; i++) {
        Vectors.Record r = expected.get(i);
        StateInfo s = states[i];
        String shape = r.field(3);
        long[] dims = shape.isEmpty() ? new long[0] : Arrays.stream(shape.split(",")).mapToLong(Long::parseLong).toArray();
        check(s.name().equals(r.field(1)) && s.dtype().toString().equals(r.field(2)) && Arrays.equals(s.shape(), dims)
            && s.bytes() == Long.parseLong(r.field(4)), "state " + s + ", runtime_py: " + r.field(1) + " " + r.field(2)
            + " [" + shape + "] (" + r.field(4) + " bytes)");
        check(module.stateNames()[i].equals(s.name()), "stateNames() differs from states()");
      }
      check(module.state("no such state") == null, "a state that does not exist is not null");
    }
  }

  private void checkSequence(String bundleId, List<Vectors.Record> steps) throws Exception {
    int errors = 0;
    int resets = 0;
    try (Module module = load(bundleId)) {
      for (Vectors.Record r : steps) {
        String what = bundleId + " step " + r.field(1);
        switch (r.field(2)) {
          case "call": {
            Tensor[] got = module.runMethod(r.field(3), vectors.tensors(r.field(4)));
            Tensor[] expected = vectors.tensors(r.field(5));
            check(got.length == expected.length, what + ": " + got.length + " outputs, runtime_py: " + expected.length);
            for (int i = 0; i < got.length; i++) {
              HostTests.assertClose(got[i], expected[i], what + " output " + i);
            }
            break;
          }
          case "error": {
            Tensor[] inputs = vectors.tensors(r.field(4));
            InputException e = expectThrows(InputException.class, () -> module.runMethod(r.field(3), inputs));
            HostTests.checkStructured(e, r.field(5), r.field(6));
            errors++;
            break;
          }
          case "reset":
            module.resetState();
            resets++;
            break;
          case "state": {
            Tensor got = module.state(r.field(3));
            check(got != null, what + ": no state " + r.field(3));
            HostTests.assertClose(got, vectors.tensors(r.field(4))[0], what + " state " + r.field(3));
            break;
          }
          default:
            throw new AssertionError("unknown step " + r.field(2));
        }
      }
    }
    check(errors > 0 && resets > 0, bundleId + ": the sequence has " + errors + " refused calls and " + resets + " resets");
  }

  private void separateModules() throws Exception {
    // the first call of the row cache sequence, run on one module only: the other does not see it
    Vectors.Record first = null;
    for (Vectors.Record r : vectors.ofKind("state_step")) {
      if (first == null && r.field(0).equals("state_row_cache") && r.field(2).equals("call")) {
        first = r;
      }
    }
    check(first != null, "no call of state_row_cache");
    Tensor[] inputs = vectors.tensors(first.field(4));
    try (Module a = load("state_row_cache"); Module b = load("state_row_cache")) {
      Tensor fresh = a.runMethod("forward", inputs)[0];
      Tensor again = a.runMethod("forward", inputs)[0];
      check(!Arrays.equals(fresh.getDataAsFloatArray(), again.getDataAsFloatArray()), "the second call saw no state");
      check(Arrays.equals(b.runMethod("forward", inputs)[0].getDataAsFloatArray(), fresh.getDataAsFloatArray()),
          "another module saw the first one's state");
      check(b.state("calls").getDataAsLongArray()[0] == 1 && a.state("calls").getDataAsLongArray()[0] == 2,
          "call counters " + a.state("calls") + ", " + b.state("calls"));
      a.resetState();
      check(a.state("calls").getDataAsLongArray()[0] == 0, "resetState left calls at " + a.state("calls"));
      check(Arrays.equals(a.runMethod("forward", inputs)[0].getDataAsFloatArray(), fresh.getDataAsFloatArray()),
          "after resetState the call differs from the first");
    }
  }
}
