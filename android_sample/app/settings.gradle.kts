// liteexport Android sample: one app module; the Java API and the JNI bridge live outside this
// project root (../java, ../jni) and are pulled in by app/build.gradle.kts.
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
include(":app")
