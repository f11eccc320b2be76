#!/usr/bin/env bash
# CPU per 256-px thumbnail from WebP and AVIF inputs: imagecached (libwebp, libavif
# with dav1d, then its resampler and TurboJPEG) beside vipsthumbnail and Pillow thumbnail(), one
# thread each, interleaved round by round in one run. Kept apart from thumbnails.sh (JPEG/PNG
# quality work changes that one); same method and photo set.
#
# usage: Benchmarks/scripts/format-thumbnails.sh [ROUNDS]     (default 3)
# needs: as thumbnails.sh (Pillow >= 11.3 writes AVIF; vipsthumbnail with libheif for AVIF).
# env:   IMAGECACHED_BENCH_DIR (default /tmp/imagecached-thumbnail-bench), REPEAT (default 4).
#
# Inputs: the benchmark's 2400-px baseline photos re-encoded by Pillow as WebP (quality 90)
# and AVIF (quality 90, 8-bit 4:2:0). Per-image CPU = (CPU_all − CPU_one) / (N − 1), as in
# thumbnails.sh. Outputs are JPEG quality 82.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${IMAGECACHED_BENCH_DIR:-/tmp/imagecached-thumbnail-bench}
rounds=${1:-3}
repeat=${REPEAT:-4}
width=256
bench="$root/Benchmarks/.build/release/imagecache-bench"

[[ -x "$bench" ]] || swift build -c release --package-path "$root/Benchmarks"
[[ -d "$work/photos/baseline" ]] || python3 "$here/prepare_photos.py" "$work/photos"
for format in webp avif; do
  if [[ ! -d "$work/photos/$format" ]]; then
    mkdir -p "$work/photos/$format"
    python3 - "$work/photos/baseline" "$work/photos/$format" "$format" <<'PY'
import os, sys
from PIL import Image
source, target, fmt = sys.argv[1:4]
for name in sorted(os.listdir(source)):
    with Image.open(os.path.join(source, name)) as im:
        im.save(os.path.join(target, os.path.splitext(name)[0] + "." + fmt), quality=90)
PY
  fi
done
results="$work/format-results.tsv"
: > "$results"

run() {
  local tool=$1 kind=$2 set=$3 count=$4
  shift 4
  /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$@" > /dev/null 2>> "$work/stderr.log"
  read -r user system rss < <(tail -1 "$work/time.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$kind" "$set" "$count" "$(echo "$user + $system" | bc)" "$rss" >> "$results"
}

for round in $(seq "$rounds"); do
  for kind in webp avif; do
    photos=("$work/photos/$kind"/*."$kind")
    all=()
    for _ in $(seq "$repeat"); do all+=("${photos[@]}"); done
    for set in all one; do
      if [[ $set == all ]]; then list=("${all[@]}"); else list=("${photos[0]}"); fi
      out="$work/out/$kind"
      run imagecached "$kind" "$set" "${#list[@]}" "$bench" thumbnails --width "$width" --output "$out/imagecached" "${list[@]}"
      run pillow "$kind" "$set" "${#list[@]}" python3 "$here/pillow_thumbnails.py" "$width" "$out/pillow" "${list[@]}"
      mkdir -p "$out/vipsthumbnail"
      run vipsthumbnail "$kind" "$set" "${#list[@]}" env VIPS_CONCURRENCY=1 vipsthumbnail --size "${width}x" -o "$out/vipsthumbnail/%s.jpg[Q=82]" "${list[@]}"
    done
  done
  echo "round $round done" >&2
done

echo "== CPU per 256-px thumbnail (median of $rounds rounds; ${#photos[@]} photos × $repeat per 'all' run)"
python3 - "$results" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tool, kind, set_, count, cpu, kib = line.split("\t")
    rows[(tool, kind, set_)].append((int(count), float(cpu), int(kib)))
print(f"{'tool':16} {'input':6} {'CPU ms/img':>10} {'peak RSS MiB':>12}")
for (tool, kind, set_) in sorted(k for k in rows if k[2] == "all"):
    n = rows[(tool, kind, "all")][0][0]
    med = lambda s: statistics.median(r[1] for r in rows[(tool, kind, s)])
    cpu = (med("all") - med("one")) / (n - 1)
    rss = max(r[2] for r in rows[(tool, kind, "all")]) / 1024
    print(f"{tool:16} {kind:6} {cpu * 1000:10.2f} {rss:12.1f}")
PY
