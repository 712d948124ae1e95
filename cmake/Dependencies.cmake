# Every dependency of Kiln's planned stack, found the CMake way from Debian's
# packages (scripts/install_deps.sh installs them). Each failure says which
# package to install.

macro(kiln_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "Kiln needs ${what}: install the Debian package '${package}' "
                        "(or run scripts/install_deps.sh).")
  endif()
endmacro()

find_package(Threads REQUIRED)

find_package(fmt CONFIG QUIET)
kiln_require(fmt_FOUND "fmt" "libfmt-dev")
find_package(spdlog CONFIG QUIET)
kiln_require(spdlog_FOUND "spdlog" "libspdlog-dev")
find_package(nlohmann_json 3.10 CONFIG QUIET)
kiln_require(nlohmann_json_FOUND "nlohmann-json" "nlohmann-json3-dev")
# Abseil (a gRPC dependency already): InlinedVector keeps the short term
# lists of the arithmetic engine off the heap.
find_package(absl CONFIG QUIET)
kiln_require(absl_FOUND "Abseil" "libabsl-dev")
find_package(CLI11 CONFIG QUIET)
kiln_require(CLI11_FOUND "CLI11" "libcli11-dev")
find_package(GTest CONFIG QUIET)
kiln_require(GTest_FOUND "GoogleTest" "libgtest-dev")
find_package(SQLite3 QUIET)
kiln_require(SQLite3_FOUND "SQLite 3" "libsqlite3-dev")

# xxHash: a fixed, specified hash for structural hashes that never drift.
find_package(PkgConfig REQUIRED)
pkg_check_modules(XXHASH QUIET IMPORTED_TARGET libxxhash)
kiln_require(XXHASH_FOUND "xxHash" "libxxhash-dev")
add_library(kiln_xxhash INTERFACE)
target_link_libraries(kiln_xxhash INTERFACE PkgConfig::XXHASH)

# The farm: OpenSSL's libcrypto (SHA-256 and constant-time comparison of
# tokens, rpc/farm/auth_file.cc) and cpp-httplib (the /metrics endpoint).
find_package(OpenSSL QUIET)
kiln_require(OpenSSL_FOUND "OpenSSL" "libssl-dev")
pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
kiln_require(HTTPLIB_FOUND "cpp-httplib" "libcpp-httplib-dev")

# Protobuf ships no CMake config on Debian: module mode.
find_package(Protobuf 3.21 QUIET)
kiln_require(Protobuf_FOUND "Protobuf" "libprotobuf-dev protobuf-compiler")
find_package(gRPC 1.51 CONFIG QUIET)
kiln_require(gRPC_FOUND "gRPC" "libgrpc++-dev protobuf-compiler-grpc")

# xgboost's CMake config aborts unless the 'xgboost' CLI package is present;
# check for the file it wants first so the error is ours.
find_file(KILN_XGBOOST_CONFIG xgboost-config.cmake
          PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/xgboost /usr/lib/cmake/xgboost)
find_program(KILN_XGBOOST_CLI xgboost)
if(KILN_XGBOOST_CONFIG AND KILN_XGBOOST_CLI)
  find_package(xgboost 1.7 CONFIG REQUIRED)
else()
  pkg_check_modules(XGB QUIET IMPORTED_TARGET xgboost>=1.7)
  kiln_require(XGB_FOUND "XGBoost" "libxgboost-dev xgboost")
  add_library(xgboost::xgboost ALIAS PkgConfig::XGB)
endif()

# LLVM 16 exactly: Debian's LLVM 14 cannot target sm_90.
find_package(LLVM 16 CONFIG QUIET HINTS /usr/lib/llvm-16/lib/cmake/llvm)
kiln_require(LLVM_FOUND "LLVM 16" "llvm-16-dev")
add_library(kiln_llvm INTERFACE)
target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
separate_arguments(_kiln_llvm_defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(kiln_llvm INTERFACE ${_kiln_llvm_defs})
target_link_libraries(kiln_llvm INTERFACE LLVM)

# The CUDA Toolkit comes with the machine image, not from apt.
find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
  message(FATAL_ERROR "Kiln needs the CUDA Toolkit (NVRTC, nvJitLink, ptxas) to generate and "
                      "check GPU code; none was found. Install CUDA 12+ under /usr/local/cuda "
                      "or put its nvcc on PATH.")
endif()
find_library(KILN_NVJITLINK_LIB nvJitLink HINTS ${CUDAToolkit_LIBRARY_DIR})
kiln_require(KILN_NVJITLINK_LIB "nvJitLink" "the CUDA Toolkit")
# Link NVRTC by file: CUDA::nvrtc drags in the libcuda stub.
get_target_property(KILN_NVRTC_LIB CUDA::nvrtc IMPORTED_LOCATION)
find_program(KILN_PTXAS ptxas HINTS ${CUDAToolkit_BIN_DIR})
kiln_require(KILN_PTXAS "ptxas" "the CUDA Toolkit")
add_library(kiln_cuda INTERFACE)
target_link_libraries(kiln_cuda INTERFACE ${KILN_NVRTC_LIB} ${KILN_NVJITLINK_LIB} ${CMAKE_DL_LIBS})
target_include_directories(kiln_cuda INTERFACE ${CUDAToolkit_INCLUDE_DIRS})

message(STATUS "Kiln: LLVM ${LLVM_PACKAGE_VERSION}, CUDA ${CUDAToolkit_VERSION}, "
               "gRPC ${gRPC_VERSION}, protobuf ${Protobuf_VERSION}")

# jemalloc, for Kiln's programs only (the CLI, the benches, the tests), never
# for a library: a program that loads the C API (kiln_db) keeps its own
# allocator. The search builds and drops millions of small IR objects,
# vectors and maps a round; with jemalloc its overhead per trial is about 7%
# lower than with glibc's malloc (search_overhead_bench C2D:0, 17.2 against
# 18.5 ms; docs/ARCHITECTURE.md section 7). Optional: without libjemalloc-dev, or in
# a sanitizer or fuzzing tree (whose own allocator must stay), the C
# library's malloc.
option(KILN_JEMALLOC "Link Kiln's programs with jemalloc where it is installed" ON)
add_library(kiln_allocator INTERFACE)
if(KILN_JEMALLOC AND NOT KILN_SANITIZE AND NOT KILN_FUZZ)
  find_library(KILN_JEMALLOC_LIBRARY NAMES jemalloc)
  if(KILN_JEMALLOC_LIBRARY)
    # --no-as-needed: the programs call malloc only through libstdc++, so a
    # linker that drops unreferenced libraries would drop this one.
    target_link_libraries(kiln_allocator INTERFACE
                          "-Wl,--push-state,--no-as-needed" ${KILN_JEMALLOC_LIBRARY}
                          "-Wl,--pop-state")
    message(STATUS "allocator: jemalloc (${KILN_JEMALLOC_LIBRARY})")
  else()
    message(STATUS "allocator: the C library's malloc (apt-get install libjemalloc-dev for "
                   "a faster search)")
  endif()
endif()

