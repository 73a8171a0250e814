// Top-level build file: declares the plugin versions once; modules apply them.
plugins {
    id("com.android.application") version "8.7.3" apply false
    id("com.android.library") version "8.7.3" apply false
}
