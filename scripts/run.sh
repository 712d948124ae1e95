#!/usr/bin/env bash
# Kiln's main job. Builds what is missing, then shows the workload suite and
# round-trips one workload through the canonical text form (parse, verify,
# re-print, compare hashes). Later this becomes a real tuning run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
KILN="${KILN_BUILD_DIR:-build}/tools/kiln"
WORKLOAD="${1:-GMM:3}"

echo "== kiln workloads"
"$KILN" workloads
echo
echo "== kiln show $WORKLOAD | kiln check -"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$KILN" show "$WORKLOAD" > "$tmp/w.py"
cat "$tmp/w.py"
"$KILN" check - < "$tmp/w.py"
echo
echo "== round trip: the printed text re-prints identically and hashes the same"
"$KILN" show "$tmp/w.py" > "$tmp/w2.py"
cmp "$tmp/w.py" "$tmp/w2.py" && echo "text: fixed point"
h1=$("$KILN" hash "$WORKLOAD")
h2=$("$KILN" hash "$tmp/w.py")
echo "hash($WORKLOAD) = $h1, hash(parsed text) = $h2"
[ "$h1" = "$h2" ]
