#!/usr/bin/env bash
# Thumbnail benchmark: 2400-px photos → 256-px thumbnails on one thread, imagecached beside
# vipsthumbnail and Pillow (draft + thumbnail), interleaved round by round in one run.
#
# usage: Benchmarks/scripts/thumbnails.sh [ROUNDS]     (default 5)
# needs: python3 with Pillow and numpy; vipsthumbnail (libvips-tools); the wallpaper packages
#        mate-backgrounds and plasma-workspace-wallpapers (the source photos); /usr/bin/time.
# env:   IMAGECACHED_BENCH_DIR (default /tmp/imagecached-thumbnail-bench), REPEAT (default 8:
#        each photo is passed REPEAT times in the "all" run, so per-image cost is well above
#        the clock's resolution).
#
# For each tool and input kind (baseline, progressive) it times whole processes twice: on all
# images and on one image. Per-image cost = (T_all − T_one) / (N − 1): start-up removed, the
# same way for every tool. Peak RSS is the maximum resident size of the "all" process.
# Quality: mean SSIM (luma) of each tool's thumbnails against a Lanczos downscale of the full
# decode (thumbnail_ssim.py).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${IMAGECACHED_BENCH_DIR:-/tmp/imagecached-thumbnail-bench}
rounds=${1:-5}
repeat=${REPEAT:-8}
width=256
bench="$root/Benchmarks/.build/release/imagecache-bench"

[[ -x "$bench" ]] || swift build -c release --package-path "$root/Benchmarks"
[[ -d "$work/photos/baseline" ]] || python3 "$here/prepare_photos.py" "$work/photos"
mkdir -p "$work"
results="$work/results.tsv"
: > "$results"

# run TOOL KIND SET COUNT CMD...: one timed process; appends tool, kind, set, count, seconds, KiB.
run() {
  local tool=$1 kind=$2 set=$3 count=$4
  shift 4
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/rss.txt" "$@" > "$work/last.out" 2>> "$work/stderr.log"
  end=$(date +%s%N)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$kind" "$set" "$count" \
    "$(( (end - start) / 1000 ))" "$(tail -1 "$work/rss.txt")" >> "$results"
}

for round in $(seq "$rounds"); do
  for kind in baseline progressive; do
    photos=("$work/photos/$kind"/*.jpg)
    all=()
    for _ in $(seq "$repeat"); do all+=("${photos[@]}"); done
    for set in all one; do
      if [[ $set == all ]]; then list=("${all[@]}"); else list=("${photos[0]}"); fi
      out="$work/out/$kind"
      run imagecached "$kind" "$set" "${#list[@]}" "$bench" thumbnails --width "$width" --output "$out/imagecached" "${list[@]}"
      run imagecached-fast "$kind" "$set" "${#list[@]}" "$bench" thumbnails --fast --width "$width" --output "$out/imagecached-fast" "${list[@]}"
      run pillow-draft "$kind" "$set" "${#list[@]}" python3 "$here/pillow_thumbnails.py" "$width" "$out/pillow-draft" "${list[@]}"
      mkdir -p "$out/vipsthumbnail"
      run vipsthumbnail "$kind" "$set" "${#list[@]}" vipsthumbnail --size "${width}x" -o "$out/vipsthumbnail/%s.jpg[Q=82]" "${list[@]}"
    done
  done
  echo "round $round done" >&2
done

echo "== speed (median of $rounds rounds; ${#photos[@]} photos × $repeat per 'all' run)"
python3 - "$results" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tool, kind, set_, count, micros, kib = line.split("\t")
    rows[(tool, kind, set_)].append((int(count), int(micros) / 1e6, int(kib)))
print(f"{'tool':18} {'input':12} {'per image ms':>12} {'images/s':>9} {'whole-process img/s':>20} {'start-up ms':>11} {'peak RSS MiB':>12}")
for (tool, kind, set_) in sorted(k for k in rows if k[2] == "all"):
    n = rows[(tool, kind, "all")][0][0]
    t_all = statistics.median(r[1] for r in rows[(tool, kind, "all")])
    t_one = statistics.median(r[1] for r in rows[(tool, kind, "one")])
    per = (t_all - t_one) / (n - 1)
    rss = max(r[2] for r in rows[(tool, kind, "all")]) / 1024
    print(f"{tool:18} {kind:12} {per * 1000:12.2f} {1 / per:9.1f} {n / t_all:20.1f} {t_one * 1000:11.1f} {rss:12.1f}")
PY

echo "== quality (SSIM of luma against a Lanczos downscale of the full decode)"
for kind in baseline progressive; do
  echo "-- $kind"
  python3 "$here/thumbnail_ssim.py" "$work/photos/$kind" \
    imagecached="$work/out/$kind/imagecached" imagecached-fast="$work/out/$kind/imagecached-fast" \
    pillow-draft="$work/out/$kind/pillow-draft" vipsthumbnail="$work/out/$kind/vipsthumbnail"
done

echo "== header probe (bodies in memory)"
"$bench" thumbnails --probe-only "$work/photos/baseline"
