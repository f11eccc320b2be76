#!/usr/bin/env bash
# Where a cold prefetch's CPU goes inside the daemon: a real imagecached (empty cache, 16
# connections) turns the 204 URLs of cold-prefetch.sh (the 17 photos of prepare_photos.py,
# each hard-linked under 12 names, from a loopback nginx) into SIZE-px thumbnails with one
# `imagecache prefetch`, while `perf record -g` samples the daemon's threads alone. Then: the
# share of each library (libturbojpeg, the kernel, the daemon's own code…), the daemon's own
# hottest functions, and the kernel's share by system call (each `__x64_sys_*` or `ksys_*` with
# what it calls).
#
#   Benchmarks/scripts/profile-prefetch.sh BINARY      (KIND, SIZE, CLI, PHOTOS as cold-prefetch.sh)
#
# Needs perf (linux-perf, installed by install-tools), nginx, and root or a perf_event_paranoid
# that lets perf follow another process.
set -euo pipefail
if [[ $# -ne 1 ]]; then echo "usage: $0 BINARY" >&2; exit 64; fi
binary=$(realpath "$1")
cd "$(dirname "$0")/../.."
source Benchmarks/scripts/loopback-nginx.sh
source Benchmarks/scripts/loopback-daemon.sh
CLI=$(realpath "${CLI:-.build/debug/imagecache}")
kind=${KIND:-baseline}
size=${SIZE:-256}
photos=${PHOTOS:-/tmp/imagecached-thumbnail-bench/photos}
command -v perf > /dev/null || { echo "perf is missing (Benchmarks/scripts/install-tools)" >&2; exit 1; }
[[ -d "$photos/$kind" ]] || /usr/bin/python3 Benchmarks/scripts/prepare_photos.py "$photos"
work=$(mktemp -d /tmp/profile-prefetch.XXXXXX)
NGINX_PID=""
PERF_PID=""
cleanup() {
  [[ -n "$PERF_PID" ]] && kill -INT "$PERF_PID" 2>/dev/null
  [[ -n "$DAEMON_PID" ]] && kill "$DAEMON_PID" 2>/dev/null
  [[ -n "$NGINX_PID" ]] && kill "$NGINX_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/www/p"
for photo in "$photos/$kind"/*; do
  for copy in $(seq -w 12); do ln "$photo" "$work/www/p/$copy-$(basename "$photo")"; done
done
chmod 755 "$work"; chmod -R a+rX "$work/www"
start_loopback_nginx "$work" "p/$(ls "$work/www/p" | head -1)"
for name in $(ls "$work/www/p"); do echo "http://127.0.0.1:$NGINX_PORT/p/$name"; done > "$work/urls.txt"
start_loopback_daemon "$binary" "$work/daemon" 16
perf record -q -g -F 2999 -o "$work/perf.data" -p "$DAEMON_PID" 2> /dev/null &
PERF_PID=$!
sleep 0.5   # perf attaches to the daemon's threads before the prefetch starts
"$CLI" --socket "$work/daemon/d.sock" --json prefetch --size "$size" - < "$work/urls.txt" > "$work/cli.out"
kill -INT "$PERF_PID"; wait "$PERF_PID" || true
PERF_PID=""
stop_loopback_daemon
set +o pipefail   # `head` below closes its pipe early: perf's SIGPIPE is expected
echo "== $(wc -l < "$work/urls.txt") $kind photos at $size px; $binary"
echo "== by library"
perf report -i "$work/perf.data" --no-children --sort dso -q -g none 2> /dev/null | head -8
echo "== the daemon's own code, hottest"
perf report -i "$work/perf.data" --no-children --sort sym -q -g none --dso "$(basename "$binary")" 2> /dev/null | head -8 | cut -c1-140
echo "== the kernel, by system call (with what each calls)"
perf report -i "$work/perf.data" --children --sort sym -q -g none 2> /dev/null | grep -E '\[k\] (__x64_sys_|ksys_)' | head -10
