// Top-level build file: declares the plugin version once; modules apply it.
plugins {
    id("com.android.application") version "8.7.3" apply false
}
