#!/usr/bin/env bash
# Issue 6 acceptance: every suite workload at config 0 tunes for TRIALS (32)
# trials on this machine. For each workload it reports the records, how many
# built and ran (status ok), the failures by kind, and checks that every ok
# record was verified against the unscheduled program and that `kiln tune`
# exited normally. Exits non-zero if any workload misses the bar (>= 90% ok,
# all ok records verified, no crash).
#
#   bash scripts/tune_suite.sh [TRIALS] [CONFIG] [WORKLOAD...]
#   env: KILN_BUILD_DIR, KILN_SUITE_DIR (databases and logs), KILN_TUNE_FLAGS
#   (extra `kiln tune` flags, e.g. "--number 1 --min-repeat-ms 0" for a
#   quicker run; by default every candidate is timed with the defaults a user
#   gets: number 3, repeat 1, min_repeat_ms 100, timeout 30 s)
#
# It is slow on a small machine (every candidate is compiled, timed and
# checked against the reference), so it is a script and not part of ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS="${1:-32}"
CONFIG="${2:-0}"
shift $(( $# < 2 ? $# : 2 ))
FLAGS="${KILN_TUNE_FLAGS:-}"
KILN="${KILN_BUILD_DIR:-build}/tools/kiln"
[ -x "$KILN" ] || { echo "tune_suite: $KILN not built (run scripts/build.sh)" >&2; exit 2; }
OUT="${KILN_SUITE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/kiln_suite.XXXXXX")}"
mkdir -p "$OUT"
echo "tune_suite: $TRIALS trials per workload at config $CONFIG, extra flags '${FLAGS}'; databases and logs in $OUT"

names="$*"
[ -n "$names" ] || names=$("$KILN" workloads --json | python3 -c '
import json, sys
seen = []
for w in json.load(sys.stdin):
    if w["name"] not in seen: seen.append(w["name"])
print(" ".join(seen))')

fail=0
printf '%-12s %7s %5s %5s %6s %9s %s\n' workload records ok ok% exit seconds failures
for name in $names; do
  w="$name:$CONFIG"
  db="$OUT/$name.db"
  start=$(date +%s)
  set +e
  "$KILN" tune --workload "$w" --target host --trials "$TRIALS" --trials-per-iter 16 \
    --db "$db" $FLAGS --json >"$OUT/$name.json" 2>"$OUT/$name.log"
  rc=$?
  set -e
  secs=$(( $(date +%s) - start ))
  if [ "$rc" -ne 0 ] || [ ! -f "$db" ]; then
    printf '%-12s %7s %5s %5s %6s %9s %s\n' "$name" - - - "$rc" "$secs" "see $OUT/$name.log"
    fail=1
    continue
  fi
  # Count from the database itself, not from what kiln tune says about it.
  line=$("$KILN" db export --db "$db" | python3 -c '
import json, sys
n = ok = unverified = 0
kinds = {}
for raw in sys.stdin:
    r = json.loads(raw)
    if r.get("type") != "record": continue
    n += 1
    if r["status"] == "ok":
        ok += 1
        unverified += not r["verified"]
    else:
        kinds[r["status"]] = kinds.get(r["status"], 0) + 1
fails = ",".join(f"{k}:{v}" for k, v in sorted(kinds.items())) or "-"
if unverified: fails += f" UNVERIFIED-OK:{unverified}"
pct = 100.0 * ok / n if n else 0.0
print(n, ok, f"{pct:.0f}", fails, int(n > 0 and pct >= 90 and not unverified))')
  read -r n ok pct fails good <<<"$line"
  printf '%-12s %7s %5s %5s %6s %9s %s\n' "$name" "$n" "$ok" "$pct" "$rc" "$secs" "$fails"
  [ "$good" = 1 ] || fail=1
done
if [ "$fail" -ne 0 ]; then
  echo "tune_suite: FAILED (a workload below 90% ok, an unverified ok record, or a bad exit)"
  exit 1
fi
echo "tune_suite: every workload passed"
