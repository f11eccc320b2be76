# Sourced by the benchmark scripts that run a real imagecached per measurement (it sources
# loopback-config.sh for the daemon's config). Needs CLI (the imagecache binary) set by the
# caller.
#
#   start_loopback_daemon BINARY DIR CONNECTIONS [EXTRA_CONFIG]
#     a fresh daemon in DIR (emptied: cache, state folder, socket DIR/d.sock, log
#     DIR/daemon.log) with max_connections and max_connections_per_host = CONNECTIONS and
#     EXTRA_CONFIG appended to its cache.conf; returns once it answers `status` on its socket
#     (bounded), and sets DAEMON_PID.
#   stop_loopback_daemon
#     SIGTERM, then a bounded wait for a clean exit (status 0).
#   cpu_seconds PID
#     the process's user + system CPU so far, in seconds.
#   fail MESSAGE
#     prints MESSAGE and the daemon's last log lines, and ends the run (the caller's EXIT trap
#     stops what is still running).
source "$(dirname "${BASH_SOURCE[0]}")/loopback-config.sh"
DAEMON_PID=""
DAEMON_DIR=""

cpu_seconds() { awk -v tck="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / tck }' "/proc/$1/stat"; }

fail() {
  echo "$1" >&2
  if [[ -n "$DAEMON_DIR" && -f "$DAEMON_DIR/daemon.log" ]]; then
    echo "-- daemon log (last 20 lines):" >&2
    tail -20 "$DAEMON_DIR/daemon.log" >&2
  fi
  exit 1
}

start_loopback_daemon() {
  local binary=$1 dir=$2 connections=$3 extra=${4:-} _
  DAEMON_DIR=$dir
  rm -rf "$dir"; mkdir -p "$dir"
  loopback_config "$dir"
  sed -i -e "/^\[daemon\]/a state_dir = $dir/state" \
    -e "/^\[network\]/a max_connections_per_host = $connections" -e "/^\[network\]/a max_connections = $connections" "$dir/cache.conf"
  if [[ -n "$extra" ]]; then printf '%s\n' "$extra" >> "$dir/cache.conf"; fi
  sync
  "$binary" --config "$dir/cache.conf" --socket "$dir/d.sock" 2> "$dir/daemon.log" &
  DAEMON_PID=$!
  for _ in $(seq 200); do
    kill -0 "$DAEMON_PID" 2>/dev/null || fail "$binary exited during start-up"
    if [[ -S "$dir/d.sock" ]] && "$CLI" --socket "$dir/d.sock" status > /dev/null 2>&1; then return; fi
    sleep 0.05
  done
  fail "$binary did not answer status within the bound"
}

stop_loopback_daemon() {
  local _ status=0
  kill -TERM "$DAEMON_PID"
  for _ in $(seq 300); do
    kill -0 "$DAEMON_PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$DAEMON_PID" 2>/dev/null; then kill -KILL "$DAEMON_PID"; fail "the daemon did not stop within 30 s of SIGTERM"; fi
  wait "$DAEMON_PID" || status=$?
  DAEMON_PID=""
  [[ $status == 0 ]] || fail "the daemon exited with status $status after SIGTERM"
}
