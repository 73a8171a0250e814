package org.liteexport.sample;

import android.app.Activity;
import android.graphics.Bitmap;
import android.graphics.Color;
import android.os.Bundle;
import android.os.SystemClock;
import android.widget.Button;
import android.widget.TextView;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.liteexport.AndroidModules;
import org.liteexport.ImageNormalization;
import org.liteexport.Module;
import org.liteexport.Tensor;
import org.liteexport.TensorImageUtils;

/**
 * Loads the TinyCNN bundle shipped in the assets (mapped in place inside the APK by
 * AndroidModules.load), runs it on a sample image and shows the outputs, named by the bundle's
 * labels.txt when it carries one, the load time and the inference time.
 */
public class MainActivity extends Activity {
  private static final String BUNDLE_ASSET = "tiny_cnn.ptl";  // written by scripts/export_example.sh
  private static final int IMAGE_SIZE = 32;                   // TinyCNN: one 32x32 RGB image
  private static final String LABELS_FILE = "labels.txt";     // liteexport export --extra-file labels.txt=...
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
  private String demo() {
    StringBuilder out = new StringBuilder();

    long start = SystemClock.elapsedRealtimeNanos();
    try (Module module = AndroidModules.load(this, BUNDLE_ASSET)) {
      long loadNanos = SystemClock.elapsedRealtimeNanos() - start;
      Tensor input = TensorImageUtils.bitmapToFloat32Tensor(sampleImage(),
          ImageNormalization.TORCHVISION_NORM_MEAN_RGB, ImageNormalization.TORCHVISION_NORM_STD_RGB);
      String[] labels = labels(module);

      start = SystemClock.elapsedRealtimeNanos();
      Tensor[] outputs = module.forward(input);
      long firstNanos = SystemClock.elapsedRealtimeNanos() - start;

      start = SystemClock.elapsedRealtimeNanos();
      for (int i = 0; i < TIMED_RUNS; i++) {
        module.forward(input);
      }
      long averageNanos = (SystemClock.elapsedRealtimeNanos() - start) / TIMED_RUNS;

      out.append("bundle: ").append(BUNDLE_ASSET).append(" (").append(module.path()).append(")\n");
      out.append("methods: ").append(Arrays.toString(module.methodNames())).append('\n');
      out.append("extra files: ").append(Arrays.toString(module.extraFileNames())).append('\n');
      out.append("input: ").append(input).append('\n');
      out.append(String.format(Locale.US, "load time: %.2f ms%n", loadNanos / 1e6));
      out.append(String.format(Locale.US, "first inference: %.2f ms%n", firstNanos / 1e6));
      out.append(String.format(Locale.US, "inference (mean of %d): %.3f ms%n%n", TIMED_RUNS, averageNanos / 1e6));
      for (int i = 0; i < outputs.length; i++) {
        appendOutput(out, i, outputs[i], labels);
      }
    }
    return out.toString();
  }

  /** The class names of the bundle's labels.txt (one a line), or null when it has none. */
  private static String[] labels(Module module) {
    byte[] file = module.extraFile(LABELS_FILE);
    return file == null ? null : new String(file, StandardCharsets.UTF_8).split("\n");
  }

  private static void appendOutput(StringBuilder out, int index, Tensor tensor, String[] labels) {
    float[] values = tensor.getDataAsFloatArray();
    out.append("output ").append(index).append(": ").append(tensor).append('\n');
    int best = 0;
    for (int i = 0; i < values.length; i++) {
      out.append(String.format(Locale.US, "  [%d] %+.5f %s%n", i, values[i], label(labels, i)));
      if (values[i] > values[best]) {
        best = i;
      }
    }
    if (values.length > 0) {
      out.append("top class: ").append(best).append(' ').append(label(labels, best)).append('\n');
    }
  }

  private static String label(String[] labels, int index) {
    return labels != null && index < labels.length ? labels[index] : "";
  }

  /**
   * A deterministic stand-in for a camera frame: the same seeded colors on every run, as a Bitmap
   * so that it goes through TensorImageUtils as a real photo would.
   */
  private static Bitmap sampleImage() {
    Random random = new Random(0);
    Bitmap bitmap = Bitmap.createBitmap(IMAGE_SIZE, IMAGE_SIZE, Bitmap.Config.ARGB_8888);
    for (int y = 0; y < IMAGE_SIZE; y++) {
      for (int x = 0; x < IMAGE_SIZE; x++) {
        bitmap.setPixel(x, y, Color.rgb(random.nextInt(256), random.nextInt(256), random.nextInt(256)));
      }
    }
    return bitmap;
  }
}
