#!/usr/bin/env bash
# The "objects byte-identical" check for refactors: emits the code of a fixed,
# seeded sample of the suite's design space (bench/design_space_objects.cc:
# CPU object files and CUDA sources) and writes one sha256 line per file to
# OUT_DIR/hashes.txt. Compare two runs with `diff A/hashes.txt B/hashes.txt`;
# with a second argument BASE_DIR it compares against that run and exits 1 on
# any difference.
#
# Usage: scripts/check_objects.sh OUT_DIR [BASE_DIR]   (build dir: $KILN_BUILD_DIR or build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${KILN_BUILD_DIR:-build}"
out="${1:?usage: scripts/check_objects.sh OUT_DIR [BASE_DIR]}"
cmake --build "$BUILD_DIR" --target design_space_objects -j2 >/dev/null
rm -rf "$out"
"$BUILD_DIR/bench/design_space_objects" "$out" "${KILN_OBJECT_CANDIDATES:-4}" 7
(cd "$out" && find . -type f ! -name hashes.txt | LC_ALL=C sort | xargs sha256sum) >"$out/hashes.txt"
echo "$(wc -l <"$out/hashes.txt") files hashed into $out/hashes.txt"
if [ $# -ge 2 ]; then
  if diff "$2/hashes.txt" "$out/hashes.txt"; then
    echo "identical to $2"
  else
    echo "DIFFERENT from $2" >&2
    exit 1
  fi
fi
