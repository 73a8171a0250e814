// The sample app. Besides its own sources it builds:
//  - the org.liteexport Java API, straight from android_sample/java/src/main/java (one copy of
//    the sources, shared with the host tests);
//  - libliteexport_jni.so (JNI bridge + native core) from android_sample/jni/CMakeLists.txt.
plugins {
    id("com.android.application")
}

android {
    namespace = "org.liteexport.sample"
    compileSdk = 35
    ndkVersion = "27.0.12077973"  // NDK r27 (LTS), the default of AGP 8.7

    defaultConfig {
        applicationId = "org.liteexport.sample"
        minSdk = 24
        targetSdk = 35
        versionCode = 1
        versionName = "1.0"

        ndk {
            // 64-bit and 32-bit ARM phones (minSdk 24 still covers armeabi-v7a-only devices)
            // and the x86_64 emulator. The native core is tested on all three architectures:
            // aarch64 and armv7 cross-built and run under qemu-user (tests/android), x86-64 natively.
            abiFilters += listOf("arm64-v8a", "armeabi-v7a", "x86_64")
        }
        externalNativeBuild {
            cmake {
                // Only the JNI library (and the core it links); not the core's tests and tools.
                targets += "liteexport_jni"
                // The core is linked statically into the one .so, so the static C++ runtime is safe.
                // No FLATBUFFERS_INCLUDE_DIR: CMake fetches the flatbuffers headers at configure time,
                // pinned by URL and SHA-256 (native/CMakeLists.txt; README.md "What the build fetches").
                arguments += listOf("-DANDROID_STL=c++_static")
                // The bridge catches the core's liteexport::Error by type: both need to be on.
                cppFlags += listOf("-fexceptions", "-frtti")
            }
        }
    }

    externalNativeBuild {
        cmake {
            path = file("../../jni/CMakeLists.txt")
            version = "3.22.1"
        }
    }

    sourceSets {
        getByName("main") {
            java.srcDir("../../java/src/main/java")
        }
    }

    buildTypes {
        release {
            isMinifyEnabled = false
            // Kept for whoever turns minification on: JNI finds org.liteexport members by name.
            proguardFiles(getDefaultProguardFile("proguard-android-optimize.txt"), "proguard-rules.pro")
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_11
        targetCompatibility = JavaVersion.VERSION_11
    }

    androidResources {
        // Bundles are memory-mapped after being copied out; storing them uncompressed in the
        // APK keeps the copy a plain read.
        noCompress += "ptl"
    }
}
