#!/usr/bin/env bash
# Fleet benchmark: two imagecached hosts sharing thumbnails through three memcached
# nodes, the image origin shaped like a distant CDN (20 ms RTT, 2 MiB/s per connection).
# Everything runs on loopback in one go; see fleet.py for what is measured and the targets.
#
# Usage: Benchmarks/scripts/fleet.sh   (COUNT=500 RTT_MS=20 KIB_PER_S=2048 PARTS=1234;
#        BIN_DIR=.build/release for a release daemon, default .build/debug)
# Needs memcached (scripts/install-deps), Debian's python3 with Pillow (python3-pil).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN_DIR=${BIN_DIR:-$ROOT/.build/debug}
if [[ ! -x "$BIN_DIR/imagecached" ]]; then
    swift build --package-path "$ROOT" --product imagecached
fi
# Debian's python3, whose Pillow python3-pil installs (a python3 earlier on PATH may lack it).
BIN_DIR=$BIN_DIR exec /usr/bin/python3 "$ROOT/Benchmarks/scripts/fleet.py"
