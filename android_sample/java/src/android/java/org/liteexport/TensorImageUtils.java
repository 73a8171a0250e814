package org.liteexport;

import android.graphics.Bitmap;

/**
 * Bitmap to float32 image tensor, as PyTorch Android's {@code TensorImageUtils} (Android only):
 *
 * <pre>{@code
 * Tensor input = TensorImageUtils.bitmapToFloat32Tensor(bitmap,
 *     ImageNormalization.TORCHVISION_NORM_MEAN_RGB, ImageNormalization.TORCHVISION_NORM_STD_RGB);
 * }</pre>
 *
 * <p>The result has shape {@code [1, 3, height, width]} (NCHW), each channel value {@code v}
 * becoming {@code (v / 255 - mean[c]) / std[c]}; alpha is ignored. The arithmetic is {@link
 * ImageNormalization#fromArgb}, which the host tests check; this class only reads the pixels.
 * Resize the bitmap to the model's input size first ({@code Bitmap.createScaledBitmap}).
 */
public final class TensorImageUtils {
  private TensorImageUtils() {}

  /** The whole bitmap. */
  public static Tensor bitmapToFloat32Tensor(Bitmap bitmap, float[] mean, float[] std) {
    if (bitmap == null) {
      throw new NullPointerException("bitmapToFloat32Tensor: bitmap must not be null");
    }
    return bitmapToFloat32Tensor(bitmap, 0, 0, bitmap.getWidth(), bitmap.getHeight(), mean, std);
  }

  /**
   * The {@code width x height} rectangle of the bitmap whose top-left pixel is {@code (x, y)}: a
   * center crop, for instance.
   *
   * @throws IllegalArgumentException if the rectangle is empty or not inside the bitmap, or mean
   *     and std are not 3 values each (std nonzero)
   */
  public static Tensor bitmapToFloat32Tensor(Bitmap bitmap, int x, int y, int width, int height, float[] mean,
      float[] std) {
    if (bitmap == null) {
      throw new NullPointerException("bitmapToFloat32Tensor: bitmap must not be null");
    }
    if (width <= 0 || height <= 0 || x < 0 || y < 0 || x > bitmap.getWidth() - width
        || y > bitmap.getHeight() - height) {
      throw new IllegalArgumentException("bitmapToFloat32Tensor: the " + width + "x" + height + " rectangle at (" + x
          + ", " + y + ") is not inside the " + bitmap.getWidth() + "x" + bitmap.getHeight() + " bitmap");
    }
    int[] pixels = new int[width * height];
    bitmap.getPixels(pixels, 0, width, x, y, width, height);  // ARGB, row by row
    return ImageNormalization.toTensor(pixels, width, height, mean, std);
  }
}
