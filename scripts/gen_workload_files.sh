#!/usr/bin/env bash
# Regenerates configs/workloads/NAME_IDX.py, the text form of every suite
# workload, from the built kiln binary. tests/workloads/suite_text_test.cc
# fails when a file is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
KILN="${KILN_BUILD_DIR:-build}/tools/kiln"
mkdir -p configs/workloads
"$KILN" workloads --json | python3 -c 'import json,sys; [print(w["spec"]) for w in json.load(sys.stdin)]' |
while read -r spec; do
  "$KILN" show "$spec" > "configs/workloads/${spec/:/_}.py"
done
echo "wrote $(ls configs/workloads/*.py | wc -l) files"
