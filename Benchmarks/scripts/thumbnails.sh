#!/usr/bin/env bash
# Thumbnail benchmark: 2400-px photos → 256-px thumbnails on one thread, imagecached beside
# vipsthumbnail and Pillow (draft + thumbnail), interleaved round by round in one run.
#
# usage: Benchmarks/scripts/thumbnails.sh [ROUNDS]     (default 5)
# needs: python3 with Pillow and numpy (pip); vipsthumbnail (libvips-tools); the wallpaper
#        packages mate-backgrounds and plasma-workspace-wallpapers (the source photos);
#        /usr/bin/time; optionally python3-pil (Debian's Pillow, on the system libjpeg-turbo).
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
# Debian's python3-pil links the same system libjpeg-turbo (2.1.5) as imagecached, while the
# pip wheel bundles its own (3.x): with both, library and code differences can be told apart.
system_pillow=""
if /usr/bin/python3 -c "import PIL" 2> /dev/null; then system_pillow=/usr/bin/python3; fi
: > "$results"

# run TOOL KIND SET COUNT CMD...: one timed process; appends tool, kind, set, count, wall µs,
# CPU seconds (user + system: far less disturbed than wall time by other work on the machine),
# peak RSS KiB.
run() {
  local tool=$1 kind=$2 set=$3 count=$4
  shift 4
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$@" > "$work/last.out" 2>> "$work/stderr.log"
  end=$(date +%s%N)
  read -r user system rss < <(tail -1 "$work/time.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$kind" "$set" "$count" \
    "$(( (end - start) / 1000 ))" "$(echo "$user + $system" | bc)" "$rss" >> "$results"
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
      if [[ -n $system_pillow ]]; then
        run pillow-draft-system "$kind" "$set" "${#list[@]}" "$system_pillow" "$here/pillow_thumbnails.py" "$width" "$out/pillow-draft-system" "${list[@]}"
      fi
      mkdir -p "$out/vipsthumbnail"
      run vipsthumbnail "$kind" "$set" "${#list[@]}" env VIPS_CONCURRENCY=1 vipsthumbnail --size "${width}x" -o "$out/vipsthumbnail/%s.jpg[Q=82]" "${list[@]}"
    done
  done
  echo "round $round done" >&2
done

echo "== speed (median of $rounds rounds; ${#photos[@]} photos × $repeat per 'all' run)"
python3 - "$results" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tool, kind, set_, count, micros, cpu, kib = line.split("\t")
    rows[(tool, kind, set_)].append((int(count), int(micros) / 1e6, float(cpu), int(kib)))
print("per image = (T_all - T_one) / (N - 1), start-up removed; CPU = user + system time")
print(f"{'tool':20} {'input':12} {'CPU ms/img':>10} {'img/s (CPU)':>11} {'wall ms/img':>11} {'whole-process img/s':>19} {'start-up ms':>11} {'peak RSS MiB':>12}")
for (tool, kind, set_) in sorted(k for k in rows if k[2] == "all"):
    n = rows[(tool, kind, "all")][0][0]
    med = lambda s, i: statistics.median(r[i] for r in rows[(tool, kind, s)])
    cpu = (med("all", 2) - med("one", 2)) / (n - 1)
    wall = (med("all", 1) - med("one", 1)) / (n - 1)
    rss = max(r[3] for r in rows[(tool, kind, "all")]) / 1024
    print(f"{tool:20} {kind:12} {cpu * 1000:10.2f} {1 / cpu:11.1f} {wall * 1000:11.2f} {n / med('all', 1):19.1f} {med('one', 1) * 1000:11.1f} {rss:12.1f}")
PY

echo "== quality (SSIM of luma against a Lanczos downscale of the full decode)"
for kind in baseline progressive; do
  echo "-- $kind"
  python3 "$here/thumbnail_ssim.py" "$work/photos/$kind" \
    imagecached="$work/out/$kind/imagecached" imagecached-fast="$work/out/$kind/imagecached-fast" \
    pillow-draft="$work/out/$kind/pillow-draft" vipsthumbnail="$work/out/$kind/vipsthumbnail" \
    ${system_pillow:+pillow-draft-system="$work/out/$kind/pillow-draft-system"}
done

echo "== the library's share: decode at 1/8 only, in-process, $repeat passes over the baseline photos"
"$bench" thumbnails --validate-only --rounds "$repeat" "$work/photos/baseline"
python3 "$here/pillow_thumbnails.py" --decode-only "$width" /tmp "${all[@]/progressive/baseline}"
if [[ -n $system_pillow ]]; then
  "$system_pillow" "$here/pillow_thumbnails.py" --decode-only "$width" /tmp "${all[@]/progressive/baseline}" | sed 's/pillow-draft-decode/pillow-draft-system-decode/'
fi

echo "== header probe (bodies in memory)"
"$bench" thumbnails --probe-only "$work/photos/baseline"
