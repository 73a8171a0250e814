# Defines liteexport::xnnpack: XNNPACK's operator API (xnnpack.h) and pthreadpool (pthreadpool.h).
#
# Host and the Debian cross builds (aarch64, armv7: cmake/*-linux-gnu.cmake, their CMAKE_FIND_ROOT_PATH)
# use Debian's packages libxnnpack-dev and libpthreadpool-dev (XNNPACK snapshot 0.0~git20220216.ae108ef,
# pthreadpool 1787867; .ci/run installs them, the ARM ones as libxnnpack-dev:arm64/:armhf).
# LITEEXPORT_XNNPACK_FETCH=ON (the default under the Android NDK, where no such package exists)
# builds that same XNNPACK commit and its dependencies from source archives fetched at configure time,
# each pinned by URL and SHA-256 (android_sample/README.md, "What the build fetches").
if(ANDROID)
  set(_liteexport_fetch_default ON)
else()
  set(_liteexport_fetch_default OFF)
endif()
option(LITEEXPORT_XNNPACK_FETCH "Build XNNPACK ae108ef from its pinned source archive instead of finding an installed one"
       ${_liteexport_fetch_default})

# LITEEXPORT_XNNPACK_ROOT: a directory holding usr/include and usr/lib/<triplet> (the cross builds:
# Debian's packages of the target architecture unpacked by cross_xnnpack.sh); empty: the system's.
set(LITEEXPORT_XNNPACK_ROOT "" CACHE PATH "Unpacked Debian XNNPACK packages of the target (cross builds)")

if(NOT LITEEXPORT_XNNPACK_FETCH)
  if(LITEEXPORT_XNNPACK_ROOT)
    file(GLOB _liteexport_xnnpack_libdirs "${LITEEXPORT_XNNPACK_ROOT}/usr/lib/*")
    set(_liteexport_where HINTS "${LITEEXPORT_XNNPACK_ROOT}/usr/include" ${_liteexport_xnnpack_libdirs}
        NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  endif()
  find_path(LITEEXPORT_XNNPACK_INCLUDE xnnpack.h ${_liteexport_where})
  find_path(LITEEXPORT_PTHREADPOOL_INCLUDE pthreadpool.h ${_liteexport_where})
  find_library(LITEEXPORT_XNNPACK_LIBRARY NAMES XNNPACK xnnpack ${_liteexport_where})
  find_library(LITEEXPORT_PTHREADPOOL_LIBRARY NAMES pthreadpool ${_liteexport_where})
  if(NOT LITEEXPORT_XNNPACK_INCLUDE OR NOT LITEEXPORT_XNNPACK_LIBRARY OR NOT LITEEXPORT_PTHREADPOOL_INCLUDE
     OR NOT LITEEXPORT_PTHREADPOOL_LIBRARY)
    message(FATAL_ERROR "XNNPACK not found (xnnpack.h: ${LITEEXPORT_XNNPACK_INCLUDE}, library: ${LITEEXPORT_XNNPACK_LIBRARY}; "
                        "pthreadpool.h: ${LITEEXPORT_PTHREADPOOL_INCLUDE}, library: ${LITEEXPORT_PTHREADPOOL_LIBRARY}). "
                        "Install Debian's libxnnpack-dev libpthreadpool-dev (for a cross build the :arm64 / :armhf "
                        "packages), or configure with -DLITEEXPORT_XNNPACK_FETCH=ON")
  endif()
  add_library(liteexport_xnnpack INTERFACE)
  target_include_directories(liteexport_xnnpack INTERFACE "${LITEEXPORT_XNNPACK_INCLUDE}" "${LITEEXPORT_PTHREADPOOL_INCLUDE}")
  target_link_libraries(liteexport_xnnpack INTERFACE "${LITEEXPORT_XNNPACK_LIBRARY}" "${LITEEXPORT_PTHREADPOOL_LIBRARY}")
  if(LITEEXPORT_XNNPACK_ROOT)
    # libXNNPACK.so.0 needs libcpuinfo.so.0 from the same directory: found at link time through
    # -rpath-link, and under qemu through an RPATH (not RUNPATH: RPATH also serves a library's own
    # dependencies)
    get_filename_component(_liteexport_libdir "${LITEEXPORT_XNNPACK_LIBRARY}" DIRECTORY)
    target_link_options(liteexport_xnnpack INTERFACE "LINKER:-rpath-link,${_liteexport_libdir}"
                        "LINKER:-rpath,${_liteexport_libdir}" "LINKER:--disable-new-dtags")
  endif()
  add_library(liteexport::xnnpack ALIAS liteexport_xnnpack)
  message(STATUS "XNNPACK: ${LITEEXPORT_XNNPACK_LIBRARY}, pthreadpool: ${LITEEXPORT_PTHREADPOOL_LIBRARY}")
  return()
endif()

include("${CMAKE_CURRENT_LIST_DIR}/xnnpack_fetch.cmake")
