package org.liteexport;

import android.content.Context;
import android.content.res.AssetFileDescriptor;
import android.content.res.AssetManager;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * Loads bundles shipped in an app's assets, with no copying to a file (Android only: this class
 * is compiled by the library's Gradle build, not on a desktop JVM):
 *
 * <pre>{@code
 * try (Module module = AndroidModules.load(context, "model.ptl")) { ... }
 * }</pre>
 *
 * <p>An asset stored uncompressed in the APK (the app sets {@code androidResources { noCompress
 * += "ptl" }}) is opened with {@link AssetManager#openFd}: the APK's descriptor, the asset's
 * offset and length go to {@link Module#load(int, long, long, LoadOptions)}, which memory-maps
 * that range of the APK in place (or reads it, when its offset is not 16-byte aligned). A
 * compressed asset cannot be mapped: it is read through its stream into a direct buffer and
 * loaded from there ({@link Module#load(ByteBuffer, LoadOptions)}), costing its size in memory.
 *
 * <p>(PyTorch Android's {@code Module.load} takes a path only; this is the counterpart of its
 * asset helper. It is a class of its own because {@link Module} also compiles and runs on a
 * desktop JVM, where {@code android.content.Context} does not exist.)
 */
public final class AndroidModules {
  private AndroidModules() {}

  /** {@link #load(AssetManager, String, LoadOptions)} with the context's assets and the default options. */
  public static Module load(Context context, String assetName) {
    return load(context.getAssets(), assetName, new LoadOptions());
  }

  /** {@link #load(AssetManager, String, LoadOptions)} with the context's assets. */
  public static Module load(Context context, String assetName, LoadOptions options) {
    return load(context.getAssets(), assetName, options);
  }

  /**
   * Loads the asset {@code assetName} (a path inside {@code assets/}, e.g. {@code
   * "models/tiny_cnn.ptl"}) as described in the class comment.
   *
   * @throws FormatException if there is no such asset, it cannot be read, or it is not a valid
   *     bundle
   */
  public static Module load(AssetManager assets, String assetName, LoadOptions options) {
    if (assets == null || assetName == null || options == null) {
      throw new NullPointerException("AndroidModules.load: assets, assetName and options must not be null");
    }
    AssetFileDescriptor afd;
    try {
      afd = assets.openFd(assetName);
    } catch (FileNotFoundException compressedOrMissing) {
      // openFd throws this both for a compressed asset and for a missing one; the stream tells
      // them apart (it opens a compressed asset and fails on a missing one)
      return loadFromStream(assets, assetName, options);
    } catch (IOException e) {
      throw new FormatException("cannot open asset " + assetName + ": " + e);
    }
    try {
      // getParcelFileDescriptor().getFd(): the APK's descriptor, owned by afd (closed below:
      // the native load maps or reads what it needs before returning)
      return Module.load(afd.getParcelFileDescriptor().getFd(), afd.getStartOffset(), afd.getLength(), options);
    } finally {
      try {
        afd.close();
      } catch (IOException ignored) {
        // closing a read-only descriptor: nothing was written that could be lost
      }
    }
  }

  private static Module loadFromStream(AssetManager assets, String assetName, LoadOptions options) {
    try (InputStream in = assets.open(assetName)) {
      ByteBuffer buffer = ByteBuffer.allocateDirect(Math.max(in.available(), 64 * 1024));
      byte[] chunk = new byte[64 * 1024];
      int n;
      while ((n = in.read(chunk)) > 0) {
        if (buffer.remaining() < n) {  // available() is only a hint: grow by doubling
          ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(2 * buffer.capacity(), buffer.position() + n));
          buffer.flip();
          bigger.put(buffer);
          buffer = bigger;
        }
        buffer.put(chunk, 0, n);
      }
      buffer.flip();
      return Module.load(buffer, options);
    } catch (FileNotFoundException e) {
      throw new FormatException("no asset " + assetName + " in the APK (assets are named relative to assets/, e.g. "
          + "\"model.ptl\")");
    } catch (IOException e) {
      throw new FormatException("cannot read asset " + assetName + ": " + e);
    }
  }
}
