package org.liteexport.sample;

import android.app.Activity;
import android.os.Bundle;
import android.os.SystemClock;
import android.widget.Button;
import android.widget.TextView;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.liteexport.Module;
import org.liteexport.Tensor;

/**
 * Loads the TinyCNN bundle shipped in the assets, runs it on a sample image and shows the
 * outputs, the load time and the inference time.
 */
public class MainActivity extends Activity {
  private static final String BUNDLE_ASSET = "tiny_cnn.ptl";  // written by scripts/export_example.sh
  private static final long[] INPUT_SHAPE = {1, 3, 32, 32};   // TinyCNN: one 32x32 RGB image
  private static final int TIMED_RUNS = 50;                   // for the steady-state average

  // Loading and inference run off the UI thread: a bigger model would otherwise freeze the screen.
  private final ExecutorService worker = Executors.newSingleThreadExecutor();
  private TextView report;
  private Button runButton;

  @Override
  protected void onCreate(Bundle savedInstanceState) {
    super.onCreate(savedInstanceState);
    setContentView(R.layout.activity_main);
    report = findViewById(R.id.report);
    runButton = findViewById(R.id.run_button);
    runButton.setOnClickListener(v -> runDemo());
    runDemo();
  }

  @Override
  protected void onDestroy() {
    worker.shutdownNow();
    super.onDestroy();
  }

  private void runDemo() {
    runButton.setEnabled(false);
    report.setText(R.string.running);
    worker.execute(() -> {
      String text;
      try {
        text = demo();
      } catch (Throwable e) {
        // Anything, not only the API's exceptions: an UnsatisfiedLinkError (no library for this
        // ABI), an OutOfMemoryError on a big model... is shown on screen instead of killing the app.
        text = getString(R.string.error, ErrorReport.describe(e));
      }
      final String result = text;
      runOnUiThread(() -> {
        if (!isDestroyed()) {
          report.setText(result);
          runButton.setEnabled(true);
        }
      });
    });
  }

  /** Runs the whole demo on the worker thread; returns the report to show. */
  private String demo() throws IOException {
    File bundle = copyAssetToFiles(BUNDLE_ASSET);
    StringBuilder out = new StringBuilder();

    long start = SystemClock.elapsedRealtimeNanos();
    try (Module module = Module.load(bundle.getPath())) {
      long loadNanos = SystemClock.elapsedRealtimeNanos() - start;
      Tensor input = Tensor.fromBlob(sampleImage(), INPUT_SHAPE);

      start = SystemClock.elapsedRealtimeNanos();
      Tensor[] outputs = module.forward(input);
      long firstNanos = SystemClock.elapsedRealtimeNanos() - start;

      start = SystemClock.elapsedRealtimeNanos();
      for (int i = 0; i < TIMED_RUNS; i++) {
        module.forward(input);
      }
      long averageNanos = (SystemClock.elapsedRealtimeNanos() - start) / TIMED_RUNS;

      out.append("bundle: ").append(BUNDLE_ASSET).append(" (").append(bundle.length()).append(" bytes)\n");
      out.append("methods: ").append(Arrays.toString(module.methodNames())).append('\n');
      out.append("input: ").append(input).append('\n');
      out.append(String.format(Locale.US, "load time: %.2f ms%n", loadNanos / 1e6));
      out.append(String.format(Locale.US, "first inference: %.2f ms%n", firstNanos / 1e6));
      out.append(String.format(Locale.US, "inference (mean of %d): %.3f ms%n%n", TIMED_RUNS, averageNanos / 1e6));
      for (int i = 0; i < outputs.length; i++) {
        appendOutput(out, i, outputs[i]);
      }
    }
    return out.toString();
  }

  private static void appendOutput(StringBuilder out, int index, Tensor tensor) {
    float[] values = tensor.getDataAsFloatArray();
    out.append("output ").append(index).append(": ").append(tensor).append('\n');
    int best = 0;
    for (int i = 0; i < values.length; i++) {
      out.append(String.format(Locale.US, "  [%d] %+.5f%n", i, values[i]));
      if (values[i] > values[best]) {
        best = i;
      }
    }
    if (values.length > 0) {
      out.append("top class: ").append(best).append('\n');
    }
  }

  /** A deterministic stand-in for a camera frame: the same seeded noise on every run. */
  private static float[] sampleImage() {
    Random random = new Random(0);
    float[] pixels = new float[(int) Tensor.numel(INPUT_SHAPE)];
    for (int i = 0; i < pixels.length; i++) {
      pixels[i] = (float) random.nextGaussian();
    }
    return pixels;
  }

  /**
   * Module.load takes a file path (the runtime memory-maps it), and assets are not files:
   * copy the bundle to the app's files dir. Copied every time, so an app update that ships a
   * new bundle is picked up; written to a temporary file and renamed, so a crash mid-copy never
   * leaves a truncated bundle behind.
   */
  private File copyAssetToFiles(String name) throws IOException {
    File target = new File(getFilesDir(), name);
    File temp = new File(getFilesDir(), name + ".tmp");
    try (InputStream in = getAssets().open(name); OutputStream os = new FileOutputStream(temp)) {
      byte[] buffer = new byte[64 * 1024];
      int n;
      while ((n = in.read(buffer)) > 0) {
        os.write(buffer, 0, n);
      }
    }
    if (!temp.renameTo(target)) {
      throw new IOException("cannot rename " + temp + " to " + target);
    }
    return target;
  }
}
