#!/usr/bin/env bash
# Installs every Debian package Kiln builds, tests and benchmarks with.
# Idempotent: when everything is present it only checks and returns (no apt).
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ clang-14 libclang-rt-14-dev pkg-config ccache
  libgrpc++-dev libabsl-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libxgboost-dev xgboost
  libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev
  llvm-16-dev libzstd-dev
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libxxhash-dev
  libjemalloc-dev  # the allocator of Kiln's programs (cmake/Dependencies.cmake)
  libopenblas-dev libdnnl-dev libbenchmark-dev  # OpenBLAS and oneDNN: bench peers only (bench/CMakeLists.txt)
  chromium  # headless, for the browser test of `kiln report` (tests/tools/report_cli_test.cc)
  libssl-dev libcpp-httplib-dev openssl
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  source "$(dirname "$0")/lib/progress.sh"
  log="${KILN_LOG_DIR:-build/logs}/apt.log"
  echo "kiln: installing ${#missing[@]} package(s) from Debian (first run only): ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  kiln_step "updating the package lists" "$log" $SUDO apt-get update
  kiln_step "installing ${#missing[@]} package(s)" "$log" \
    env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The CUDA Toolkit is part of the machine image, not a Debian package.
if ! command -v ptxas >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "kiln: error: the CUDA Toolkit (ptxas, NVRTC, nvJitLink) was not found." >&2
  echo "kiln: install CUDA 12+ under /usr/local/cuda; Kiln generates and checks GPU code with it." >&2
  exit 1
fi
