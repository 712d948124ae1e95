# Progress for the quiet, long steps of the scripts (issue 16: a newcomer must
# be able to tell a build from a hang). Source it, then:
#
#   kiln_step "building Kiln" LOG cmd args...
#
# runs the command with its output appended to LOG and says what it is doing:
# on a terminal one line redrawn every second, elsewhere (CI, a pipe) a line
# at least every 10 s; the line shows the elapsed time and, when the log has
# them, ninja's [k/n] counter or apt's current package. On failure it prints
# the log's path and its last lines (the whole log under CI) and returns the
# command's exit code. KILN_VERBOSE=1 streams the command's output instead.

kiln__progress_of() {
  local log=$1 last
  # ninja: "[k/n] Building CXX object ..."
  last=$(grep -o '^\[[0-9]*/[0-9]*\]' "$log" 2>/dev/null | tail -n 1)
  if [ -n "$last" ]; then
    printf '%s' "$last"
    return
  fi
  # apt-get: "Unpacking libllvm16:amd64 ..." / "Setting up ..."
  last=$(grep -oE '^(Get:[0-9]+|Unpacking|Setting up) [^ ]+' "$log" 2>/dev/null | tail -n 1)
  # Always succeed: the caller runs under `set -e` and an empty log is normal.
  if [ -n "$last" ]; then printf '%s' "$last"; fi
  return 0
}

kiln_step() {
  local label=$1 log=$2
  shift 2
  mkdir -p "$(dirname "$log")"
  if [ "${KILN_VERBOSE:-0}" = 1 ]; then
    echo "kiln: $label"
    "$@" 2>&1 | tee -a "$log"
    return "${PIPESTATUS[0]}"
  fi
  echo "kiln: $label (log: $log)"
  local tty=0
  [ -t 1 ] && tty=1
  local start=$SECONDS
  "$@" >>"$log" 2>&1 &
  local pid=$! tick=0 line
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    tick=$((tick + 1))
    if [ "$tty" = 1 ] || [ $((tick % 10)) = 0 ]; then
      line="kiln:   ... $label: $((SECONDS - start)) s $(kiln__progress_of "$log")"
      if [ "$tty" = 1 ]; then printf '\r\033[K%s' "$line"; else echo "$line"; fi
    fi
  done
  local rc=0
  wait "$pid" || rc=$?
  [ "$tty" = 1 ] && printf '\r\033[K'
  if [ "$rc" != 0 ]; then
    echo "kiln: error: $label failed (exit $rc) after $((SECONDS - start)) s; log: $log" >&2
    if [ "${CI:-}" = true ]; then
      cat "$log" >&2
    else
      echo "kiln: its last lines:" >&2
      tail -n 30 "$log" >&2
    fi
    return "$rc"
  fi
  echo "kiln: $label: done in $((SECONDS - start)) s"
}
