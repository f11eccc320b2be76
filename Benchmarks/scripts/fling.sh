#!/usr/bin/env bash
# What a fling costs in bytes against a slow image server (ProviderSimulator's ImageServer,
# paced per response), through a real imagecached: with fling_dwell (the contract's 120 ms),
# with fling_dwell = 0, and a client loading every slot; plus the latency of a calm first
# screen with and without the hold. See `imagecache-bench fling --help` for the knobs.
#
#   Benchmarks/scripts/fling.sh [rounds] [extra imagecache-bench fling options…]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
shift || true
if [[ -z "${SKIP_BUILD:-}" ]]; then
  swift build -c release --package-path Benchmarks --product imagecache-bench 2>&1 | tail -1
  [[ -n "${DAEMON_BINARY:-}" ]] || swift build -c release --package-path Benchmarks --product imagecached 2>&1 | tail -1
fi
bench=${BENCH:-Benchmarks/.build/release/imagecache-bench}
daemon_binary=${DAEMON_BINARY:-Benchmarks/.build/release/imagecached}
echo "== machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg); daemon $daemon_binary"
"$bench" fling --daemon "$daemon_binary" --rounds "$rounds" "$@"
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
