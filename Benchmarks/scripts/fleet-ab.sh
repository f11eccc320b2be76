#!/usr/bin/env bash
# Interleaved A/B of two daemon builds on the fleet benchmark's part 3 (a shared-tier hit's
# and a local disk hit's thumbnail.show latency, fleet.py), one run of each per round per file
# system, the order alternating each round (whichever runs first in a round can measure
# faster); then per build and file system the medians of shared p50, disk p50 and their
# difference, with each round's difference.
#
#   Benchmarks/scripts/fleet-ab.sh ROUNDS DIR_A DIR_B [FOLDER...]
#
# DIR_A, DIR_B: folders holding an `imagecached` each (fleet.sh's BIN_DIR). FOLDER: where the
# daemons' caches live (TMPDIR), one file system each (default /tmp); e.g. a tmpfs and a fresh
# ext4 mounted for the purpose. COUNT (default 200) passes through.
set -euo pipefail
if [[ $# -lt 3 ]]; then echo "usage: $0 ROUNDS DIR_A DIR_B [FOLDER...]" >&2; exit 64; fi
rounds=$1; a=$(realpath "$2"); b=$(realpath "$3"); shift 3
folders=("${@:-/tmp}")
cd "$(dirname "$0")/../.."
results=$(mktemp /tmp/fleet-ab.XXXXXX)
trap 'rm -f "$results"' EXIT
for round in $(seq "$rounds"); do
  for folder in "${folders[@]}"; do
    if (( round % 2 )); then order=("$a" "$b"); else order=("$b" "$a"); fi
    for dir in "${order[@]}"; do
      line=$(TMPDIR=$folder PARTS=3 COUNT=${COUNT:-200} BIN_DIR=$dir Benchmarks/scripts/fleet.sh 2>&1 | grep 'shared - disk') \
        || { echo "fleet.sh gave no part 3 line for $dir in $folder" >&2; exit 1; }
      read -r shared disk <<< "$(sed -E 's/.*shared hit p50 ([0-9.]+) ms.*disk hit p50 ([0-9.]+) ms.*/\1 \2/' <<< "$line")"
      echo "round $round $folder $dir: shared p50 $shared ms, disk p50 $disk ms"
      echo "$folder $dir $shared $disk" >> "$results"
    done
  done
done
echo "== medians (ms): shared p50, disk p50, shared − disk; then each round's shared − disk"
for folder in "${folders[@]}"; do
  for dir in "$a" "$b"; do
    awk -v f="$folder" -v d="$dir" '
      function median(v, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      }
      $1 == f && $2 == d { n++; s[n] = $3; k[n] = $4; x[n] = $3 - $4; list = list sprintf(" %.2f", $3 - $4) }
      END { printf "%s %s: %.3f, %.3f, %.3f (%s )\n", f, d, median(s, n), median(k, n), median(x, n), list }' "$results"
  done
done
