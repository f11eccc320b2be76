#!/usr/bin/env bash
# Counts the daemon's spill files (`imagecached-body-*`, the files bodies past 256 KiB are
# streamed to) seen under a folder while a benchmark runs beside it: every 10 ms it lists their
# inode numbers, and on SIGTERM or SIGINT prints how many distinct ones it saw. A file made and
# deleted between two looks is missed, so the count is a lower bound on the files made.
#
#   Benchmarks/scripts/spill-files-seen.sh [FOLDER] &   (default /tmp), run the benchmark,
#   then kill %1 (or its PID) and wait for its line.
#
# Used beside `cold-prefetch.sh` to count the spill files one cold prefetch makes.
set -uo pipefail
folder=${1:-/tmp}
declare -A seen
trap 'echo "spill files seen: ${#seen[@]}"; exit 0' TERM INT
while true; do
  while read -r inode; do seen[$inode]=1; done < <(find "$folder" -xdev -name 'imagecached-body-*' -printf '%i\n' 2>/dev/null)
  sleep 0.01
done
