#!/usr/bin/env bash
# Kiln's main job: a real tuning run. Builds what is missing, tunes a workload
# on this machine into ./kiln.db (a rerun tops up instead of starting over),
# then shows the `kiln query` hit a build pipeline would get and writes the
# run's report page (./report.html: tuning curve, latencies, best schedule).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
KILN="${KILN_BUILD_DIR:-build}/tools/kiln"
WORKLOAD="${1:-GMM:2}"
TRIALS="${2:-64}"
DB="${KILN_DB:-kiln.db}"

echo "== kiln tune --workload $WORKLOAD --target host --trials $TRIALS --db $DB"
"$KILN" tune --workload "$WORKLOAD" --target host --trials "$TRIALS" --trials-per-iter 16 --db "$DB"
echo
echo "== kiln query --db $DB --workload $WORKLOAD --target host --why"
"$KILN" query --db "$DB" --workload "$WORKLOAD" --target host --why
echo
echo "== kiln report --db $DB --workload $WORKLOAD -o ${KILN_REPORT:-report.html}"
"$KILN" report --db "$DB" --workload "$WORKLOAD" -o "${KILN_REPORT:-report.html}"
