#!/usr/bin/env bash
# RSS of a real imagecached over 10 000 distinct thumbnails with memory_limit = 64MiB, sampled
# from /proc/PID/status, once with glibc's defaults and once with each allocator setting in
# SOAK_VARIANTS (default: MALLOC_ARENA_MAX=2; add "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
# after `flock /tmp/apt.lock apt-get install -y libjemalloc2` to try jemalloc; SOAK_VARIANTS="" runs
# glibc's defaults alone).
#
#   Benchmarks/scripts/soak.sh [count] [extra imagecache-bench soak options…]
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-10000}
shift || true
if [[ -z "${SKIP_BUILD:-}" ]]; then
  swift build -c release --package-path Benchmarks --product imagecache-bench 2>&1 | tail -1
  [[ -n "${DAEMON_BINARY:-}" ]] || swift build -c release --package-path Benchmarks --product imagecached 2>&1 | tail -1
fi
bench=${BENCH:-Benchmarks/.build/release/imagecache-bench}
daemon_binary=${DAEMON_BINARY:-Benchmarks/.build/release/imagecached}
echo "== machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average: $(cut -d' ' -f1-3 /proc/loadavg); daemon $daemon_binary"
"$bench" soak --daemon "$daemon_binary" --count "$count" "$@"
IFS=";" read -r -a variants <<< "${SOAK_VARIANTS-MALLOC_ARENA_MAX=2}"
for variant in "${variants[@]}"; do
  [[ -n "$variant" ]] || continue
  echo
  "$bench" soak --daemon "$daemon_binary" --count "$count" --daemon-env "$variant" --probe-decodes "" "$@"
done
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
