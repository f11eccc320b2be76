#!/bin/bash
# Runs inside the container that scripts/test-systemd boots, as its only job: installs
# imagecached with the repository's own scripts/install (binaries from /bin-dir) and checks
# the units under a real systemd — sysusers, credentials, socket activation, Type=notify with
# STATUS=, the watchdog, the fd limit, a download into the unit's writable root, reload and
# start refusing a bad configuration, and a stop in the middle of a download that loses
# nothing. Each check appends "ok - NAME" or "not ok - NAME: why" to /report/results; the
# last line is "done" when the script ran to its end. Every wait is bounded.
set -u
# shellcheck disable=SC1091
source /report/env   # PORT, SHA256, SLOW_SHA256 (of what the host's image server serves)
results=/report/results
: >"$results"
sock=/run/imagecached/imagecached.sock
root=/srv/imagecached/downloads
config=/etc/imagecached/cache.conf
unit=imagecached.service

# shellcheck disable=SC1091
source /report/checks.sh   # ok, not_ok, check, wait_for (Tests/ContainerChecks/checks.sh)
ic() { timeout 60 /usr/local/bin/imagecache --socket "$sock" "$@"; }
prop() { systemctl show -p "$1" --value "$unit"; }
is() { [[ "$(systemctl is-active "$unit")" == "$1" ]]; }
journal_has() { journalctl -u "$unit" -o cat --no-pager | grep -qF -- "$1"; }
journal_lacks() { ! journalctl -o cat --no-pager | grep -qF -- "$1"; }
same_file() { echo "$1  $2" | sha256sum --check --status; }
# the config the checks run with: the host's image server is on loopback, over http
good_config() {
  printf '[network]\nallowed_hosts = 127.0.0.1\nallow_http = true\n' >"$config"
}

# 1. The repository's installer, on a real systemd.
check "scripts/install installs the binaries, units, sysusers entry and config" /repo/scripts/install --bin-dir /bin-dir
check "sysusers created the imagecached user and group" getent passwd imagecached
check "the install made the unit's download root, owned by the service user" \
  bash -c "[[ \$(stat -c %U:%G $root) == imagecached:imagecached ]]"
good_config
install -d -m 0700 /etc/credstore
printf 'systemd-test-key-not-real' >/etc/credstore/UNSPLASH_ACCESS_KEY

# 2. Socket activation and readiness.
check "the socket unit listens" systemctl enable --now imagecached.socket
check "the service waits for its first connection" is inactive
check "the first connection starts the daemon and is answered" ic status
check "Type=notify: the service is active once READY=1 came" is active
check "STATUS= names the socket" bash -c "systemctl show -p StatusText --value $unit | grep -q 'Serving on'"
pid=$(prop MainPID)
check "the daemon runs as the imagecached user" bash -c "[[ \$(stat -c %U /proc/$pid) == imagecached ]]"
# LimitNOFILE=65536, unless the container's own ceiling (what its systemd inherited) is lower.
ceiling=$(awk '/^Max open files/ { print $5 }' /proc/1/limits)
expected=$((ceiling < 65536 ? ceiling : 65536))
check "LimitNOFILE= is the limit the daemon gets (65536, or the container's ceiling)" \
  grep -Eq "^Max open files +$expected +$expected" "/proc/$pid/limits"
echo "# daemon: $(grep "Max open files" "/proc/$pid/limits"); PID 1: $(grep "Max open files" /proc/1/limits)" >>"$results"
check "the key from /etc/credstore reaches the daemon (LoadCredential=)" journal_has 'providers_with_keys="unsplash(credential'
check "log lines carry their syslog priority: notice is in -p notice" \
  bash -c "journalctl -u $unit -p notice -o cat --no-pager | grep -q 'imagecached: serving'"
check "…and info is not in -p warning" \
  bash -c "! journalctl -u $unit -p warning -o cat --no-pager | grep -q 'client connected'"
check "…and the journal gets no second timestamp" \
  bash -c "! journalctl -u $unit -o cat --no-pager | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T.* imagecached: '"
check "the key itself is never logged" journal_lacks "systemd-test-key-not-real"
check "the start-up line names the config file and the download root" journal_has "file=$config"

