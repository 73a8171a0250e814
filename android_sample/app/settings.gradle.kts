// liteexport Android sample: the library module :liteexport (the Java API + the JNI library, an
// AAR; its sources live outside this project root, in ../java and ../jni and the core in the
// repository's native/, and are pulled in by liteexport/build.gradle.kts) and the app :app that
// depends on it.
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}

dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        google()
        mavenCentral()
    }
}

rootProject.name = "liteexport-sample"
include(":liteexport")
include(":app")
