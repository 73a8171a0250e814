package org.liteexport;

/**
 * Pixels to a normalized float32 image tensor: the arithmetic of PyTorch Android's {@code
 * TensorImageUtils.bitmapToFloat32Tensor}, kept free of Android classes so that it compiles and
 * is tested on a desktop JVM. {@code TensorImageUtils} (Android only) reads a Bitmap's pixels and
 * calls this.
 *
 * <p>Each channel value {@code v} (0..255) becomes {@code (v / 255 - mean[c]) / std[c]}, laid out
 * NCHW: all red values row by row, then green, then blue (torchvision's ToTensor + Normalize).
 */
public final class ImageNormalization {
  /** torchvision's ImageNet mean, RGB: what most torchvision classifiers were trained with. */
  public static final float[] TORCHVISION_NORM_MEAN_RGB = {0.485f, 0.456f, 0.406f};

  /** torchvision's ImageNet standard deviation, RGB. */
  public static final float[] TORCHVISION_NORM_STD_RGB = {0.229f, 0.224f, 0.225f};

  private ImageNormalization() {}

  /**
   * Normalizes {@code width * height} ARGB pixels (as {@code Bitmap.getPixels} gives them, row by
   * row; alpha is ignored) into a float array of shape {@code [3, height, width]}.
   *
   * @throws IllegalArgumentException if the sizes do not match, mean or std does not hold 3
   *     values, or a std is 0 or not finite
   */
  public static float[] fromArgb(int[] pixels, int width, int height, float[] mean, float[] std) {
    if (pixels == null || mean == null || std == null) {
      throw new NullPointerException("ImageNormalization.fromArgb: pixels, mean and std must not be null");
    }
    if (width <= 0 || height <= 0 || (long) width * height != pixels.length) {
      throw new IllegalArgumentException("ImageNormalization.fromArgb: " + pixels.length + " pixels for a "
          + width + "x" + height + " image");
    }
    if (mean.length != 3 || std.length != 3) {
      throw new IllegalArgumentException("ImageNormalization.fromArgb: mean and std need 3 values (R, G, B), got "
          + mean.length + " and " + std.length);
    }
    for (float s : std) {
      if (s == 0 || Float.isNaN(s) || Float.isInfinite(s)) {
        throw new IllegalArgumentException("ImageNormalization.fromArgb: std must be finite and nonzero, got " + s);
      }
    }
    int plane = pixels.length;
    float[] out = new float[3 * plane];
    for (int i = 0; i < plane; i++) {
      int p = pixels[i];
      out[i] = (((p >> 16) & 0xFF) / 255.0f - mean[0]) / std[0];
      out[plane + i] = (((p >> 8) & 0xFF) / 255.0f - mean[1]) / std[1];
      out[2 * plane + i] = ((p & 0xFF) / 255.0f - mean[2]) / std[2];
    }
    return out;
  }

  /** {@link #fromArgb} as a float32 tensor of shape {@code [1, 3, height, width]}: one image, batched. */
  public static Tensor toTensor(int[] pixels, int width, int height, float[] mean, float[] std) {
    float[] values = fromArgb(pixels, width, height, mean, std);
    return Tensor.fromBlob(values, new long[] {1, 3, height, width});
  }
}
