#!/usr/bin/env bash
# Interleaved A/B of daemon binaries on memory-hit thumbnail.show: the daemon alone (show.sh
# with PEERS=0), one short round of each binary in turn, so that the machine's changing load
# falls on all of them; the order rotates each round, since whichever binary runs first in a
# round was measured faster here (up to 1.3 × with the same binary's rate). Then each
# binary's best and median round, and each later binary's rate ÷ the first's per round with
# their median. On a shared machine the best round is the figure least disturbed by others,
# the median the typical one.
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
binaries=("$@")
count=${#binaries[@]}
for round in $(seq "$rounds"); do
  for step in $(seq 0 $((count - 1))); do
    binary=${binaries[$(( (round - 1 + step) % count ))]}
    echo "== round $round: $binary"
    PEERS=0 MODES="${MODES:-inline}" DAEMON_BINARY="$binary" SKIP_BUILD=1 \
      Benchmarks/scripts/show.sh "$seconds" "${CONNECTIONS:-16}" 1 | grep -E "^(-- |rate|latency|spread|daemon CPU)" | tee -a "$results.$round"
    awk -v b="$binary" -v r="$round" '/^-- imagecached/ { mode = $4; gsub(/[(,]/, "", mode) } /^rate:/ { print b, mode, $2, r }' "$results.$round" >> "$results"
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
echo "== rate ÷ the first binary's, per round (median; rounds)"
for mode in ${MODES:-inline}; do
  for binary in "${binaries[@]:1}"; do
    awk -v a="${binaries[0]}" -v b="$binary" -v m="$mode" '
      $2 == m && $1 == a { first[$4] = $3 }
      $2 == m && $1 == b { later[$4] = $3; if ($4 > last) last = $4 }
      END {
        n = 0
        for (r = 1; r <= last; r++) if ((r in later) && (r in first) && first[r] > 0) { ratio[++n] = later[r] / first[r]; list = list sprintf(" %.2f", later[r] / first[r]) }
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (ratio[j] < ratio[i]) { t = ratio[i]; ratio[i] = ratio[j]; ratio[j] = t }
        median = n == 0 ? 0 : (n % 2 ? ratio[(n + 1) / 2] : (ratio[n / 2] + ratio[n / 2 + 1]) / 2)
        printf "%s %s: %.3f (%s )\n", m, b, median, list
      }' "$results"
  done
done
