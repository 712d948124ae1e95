#!/usr/bin/env bash
# Builds Kiln (installing what is missing) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd "${KILN_BUILD_DIR:-build}"
OMP_WAIT_POLICY=PASSIVE ctest --output-on-failure -j "$(nproc)" "$@"
