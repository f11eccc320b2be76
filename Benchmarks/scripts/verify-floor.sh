#!/usr/bin/env bash
# The CPU one JPEG verification costs, per photo, on one core, three ways:
#   tj       TurboJPEG's tjDecompress2 on the whole body at 1/8 (Thumbnailer.validate's decode);
#   stream   the daemon's streaming decoder (Sources/CJPEGWarnings/jpeg_stream.c compiled in)
#            fed CHUNK bytes at a time; "interl." is the same with every photo in flight at
#            once, fed 2 MiB each in turn (as concurrent downloads are verified);
#   djpeg    `djpeg -scale 1/8` on each file (download.sh's peer), process start-up included.
# tj and stream are timed with the thread's CPU clock, alternating photo by photo, bodies in
# memory; djpeg by /usr/bin/time over the whole loop.
#
#   Benchmarks/scripts/verify-floor.sh [ROUNDS] [CHUNK] [PHOTO...]
# Without photos it writes 20 like the downloads benchmark's (SyntheticImages.jpeg: a noisy
# gradient, 4:2:0, quality 90, ~5 MB, 3238 px square).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
chunk=${2:-65536}
shift $(( $# > 2 ? 2 : $# ))
work=$(mktemp -d /tmp/verify-floor.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -ISources/CJPEGWarnings/include -o "$work/verify_floor" Benchmarks/scripts/verify_floor.c \
    Sources/CJPEGWarnings/jpeg_stream.c -lturbojpeg -ljpeg -lm
photos=("$@")
if (( ${#photos[@]} == 0 )); then
    mkdir "$work/photos"
    "$work/verify_floor" --synthetic "$work/photos" 20 5000000 > /dev/null
    photos=("$work"/photos/*.jpg)
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/verify_floor" "$rounds" "$chunk" "${photos[@]}"
/usr/bin/time -f "%U %S" -o "$work/djpeg.time" bash -c '
    for round in $(seq '"$rounds"'); do
        for photo in "$@"; do djpeg -scale 1/8 -outfile /dev/null "$photo"; done
    done' _ "${photos[@]}"
read -r user sys < "$work/djpeg.time"
python3 -c "import sys; n=int(sys.argv[3]); print(f'djpeg   {(float(sys.argv[1])+float(sys.argv[2]))*1e3/n:7.2f} ms/photo  (user+sys, process start-up included)')" \
    "$user" "$sys" $(( rounds * ${#photos[@]} ))
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
