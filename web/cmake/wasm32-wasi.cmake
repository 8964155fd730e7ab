# Cross-compiling for WebAssembly with Debian's clang, lld (wasm-ld), wasi-libc and the
# wasm32 compiler-rt builtins (packages clang, lld, wasi-libc, libclang-rt-14-dev-wasm32).
set(CMAKE_SYSTEM_NAME Generic) # CMake 3.25 has no WASI platform; the target triple says it
set(CMAKE_SYSTEM_VERSION 1)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
set(triple wasm32-unknown-wasi)
find_program(CMAKE_C_COMPILER NAMES clang clang-14 REQUIRED)
set(CMAKE_C_COMPILER_TARGET ${triple})
set(CMAKE_SYSROOT /usr)
# Debian keeps wasi-libc's headers in /usr/include/wasm32-wasi and its libraries in
# /usr/lib/wasm32-wasi: clang's WASI driver finds them under the sysroot /usr.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_EXECUTABLE_SUFFIX ".wasm")
set(CMAKE_C_COMPILER_WORKS 1)
