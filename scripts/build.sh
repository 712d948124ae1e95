#!/usr/bin/env bash
# Configures (once) and builds Kiln into ./build. Installs dependencies first.
# Quiet steps print their progress (scripts/lib/progress.sh); their full
# output is in $BUILD_DIR/logs/. KILN_VERBOSE=1 shows it as it comes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/progress.sh
BUILD_DIR="${KILN_BUILD_DIR:-build}"
export KILN_LOG_DIR="${KILN_LOG_DIR:-$BUILD_DIR/logs}"
bash scripts/install_deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
# Paths relative to the checkout, so ccache hits across clones in other folders.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}" CCACHE_NOHASHDIR=1
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  kiln_step "configuring $BUILD_DIR with CMake" "$KILN_LOG_DIR/configure.log" \
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    ${KILN_CMAKE_ARGS:-}
fi
if ninja -C "$BUILD_DIR" -n 2>/dev/null | grep -q "no work to do"; then
  echo "kiln: $BUILD_DIR is up to date"
else
  : >"$KILN_LOG_DIR/build.log"
  # ninja's own [k/n] counter shows how far along it is (scripts/lib/progress.sh).
  kiln_step "building Kiln on $(nproc) cores (a first build takes a while)" \
    "$KILN_LOG_DIR/build.log" cmake --build "$BUILD_DIR" -j "$(nproc)"
fi
