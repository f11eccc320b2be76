#!/usr/bin/env bash
# Thumbnail benchmark: 2400-px photos → thumbnails on one thread, imagecached beside
# vipsthumbnail and Pillow (thumbnail(), default reducing_gap), interleaved round by round in
# one run, for each input kind and width.
#
# usage: Benchmarks/scripts/thumbnails.sh [ROUNDS]     (default 5)
# needs: python3 with Pillow and numpy (pip); vipsthumbnail (libvips-tools); the wallpaper
#        packages mate-backgrounds and plasma-workspace-wallpapers (the source photos);
#        /usr/bin/time; with SYSTEM_PILLOW=1, python3-pil (Debian's Pillow, on the system
#        libjpeg-turbo) as a fourth tool.
# env:   IMAGECACHED_BENCH_DIR (default /tmp/imagecached-thumbnail-bench), REPEAT (default 8:
#        each photo is passed REPEAT times in the "all" run, so per-image cost is well above
#        the clock's resolution), KINDS (default "baseline progressive png": the input folders
#        prepare_photos.py makes; a new decoder's kind is one more word here and one more
#        folder there), WIDTHS (default "256 512"), SSIM=0 to stop after the speed table (the
#        SSIM pass takes minutes) and the header probe.
#
# For each tool, input kind and width it times whole processes twice: on all images and on
# one image. Per-image cost = (T_all − T_one) / (N − 1): start-up removed, the same way for
# every tool. Peak RSS is the maximum resident size of the "all" process.
# Quality: mean SSIM (luma) of each tool's thumbnails against a Lanczos downscale of the full
# decode (thumbnail_ssim.py), with the lowest per-photo score and the largest shortfall of
# imagecached below vipsthumbnail on one photo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${IMAGECACHED_BENCH_DIR:-/tmp/imagecached-thumbnail-bench}
rounds=${1:-5}
repeat=${REPEAT:-8}
read -r -a kinds <<<"${KINDS:-baseline progressive png}"
read -r -a widths <<<"${WIDTHS:-256 512}"
bench="$root/Benchmarks/.build/release/imagecache-bench"

[[ -x "$bench" ]] || swift build -c release --package-path "$root/Benchmarks"
for kind in "${kinds[@]}"; do
  [[ -d "$work/photos/$kind" ]] || python3 "$here/prepare_photos.py" "$work/photos"
done
mkdir -p "$work"
results="$work/results.tsv"
# Debian's python3-pil links the same system libjpeg-turbo (2.1.5) as imagecached, while the
# pip wheel bundles its own (3.x): with both, library and code differences can be told apart.
system_pillow=""
if [[ ${SYSTEM_PILLOW:-0} == 1 ]] && /usr/bin/python3 -c "import PIL" 2> /dev/null; then system_pillow=/usr/bin/python3; fi
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
  for kind in "${kinds[@]}"; do
    photos=("$work/photos/$kind"/*)
    all=()
    for _ in $(seq "$repeat"); do all+=("${photos[@]}"); done
    for width in "${widths[@]}"; do
      for set in all one; do
        if [[ $set == all ]]; then list=("${all[@]}"); else list=("${photos[0]}"); fi
        out="$work/out/$kind-$width"
        run imagecached "$kind-$width" "$set" "${#list[@]}" "$bench" thumbnails --width "$width" --output "$out/imagecached" "${list[@]}"
        run pillow-thumbnail "$kind-$width" "$set" "${#list[@]}" python3 "$here/pillow_thumbnails.py" "$width" "$out/pillow-thumbnail" "${list[@]}"
        if [[ -n $system_pillow ]]; then
          run pillow-thumbnail-system "$kind-$width" "$set" "${#list[@]}" "$system_pillow" "$here/pillow_thumbnails.py" "$width" "$out/pillow-thumbnail-system" "${list[@]}"
        fi
        mkdir -p "$out/vipsthumbnail"
        run vipsthumbnail "$kind-$width" "$set" "${#list[@]}" env VIPS_CONCURRENCY=1 vipsthumbnail --size "${width}x" -o "$out/vipsthumbnail/%s.jpg[Q=82]" "${list[@]}"
      done
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
print(f"{'tool':24} {'input-width':16} {'CPU ms/img':>10} {'img/s (CPU)':>11} {'wall ms/img':>11} {'start-up ms':>11} {'peak RSS MiB':>12} {'CPU ÷ Pillow':>12}")
cpu_of = {}
for (tool, kind, set_) in sorted(k for k in rows if k[2] == "all"):
    n = rows[(tool, kind, "all")][0][0]
    med = lambda s, i: statistics.median(r[i] for r in rows[(tool, kind, s)])
    cpu_of[(tool, kind)] = ((med("all", 2) - med("one", 2)) / (n - 1), (med("all", 1) - med("one", 1)) / (n - 1),
                            med("one", 1), max(r[3] for r in rows[(tool, kind, "all")]) / 1024)
for (tool, kind), (cpu, wall, startup, rss) in sorted(cpu_of.items(), key=lambda item: (item[0][1], item[0][0])):
    pillow = cpu_of.get(("pillow-thumbnail", kind), (0,))[0]
    ratio = f"{cpu / pillow:12.2f}" if pillow > 0 else f"{'':12}"
    print(f"{tool:24} {kind:16} {cpu * 1000:10.2f} {1 / cpu:11.1f} {wall * 1000:11.2f} {startup * 1000:11.1f} {rss:12.1f} {ratio}")
PY

[[ ${SSIM:-1} == 1 ]] || exit 0
echo "== quality (SSIM of luma against a Lanczos downscale of the full decode)"
for kind in "${kinds[@]}"; do
  for width in "${widths[@]}"; do
    out="$work/out/$kind-$width"
    echo "-- $kind, $width px"
    python3 "$here/thumbnail_ssim.py" "$work/photos/$kind" \
      imagecached="$out/imagecached" pillow-thumbnail="$out/pillow-thumbnail" vipsthumbnail="$out/vipsthumbnail" \
      ${system_pillow:+pillow-thumbnail-system="$out/pillow-thumbnail-system"} > "$out/ssim.jsonl"
    python3 - "$out/ssim.jsonl" <<'PY'
import json, sys
tools = {row["tool"]: row for row in map(json.loads, open(sys.argv[1]))}
for name, row in tools.items():
    print(f"  {name:24} mean {row['ssim']:.5f}  min {row['ssimMin']:.5f}  ({row['images']} photos)")
ours, vips = tools["imagecached"]["perImage"], tools["vipsthumbnail"]["perImage"]
gaps = {name: vips[name] - ours[name] for name in ours if name in vips}
worst = max(gaps, key=gaps.get)
print(f"  largest shortfall below vipsthumbnail on one photo: {gaps[worst]:+.5f} ({worst})")
PY
  done
done

echo "== header probe (bodies in memory)"
"$bench" thumbnails --probe-only "$work/photos/baseline"
