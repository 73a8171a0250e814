// The liteexport Android library (AAR): the org.liteexport Java API and libliteexport_jni.so
// (JNI bridge + native core). An app in this project depends on it with
// implementation(project(":liteexport")); other apps take the AAR this module publishes
// (./gradlew :liteexport:publishToMavenLocal -> org.liteexport:liteexport-android:0.1.0).
//
// Its sources stay where the host tests and the rest of the repository use them, outside this
// project root: the Java API in android_sample/java/src/main/java (also compiled and tested on a
// desktop JVM by host_tests.sh), the Android-only classes (AndroidModules, TensorImageUtils) in
// android_sample/java/src/android/java, and the C++ in android_sample/jni + the repository's native/
// (the core, which jni/CMakeLists.txt adds).
plugins {
    id("com.android.library")
    id("maven-publish")
}

group = "org.liteexport"
version = "0.1.0"

android {
    namespace = "org.liteexport"
    compileSdk = 35
    ndkVersion = "27.0.12077973"  // NDK r27 (LTS), the default of AGP 8.7

    defaultConfig {
        minSdk = 24
        // Applied to every app that depends on the library: JNI finds these classes by name.
        consumerProguardFiles("consumer-rules.pro")

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
                // No FLATBUFFERS_INCLUDE_DIR: CMake fetches the flatbuffers headers and XNNPACK's
                // sources at configure time, pinned by URL and SHA-256 (native/CMakeLists.txt,
                // native/cmake/xnnpack.cmake; README.md "What the build fetches").
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
            java.srcDirs("../../java/src/main/java", "../../java/src/android/java")
        }
    }

    buildTypes {
        release {
            // A library is not minified itself; consumer-rules.pro travels with the AAR instead.
            isMinifyEnabled = false
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_11
        targetCompatibility = JavaVersion.VERSION_11
    }

    publishing {
        // The component publications use: the release AAR, with a sources jar next to it.
        singleVariant("release") {
            withSourcesJar()
        }
    }
}

// The "release" component exists only once AGP has configured the variants: hence afterEvaluate.
afterEvaluate {
    publishing {
        publications {
            create<MavenPublication>("release") {
                from(components["release"])
                groupId = "org.liteexport"
                artifactId = "liteexport-android"
                version = project.version.toString()
                pom {
                    name.set("liteexport Android runtime")
                    description.set(
                        "Loads and runs liteexport bundles (.ptl) on Android: the org.liteexport Java API " +
                            "and its native runtime core (arm64-v8a, armeabi-v7a, x86_64)."
                    )
                }
            }
        }
    }
}
