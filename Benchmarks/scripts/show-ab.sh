#!/usr/bin/env bash
# Interleaved A/B of daemon binaries on memory-hit thumbnail.show: the daemon alone (show.sh
# with PEERS=0), one short round of each binary in turn, so that the machine's changing load
# falls on all of them; then each binary's best and median round. On a shared machine the
# best round is the figure least disturbed by others, the median the typical one.
#
#   Benchmarks/scripts/show-ab.sh ROUNDS SECONDS BINARY...
#
# MODES (default "inline") and CONNECTIONS (default 16) pass through to show.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=$1
seconds=$2
shift 2
results=$(mktemp /tmp/show-ab.XXXXXX)
trap 'rm -f "$results"' EXIT
for round in $(seq "$rounds"); do
  for binary in "$@"; do
    echo "== round $round: $binary"
    PEERS=0 MODES="${MODES:-inline}" DAEMON_BINARY="$binary" SKIP_BUILD=1 \
      Benchmarks/scripts/show.sh "$seconds" "${CONNECTIONS:-16}" 1 | grep -E "^(-- |rate|latency|spread|daemon CPU)" | tee -a "$results.$round"
    awk -v b="$binary" '/^-- imagecached/ { mode = $4; gsub(/[(,]/, "", mode) } /^rate:/ { print b, mode, $2 }' "$results.$round" >> "$results"
    rm -f "$results.$round"
  done
done
echo "== per binary and mode (req/s): best, median, rounds"
for mode in ${MODES:-inline}; do
  for binary in "$@"; do
    awk -v b="$binary" -v m="$mode" '$1 == b && $2 == m { print $3 }' "$results" | sort -n | awk -v b="$binary" -v m="$mode" '
      { r[NR] = $1 } END { printf "%s %s: best %d, median %d, rounds %d\n", m, b, r[NR], r[int((NR + 1) / 2)], NR }'
  done
done
