# Defines liteexport::xnnpack: XNNPACK's operator API (xnnpack.h) and pthreadpool (pthreadpool.h),
# built from source for every target (host, the sanitizer build, the aarch64/armv7 cross builds and
# the Android NDK) at one pinned version (below).
#
# Why from source everywhere: the int8 kernels this CPU family needs (AVX512-VNNI, AVX-VNNI, ARM
# dot product / i8mm) are not in Debian bookworm's libxnnpack-dev (a 2022-02 snapshot), and Debian
# trixie's package of the 2024 snapshot needs glibc 2.38; built here, the same sources serve every
# ABI, and the NDK build's pins are the ones every test run exercises.
#
# XNNPACK built from source: Debian trixie's snapshot (0.0~git20241108.4ea82e5, the one its
# libxnnpack-dev ships) and the dependencies XNNPACK's own CMake adds from *_SOURCE_DIR, each
# fetched at configure time as Debian's original source archive, pinned by URL and SHA-256. The
# hashes are those of Debian's signed Sources indexes (android_sample/README.md, "What the build
# fetches"); a wrong one fails the configure.
# Offline: -DFETCHCONTENT_SOURCE_DIR_<NAME>=<unpacked archive> per dependency.
enable_language(C)  # XNNPACK, pthreadpool and cpuinfo are C, with assembly microkernels on ARM
enable_language(ASM)
include(FetchContent)
if(POLICY CMP0135)
  cmake_policy(SET CMP0135 NEW)
endif()
set(_liteexport_pool "https://deb.debian.org/debian/pool/main")
FetchContent_Declare(liteexport_xnnpack
  URL "${_liteexport_pool}/x/xnnpack/xnnpack_0.0%7Egit20241108.4ea82e5.orig.tar.xz"
  URL_HASH SHA256=90bde2caef0f880f627bab0dc805a86c4b8070cd98e3243db3046ab3f3be1a99)
FetchContent_Declare(liteexport_pthreadpool
  URL "${_liteexport_pool}/p/pthreadpool/pthreadpool_0.0%7Egit20240616.560c60d.orig.tar.xz"
  URL_HASH SHA256=4cc3cbd933b28131d2a34edc54f76af9fb41bc490af5eae1a5bd3cd07ea90708)
# cpuinfo: the snapshot of Debian's pool (trixie's 2025-03 archive has left it); XNNPACK 4ea82e5
# needs one from 2023-11 or later
FetchContent_Declare(liteexport_cpuinfo
  URL "${_liteexport_pool}/c/cpuinfo/cpuinfo_0.0%7Egit20250905.877328f.orig.tar.xz"
  URL_HASH SHA256=557ca404a3836b9f335a3a06b65ff9fe9dbaaefab7fb5c0185f53d9f33615a10)
FetchContent_Declare(liteexport_fxdiv
  URL "${_liteexport_pool}/f/fxdiv/fxdiv_0.0%7Egit20200417.b408327.orig.tar.xz"
  URL_HASH SHA256=7953482badaf4cb34026c3487c257b8e4ab2df061c019bd6fabbbc12ad52c44b)
# sources only: XNNPACK's CMake adds each from its *_SOURCE_DIR
FetchContent_Populate(liteexport_pthreadpool)
FetchContent_Populate(liteexport_cpuinfo)
FetchContent_Populate(liteexport_fxdiv)
FetchContent_Populate(liteexport_xnnpack)
set(PTHREADPOOL_SOURCE_DIR "${liteexport_pthreadpool_SOURCE_DIR}" CACHE PATH "" FORCE)
set(CPUINFO_SOURCE_DIR "${liteexport_cpuinfo_SOURCE_DIR}" CACHE PATH "" FORCE)
set(FXDIV_SOURCE_DIR "${liteexport_fxdiv_SOURCE_DIR}" CACHE PATH "" FORCE)
set(XNNPACK_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(XNNPACK_BUILD_BENCHMARKS OFF CACHE BOOL "" FORCE)
set(XNNPACK_BUILD_ALL_MICROKERNELS OFF CACHE BOOL "" FORCE)  # the ones its operators pick, not every variant
set(XNNPACK_ENABLE_KLEIDIAI OFF CACHE BOOL "" FORCE)  # Arm's KleidiAI would be one more fetch
set(XNNPACK_LIBRARY_TYPE static CACHE STRING "" FORCE)  # linked into libliteexport_jni.so
set(CPUINFO_BUILD_TOOLS OFF CACHE BOOL "" FORCE)
set(CPUINFO_BUILD_UNIT_TESTS OFF CACHE BOOL "" FORCE)
set(CPUINFO_BUILD_MOCK_TESTS OFF CACHE BOOL "" FORCE)
set(CPUINFO_BUILD_BENCHMARKS OFF CACHE BOOL "" FORCE)
set(PTHREADPOOL_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(PTHREADPOOL_BUILD_BENCHMARKS OFF CACHE BOOL "" FORCE)
add_subdirectory("${liteexport_xnnpack_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/xnnpack" EXCLUDE_FROM_ALL)
add_library(liteexport_xnnpack INTERFACE)
target_include_directories(liteexport_xnnpack INTERFACE "${liteexport_xnnpack_SOURCE_DIR}/include"
                           "${liteexport_pthreadpool_SOURCE_DIR}/include")
target_link_libraries(liteexport_xnnpack INTERFACE XNNPACK pthreadpool)
add_library(liteexport::xnnpack ALIAS liteexport_xnnpack)
message(STATUS "XNNPACK: built from ${liteexport_xnnpack_SOURCE_DIR} (Debian's 4ea82e5 source)")
