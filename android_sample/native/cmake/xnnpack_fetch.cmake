# XNNPACK built from source (LITEEXPORT_XNNPACK_FETCH, the default under the Android NDK): the
# snapshot Debian ships and the host builds use (ae108ef, 2022-02-16) and the dependencies XNNPACK's
# own CMake adds from *_SOURCE_DIR, each fetched at configure time as Debian's original source
# archive of that commit, pinned by URL and SHA-256. The hashes are those of Debian's signed .dsc
# files (android_sample/README.md, "What the build fetches"); a wrong one fails the configure.
# Offline: -DFETCHCONTENT_SOURCE_DIR_<NAME>=<unpacked archive> per dependency.
enable_language(C)  # XNNPACK, pthreadpool and cpuinfo are C, with assembly microkernels
enable_language(ASM)
include(FetchContent)
if(POLICY CMP0135)
  cmake_policy(SET CMP0135 NEW)
endif()
set(_liteexport_pool "https://deb.debian.org/debian/pool/main")
FetchContent_Declare(liteexport_xnnpack
  URL "${_liteexport_pool}/x/xnnpack/xnnpack_0.0%7Egit20220216.ae108ef.orig.tar.xz"
  URL_HASH SHA256=7d8880615b5fd30e99f9db021dc0f5431b063862a6aca8dfdaff272681a08669)
FetchContent_Declare(liteexport_pthreadpool
  URL "${_liteexport_pool}/p/pthreadpool/pthreadpool_0.0%7Egit20210507.1787867.orig.tar.xz"
  URL_HASH SHA256=b058b3c45883a6da53753e695488a7c677048cb000e8184701c2135bcebdbce5)
FetchContent_Declare(liteexport_cpuinfo
  URL "${_liteexport_pool}/c/cpuinfo/cpuinfo_0.0%7Egit20220617.082deff.orig.tar.xz"
  URL_HASH SHA256=be63afffc3e59724135fe6aa8562dffaf8842bedff2a07cec3a935350a3e7452)
FetchContent_Declare(liteexport_fp16
  URL "${_liteexport_pool}/f/fp16/fp16_0.0%7Egit20200514.4dfe081.orig.tar.xz"
  URL_HASH SHA256=7d7782b37b74136e0e12593a2a93ccbe7db831f4374cc408e44623d9b708b54e)
FetchContent_Declare(liteexport_fxdiv
  URL "${_liteexport_pool}/f/fxdiv/fxdiv_0.0%7Egit20200417.b408327.orig.tar.xz"
  URL_HASH SHA256=7953482badaf4cb34026c3487c257b8e4ab2df061c019bd6fabbbc12ad52c44b)
FetchContent_Declare(liteexport_psimd
  URL "${_liteexport_pool}/p/psimd/psimd_0.0%7Egit20200517.072586a.orig.tar.xz"
  URL_HASH SHA256=32bbce81289866e3419e36cab6541bbddb6d45d3db10a7dcd2598dc9d0c8c6f4)
# sources only: XNNPACK's CMake adds each from its *_SOURCE_DIR
FetchContent_Populate(liteexport_pthreadpool)
FetchContent_Populate(liteexport_cpuinfo)
FetchContent_Populate(liteexport_fp16)
FetchContent_Populate(liteexport_fxdiv)
FetchContent_Populate(liteexport_psimd)
FetchContent_Populate(liteexport_xnnpack)
set(PTHREADPOOL_SOURCE_DIR "${liteexport_pthreadpool_SOURCE_DIR}" CACHE PATH "" FORCE)
set(CPUINFO_SOURCE_DIR "${liteexport_cpuinfo_SOURCE_DIR}" CACHE PATH "" FORCE)
set(FP16_SOURCE_DIR "${liteexport_fp16_SOURCE_DIR}" CACHE PATH "" FORCE)
set(FXDIV_SOURCE_DIR "${liteexport_fxdiv_SOURCE_DIR}" CACHE PATH "" FORCE)
set(PSIMD_SOURCE_DIR "${liteexport_psimd_SOURCE_DIR}" CACHE PATH "" FORCE)
set(XNNPACK_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(XNNPACK_BUILD_BENCHMARKS OFF CACHE BOOL "" FORCE)
set(XNNPACK_LIBRARY_TYPE static CACHE STRING "" FORCE)  # linked into libliteexport_jni.so
set(CPUINFO_BUILD_TOOLS OFF CACHE BOOL "" FORCE)
set(CPUINFO_BUILD_UNIT_TESTS OFF CACHE BOOL "" FORCE)
set(CPUINFO_BUILD_MOCK_TESTS OFF CACHE BOOL "" FORCE)
set(CPUINFO_BUILD_BENCHMARKS OFF CACHE BOOL "" FORCE)
add_subdirectory("${liteexport_xnnpack_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/xnnpack" EXCLUDE_FROM_ALL)
add_library(liteexport_xnnpack INTERFACE)
target_include_directories(liteexport_xnnpack INTERFACE "${liteexport_xnnpack_SOURCE_DIR}/include"
                           "${liteexport_pthreadpool_SOURCE_DIR}/include")
target_link_libraries(liteexport_xnnpack INTERFACE XNNPACK pthreadpool)
add_library(liteexport::xnnpack ALIAS liteexport_xnnpack)
message(STATUS "XNNPACK: built from ${liteexport_xnnpack_SOURCE_DIR} (Debian's ae108ef source)")
