#!/usr/bin/env bash
# "An hour under fire": a real imagecached (shared tier on 3 real memcached nodes, the provider
# simulator as providers and image host) used by concurrent clients while faults are injected
# around it; sampled into a CSV, plotted, and checked property by property (docs/soak.md).
# Loopback only. Exits non-zero when a property fails.
#
#   Benchmarks/scripts/chaos-soak.sh [MINUTES] [OUT_DIR]      (defaults: 60, a new temp dir)
#
# DAEMON_BINARY=path runs that daemon instead of Benchmarks' release build; SKIP_BUILD=1 uses
# the builds already there; BENCH=path names the imagecache-bench binary; DAEMON_ENV="K=V;K=V"
# adds to the daemon's environment; CHAOS_ARGS adds imagecache-bench chaos-soak options.
# As root the cache lives on a 192 MiB tmpfs mounted here (for the disk-full fault); otherwise
# that fault is skipped with the reason printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes=${1:-60}
out=${2:-$(mktemp -d /tmp/imagecache-chaos.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ -z "${SKIP_BUILD:-}" ]]; then
  swift build -c release --package-path Benchmarks --product imagecache-bench 2>&1 | tail -1
  [[ -n "${DAEMON_BINARY:-}" ]] || swift build -c release --package-path Benchmarks --product imagecached 2>&1 | tail -1
fi
bench=${BENCH:-Benchmarks/.build/release/imagecache-bench}
daemon_binary=${DAEMON_BINARY:-Benchmarks/.build/release/imagecached}
command -v memcached > /dev/null || { echo "memcached is missing: scripts/install-deps installs it" >&2; exit 1; }

work=$(mktemp -d /tmp/imagecache-chaos-work.XXXXXX)
cache=$work/cache
mkdir -p "$cache"
mounted=0
cleanup() {
  if [[ $mounted == 1 ]]; then umount "$cache" || umount -l "$cache" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fill=false
if [[ $(id -u) == 0 ]] && mount -t tmpfs -o size=192m,mode=0700 imagecache-chaos "$cache"; then
  mounted=1
  fill=true
  echo "== the cache is on a 192 MiB tmpfs at $cache (disk-full fault on)"
else
  echo "== disk-full fault skipped: mounting a tmpfs for the cache needs root"
fi
daemon_env=()
IFS=';' read -r -a pairs <<< "${DAEMON_ENV:-}"
for pair in "${pairs[@]}"; do [[ -z "$pair" ]] || daemon_env+=(--daemon-env "$pair"); done
echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); daemon $daemon_binary; artefacts in $out"
status=0
# shellcheck disable=SC2086
"$bench" chaos-soak --daemon "$daemon_binary" --minutes "$minutes" --out "$out" --work "$work" \
  --cache-dir "$cache" --fill "$fill" ${daemon_env[@]+"${daemon_env[@]}"} ${CHAOS_ARGS:-} || status=$?
if /usr/bin/python3 -c 'import matplotlib' 2> /dev/null; then
  /usr/bin/python3 Benchmarks/scripts/chaos_plot.py "$out/chaos-soak.csv" "$out/chaos-soak.png" || status=1
else
  echo "no plot: python3-matplotlib is missing (scripts/install-deps installs it)"
fi
echo "== artefacts: $out (chaos-soak.csv, chaos-soak.png, summary.md, events.txt, daemon.log); exit $status"
exit $status
