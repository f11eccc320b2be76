#!/usr/bin/env bash
# Bytes fetched per Unsplash thumbnail with [providers.unsplash] image_format = jpg, webp, avif and
# auto, on the loopback simulator (`imagecache simulator`: its image host transcodes
# for imgix's `fm=` with libwebp and libavif/libaom, `q` honoured).
#
#   Benchmarks/scripts/unsplash-bytes.sh [photos] [size] [query]
#
# For each format: a fresh simulator workspace and daemon (empty cache), one search of
# `photos` Unsplash results, `imagecache show --size SIZE` of each, then the daemon's
# `stats` network.bytesReceived / photos. Uses the debug build's binaries (the byte counts do
# not depend on the build; CPU does not matter here).
#
# Caveat: the simulator's pictures are gradients with seeded noise, harder to compress than
# photos; Benchmarks/scripts/format-bytes.py gives the same comparison on real photos.
set -euo pipefail
cd "$(dirname "$0")/../.."
photos=${1:-24}
size=${2:-256}
query=${3:-harbour lights}
swift build --product imagecached >/dev/null
swift build --product imagecache >/dev/null
swift build --product imagecache-simulator >/dev/null   # `imagecache simulator` runs it
bin=$(swift build --show-bin-path)
work=$(mktemp -d /tmp/unsplash-bytes.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

printf '%-8s %8s %12s %14s\n' FORMAT PHOTOS BYTES BYTES/THUMB
for format in jpg webp avif auto; do
  ws=$work/$format
  mkdir -p "$ws"
  "$bin/imagecache" simulator --workspace "$ws" >"$ws/started.json" 2>"$ws/simulator.log" &
  pids+=($!)
  for _ in $(seq 1 300); do [[ -s $ws/started.json ]] && break; sleep 0.1; done
  config=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"])' "$ws/started.json")
  socket=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["socket"])' "$ws/started.json")
  # image_format in the [providers.unsplash] section the simulator wrote.
  python3 - "$config" "$format" <<'PY'
import sys
path, fmt = sys.argv[1], sys.argv[2]
text = open(path).read().replace("[providers.unsplash]\n", f"[providers.unsplash]\nimage_format = {fmt}\n", 1)
open(path, "w").write(text)
PY
  "$bin/imagecached" --config "$config" >"$ws/daemon.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 300); do [[ -S $socket ]] && break; sleep 0.1; done
  ids=$("$bin/imagecache" --socket "$socket" --json search $query --provider unsplash --per-page "$photos" |
        python3 -c 'import json,sys; print("\n".join(p["id"] for p in json.load(sys.stdin)["photos"]))')
  count=0
  for id in $ids; do
    "$bin/imagecache" --socket "$socket" -q show "$id" --size "$size" >/dev/null
    count=$((count + 1))
  done
  received=$("$bin/imagecache" --socket "$socket" --json stats |
             python3 -c 'import json,sys; print(json.load(sys.stdin)["network"]["bytesReceived"])')
  printf '%-8s %8d %12d %14d\n' "$format" "$count" "$received" $((received / count))
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
done
