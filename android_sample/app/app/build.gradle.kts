// The sample app: one activity that loads the bundle shipped in its assets with the liteexport
// library (the :liteexport module of this project: the Java API and libliteexport_jni.so) and
// runs it. The app itself builds no native code and compiles only its own sources.
plugins {
    id("com.android.application")
}

android {
    namespace = "org.liteexport.sample"
    compileSdk = 35

    defaultConfig {
        applicationId = "org.liteexport.sample"
        minSdk = 24
        targetSdk = 35
        versionCode = 1
        versionName = "1.0"
    }

    buildTypes {
        release {
            isMinifyEnabled = false
            // Kept for whoever turns minification on; the library's own keep rules (JNI looks its
            // classes up by name) come with it (consumer-rules.pro).
            proguardFiles(getDefaultProguardFile("proguard-android-optimize.txt"), "proguard-rules.pro")
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_11
        targetCompatibility = JavaVersion.VERSION_11
    }

    androidResources {
        // Bundles stored uncompressed in the APK: AndroidModules.load maps them in place through
        // AssetManager.openFd. A compressed one still loads, read into memory through a stream.
        noCompress += "ptl"
    }
}

dependencies {
    implementation(project(":liteexport"))
}
