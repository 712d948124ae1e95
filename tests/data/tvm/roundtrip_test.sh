#!/usr/bin/env bash
# Export -> TVM import -> TVM applies the record: imports TVM's own
# MetaSchedule database (metaschedule_gmm/) into a Kiln database, exports it
# back with `kiln db export --format tvm`, and has pip's TVM load the export
# and apply the best record with query_tuning_record / query_schedule
# (check_export.py). Skipped (exit 77) when TVM is not importable; set
# KILN_TVM_PYTHON to a python that has apache-tvm 0.27 (README.md).
# Usage: roundtrip_test.sh KILN_BINARY
set -euo pipefail
kiln="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${KILN_TVM_PYTHON:-python3}"
if ! "$py" -c "import tvm.s_tir.meta_schedule" >/dev/null 2>&1; then
  echo "skipped: $py cannot import tvm (set KILN_TVM_PYTHON)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$kiln" db import --format tvm "$here/metaschedule_gmm/database_workload.json" \
  "$here/metaschedule_gmm/database_tuning_record.json" --db "$tmp/k.db"
"$kiln" db export --format tvm "$tmp/out" --db "$tmp/k.db"
"$py" "$here/check_export.py" "$tmp/out"
# A schedule Kiln wrote (kiln_native_gmm.jsonl: split, reorder, parallel and
# unroll of GMM:0, in Kiln's own export format) goes to TVM the same way.
"$kiln" db import "$here/kiln_native_gmm.jsonl" --db "$tmp/native.db"
"$kiln" db export --format tvm "$tmp/native" --db "$tmp/native.db"
"$py" "$here/check_export.py" "$tmp/native"
