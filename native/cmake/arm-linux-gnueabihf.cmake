# Cross-build the native core for 32-bit ARM with Debian's g++-arm-linux-gnueabihf, as
# Android's armeabi-v7a ABI is: ARMv7-A with NEON (the NDK's default since r21), Thumb-2.
# ctest runs the test binaries under qemu-user (package qemu-user). Used by cross_tests.sh.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
# _FILE_OFFSET_BITS=64: 64-bit file offsets and directory cookies (readdir, mmap of big bundles),
# as bionic has; 32-bit glibc's readdir otherwise fails with EOVERFLOW on a 64-bit host's
# filesystem under qemu-arm.
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon -mthumb -D_FILE_OFFSET_BITS=64")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon -mthumb -D_FILE_OFFSET_BITS=64")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