# 3. The watchdog: systemd records each WATCHDOG=1 it gets.
check "WatchdogSec= is set" bash -c "[[ \$(systemctl show -p WatchdogUSec --value $unit) == 30s ]]"
first=$(prop WatchdogTimestampMonotonic)
check "WATCHDOG=1 pings arrive" wait_for 15 bash -c "[[ \$(systemctl show -p WatchdogTimestampMonotonic --value $unit) != $first ]]"
check "STATUS= carries live figures" bash -c "systemctl show -p StatusText --value $unit | grep -q 'session'"

# 4. A download into the root the unit makes writable (the default: XDG_DOWNLOAD_DIR).
check "a download finishes in the unit's download root" ic download "http://127.0.0.1:$PORT/photo.jpg"
check "the saved file is the served file, byte for byte" same_file "$SHA256" "$root/photo.jpg"

# 5. Reload: a bad file fails `systemctl reload` and never reaches the running daemon.
printf '[daemon]\nbogus_key = 1\n' >>"$config"
check "reload with a bad file fails visibly" bash -c "! systemctl reload $unit"
check "the daemon keeps running through it" bash -c "[[ \$(systemctl is-active $unit) == active && \$(systemctl show -p MainPID --value $unit) == $pid ]]"
check "the reason is in the journal" journal_has "unknown key 'bogus_key'"
good_config
check "reload with a good file succeeds" systemctl reload "$unit"
check "the reload reached the daemon" wait_for 10 journal_has "configuration reloaded"

# 6. Start: a place the daemon cannot use stops it before it runs, exit 78, not restarted.
good_config
printf '[cache]\ncache_dir = /etc/imagecached/not-writable\n' >>"$config"
check "restart with an unusable cache_dir fails" bash -c "! systemctl restart $unit"
check "the check names the key" journal_has "cache_dir in [cache]"
check "exit 78 is not restarted in a loop" bash -c "[[ \$(systemctl show -p NRestarts --value $unit) -le 1 ]]"
echo "# NRestarts after the refused start: $(prop NRestarts), Result: $(prop Result)" >>"$results"
good_config
systemctl reset-failed "$unit" imagecached.socket >/dev/null 2>&1
check "the socket unit still listens (or restarts)" systemctl restart imagecached.socket
check "a good file starts it again" systemctl start "$unit"

# 7. systemctl stop in the middle of a download: nothing lost, resumed at the next start.
ic download "http://127.0.0.1:$PORT/slow.jpg" --detach >/dev/null 2>&1
check "a slow download is under way" wait_for 20 bash -c "[[ -s $root/slow.jpg.part ]]"
check "systemctl stop returns with the daemon stopped cleanly" systemctl stop "$unit"
check "the stop was clean (exit 0)" bash -c "[[ \$(systemctl show -p ExecMainStatus --value $unit) == 0 ]]"
check "the partial file is kept for the resume" bash -c "[[ -s $root/slow.jpg.part ]]"
check "the job table is state (StateDirectory=), not cache" bash -c "tables=(/var/lib/imagecached/jobs-*.json); [[ \${#tables[@]} == 1 && -s \${tables[0]} && ! -e /var/cache/imagecached/downloads/jobs.json ]]"
check "the next start resumes the job" systemctl start "$unit"
check "the resumed download finishes, byte for byte" wait_for 60 same_file "$SLOW_SHA256" "$root/slow.jpg"
check "the resume asked for the rest, not the whole file" grep -Eq '^/slow.jpg range=bytes=[1-9][0-9]*-' /report/server.log

# The installed man page is found where the units' Documentation= points (when man-db is there).
if command -v man >/dev/null 2>&1; then check "man -w imagecached finds the page" man -w imagecached; fi

# 8. A clean stop leaves nothing behind in the runtime folder but systemd's socket.
check "stop" systemctl stop "$unit" imagecached.socket
check "nothing is left in /run/imagecached" bash -c "[[ -z \$(ls -A /run/imagecached 2>/dev/null) ]]"

journalctl -o cat --no-pager | grep "Failed to set thread priority" | sort | uniq -c | sed "s/^/# /" >>"$results"
journalctl -u "$unit" -o short-monotonic --no-pager >/report/journal.txt 2>&1
echo done >>"$results"
