#!/usr/bin/env bash
# Cold prefetch beside the script a user would write instead, measured from outside, in
# interleaved rounds (the background prefetching service's job: many photos in, thumbnails
# out, nothing cached yet):
#
#   daemon    a fresh imagecached (empty cache, CONNECTIONS connections) turns 204 URLs into
#             SIZE-px thumbnails with one `imagecache prefetch --size SIZE` of them; the CLI
#             returns once every `prefetch.finished` has arrived (all 204 must be ok). Wall is
#             the CLI's; CPU is the daemon's during the prefetch (start-up excluded).
#   pillow    `curl -Z --parallel-max 16` of the same URLs into a folder, then
#             pillow_script_peer.py (draft to the box, thumbnail() with Lanczos, JPEG q80) on
#             both cores through `xargs -P2`. Wall and CPU of the whole script (curl, xargs
#             and both Pythons).
#   margin    the same script with `--margin`: thumbnail() drafts at twice the box itself (its
#             reducing_gap), the margin libvips and the daemon keep; the script at their quality.
#   vips      the same download, then `vipsthumbnail --size SIZEx` (JPEG q80) through
#             `xargs -P2`, the files in two halves: one vipsthumbnail per core.
#   vips1     the same without the halves, `ls | xargs -P2 vipsthumbnail …`: every name fits
#             on one command line, so xargs starts one vipsthumbnail, on one core. The form a
#             user typing the pipeline gets, and the one whose 2.77–3.18 s (wall ≈ its CPU)
#             set the ≥ 2.5 × target of the cold-path work.
#   floorbox  (JPEG inputs) `djpeg -scale` at the draft's scale (the smallest DCT scale that
#             covers SIZE: 1/8 for 2400 px → 256) of the same 204 files through `xargs -P2`:
#             the entropy decoding no tool can skip, as a CPU floor per photo.
#   floormargin  the same at the smallest scale that covers twice SIZE (1/4 for 256 px): the
#             floor at the scale the daemon, libvips and `margin` decode at.
#
# The inputs: the 17 photos 2400 px wide that prepare_photos.py makes (KIND: baseline,
# progressive or png), each hard-linked under 12 names, served by a loopback nginx. Each round
# runs every tool once, the order rotating each round. The report gives per tool the median
# wall and CPU and the CPU per photo; per round the daemon's speed relative to each peer
# (peer wall ÷ daemon wall: above 1, the daemon is faster) and its CPU relative to the
# script's (daemon CPU ÷ script CPU: below 1, it spends less), with their medians.
#
# Then quality, off the clock: each tool's thumbnails of the 17 photos (the daemon's through
# `imagecache show`, the peers' from the same commands) scored by thumbnail_ssim.py against a
# Lanczos reduction of the full decode: mean and lowest SSIM per tool, and the daemon's
# largest shortfall below vipsthumbnail on one photo.
#
# Usage: Benchmarks/scripts/cold-prefetch.sh ROUNDS BINARY
#   SIZE (default 256), KIND (default baseline), CONNECTIONS (default 16), CLI (the imagecache
#   binary, default the release build, .build/release/imagecache, built when missing: what a
#   user runs, and it shares the two cores with the daemon: the debug build spent 0.08 s of
#   CPU on a prefetch of 204, the release 0.03 s), PHOTOS (default
#   /tmp/imagecached-thumbnail-bench/photos; on the same file system as /tmp).
# Needs: nginx (nginx-light), curl, Debian's python3 with Pillow and numpy (python3-pil,
# python3-numpy), vipsthumbnail (libvips-tools), djpeg (libjpeg-turbo-progs), the wallpaper
# packages mate-backgrounds and plasma-workspace-wallpapers (prepare_photos.py's sources).
set -euo pipefail
if [[ $# -ne 2 ]]; then echo "usage: $0 ROUNDS BINARY" >&2; exit 64; fi
rounds=$1
binary=$(realpath "$2")
cd "$(dirname "$0")/../.."
source Benchmarks/scripts/loopback-nginx.sh
source Benchmarks/scripts/loopback-daemon.sh
connections=${CONNECTIONS:-16}
size=${SIZE:-256}
kind=${KIND:-baseline}
if [[ -z "${CLI:-}" && ! -x .build/release/imagecache ]]; then swift build -c release --product imagecache > /dev/null; fi
CLI=$(realpath "${CLI:-.build/release/imagecache}")
photos=${PHOTOS:-/tmp/imagecached-thumbnail-bench/photos}
names_per_photo=12
python=/usr/bin/python3
for tool in "$binary" "$CLI"; do [[ -x "$tool" ]] || { echo "not an executable: $tool" >&2; exit 1; }; done
for tool in curl vipsthumbnail djpeg /usr/sbin/nginx; do
  command -v "$tool" > /dev/null || { echo "$tool is missing (see the script's Needs line)" >&2; exit 1; }
done
"$python" -c 'import PIL, numpy' 2>/dev/null || { echo "$python lacks Pillow or numpy" >&2; exit 1; }
case $kind in
  baseline|progressive) ext=jpg ;;
  png) ext=png ;;
  *) echo "KIND is baseline, progressive or png" >&2; exit 64 ;;
esac

work=$(mktemp -d /tmp/cold-prefetch.XXXXXX)
NGINX_PID=""
cleanup() {
  if [[ -n "$DAEMON_PID" ]]; then kill "$DAEMON_PID" 2>/dev/null || true; fi
  if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

[[ -d "$photos/$kind" ]] || "$python" Benchmarks/scripts/prepare_photos.py "$photos"
sources=("$photos/$kind"/*."$ext")
mkdir -p "$work/www/p"
for photo in "${sources[@]}"; do
  for copy in $(seq -w "$names_per_photo"); do ln "$photo" "$work/www/p/$copy-$(basename "$photo")"; done
done
chmod 755 "$work"; chmod -R a+rX "$work/www"   # nginx's workers run as an unprivileged user
names=($(ls "$work/www/p"))
count=${#names[@]}
batch=$(( (count + 1) / 2 ))                    # two batches: one per core
start_loopback_nginx "$work" "p/${names[0]}"
base="http://127.0.0.1:$NGINX_PORT/p"
for name in "${names[@]}"; do echo "$base/$name"; done > "$work/urls.txt"

# measure FUNCTION: runs it, timed by bash (its own and its children's CPU); sets wall and cpu
# in seconds. Its stdout goes to $work/tool.out; a failure ends the run.
TIMEFORMAT='%R %U %S'
measure() {
  local timing user sys
  timing=$( { time "$1" > "$work/tool.out" 2> "$work/tool.err"; } 2>&1 ) || fail "$1 failed: $(tail -5 "$work/tool.err")"
  read -r wall user sys <<< "$timing"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
}

prefetch() { "$CLI" --socket "$DAEMON_DIR/d.sock" --json prefetch --size "$size" - < "$work/urls.txt"; }
download() {
  rm -rf "$work/dl"; mkdir -p "$work/dl"
  curl -Z --parallel-max 16 --fail -sS --output-dir "$work/dl" --remote-name-all $(< "$work/urls.txt")
}
pillow_script() {
  download
  rm -rf "$work/out"; mkdir -p "$work/out"
  ls -d "$work/dl"/* | xargs -P2 -n "$batch" "$python" Benchmarks/scripts/pillow_script_peer.py "$size" "$work/out"
}
vips_script() {
  download
  rm -rf "$work/out"; mkdir -p "$work/out"
  ls -d "$work/dl"/* | xargs -P2 -n "$batch" vipsthumbnail --size "${size}x" -o "$work/out/%s.jpg[Q=80]"
}
vips_one_process() {
  download
  rm -rf "$work/out"; mkdir -p "$work/out"
  ls -d "$work/dl"/* | xargs -P2 vipsthumbnail --size "${size}x" -o "$work/out/%s.jpg[Q=80]"
}
margin_script() {
  download
  rm -rf "$work/out"; mkdir -p "$work/out"
  ls -d "$work/dl"/* | xargs -P2 -n "$batch" "$python" Benchmarks/scripts/pillow_script_peer.py --margin "$size" "$work/out"
}
floor() {
  ls -d "$work/www/p"/* | xargs -P2 -n "$batch" sh -c 'scale=$1; shift; for f; do djpeg -scale "$scale" -outfile /dev/null "$f"; done' floor "$1"
}
# The smallest of libjpeg's scales 1/8, 1/4, 1/2, 1 at which the photos' width still reaches $1.
covering_scale() {
  "$python" - "${sources[0]}" "$1" <<'PY'
import sys
from PIL import Image
width, need = Image.open(sys.argv[1]).width, int(sys.argv[2])
print(next(f"1/{d}" for d in (8, 4, 2, 1) if -(-width // d) >= need or d == 1))
PY
}
floorbox() { floor "$box_scale"; }
floormargin() { floor "$margin_scale"; }

# run TOOL: one measured run; sets wall and cpu (for the daemon: its own CPU over the prefetch).
run() {
  case $1 in
    daemon)
      start_loopback_daemon "$binary" "$work/daemon" "$connections"
      local before; before=$(cpu_seconds "$DAEMON_PID")
      measure prefetch
      cpu=$(awk -v a="$(cpu_seconds "$DAEMON_PID")" -v b="$before" 'BEGIN { print a - b }')
      stop_loopback_daemon
      "$python" - "$work/tool.out" "$count" <<'PY' || fail "prefetch: not every thumbnail was made"
import json, sys
s = json.load(open(sys.argv[1])); n = int(sys.argv[2])
if s["photos"] != n or s["ok"] != n or s["failed"]:
    sys.exit(f"prefetch answered {s}, expected {n} ok")
PY
      ;;
    pillow) measure pillow_script; [[ $(ls "$work/out" | wc -l) == "$count" ]] || fail "pillow made $(ls "$work/out" | wc -l) of $count" ;;
    margin) measure margin_script; [[ $(ls "$work/out" | wc -l) == "$count" ]] || fail "margin made $(ls "$work/out" | wc -l) of $count" ;;
    vips) measure vips_script; [[ $(ls "$work/out" | wc -l) == "$count" ]] || fail "vips made $(ls "$work/out" | wc -l) of $count" ;;
    vips1) measure vips_one_process; [[ $(ls "$work/out" | wc -l) == "$count" ]] || fail "vips1 made $(ls "$work/out" | wc -l) of $count" ;;
    floorbox|floormargin) measure "$1" ;;
  esac
}

tools=(daemon pillow margin vips vips1)
if [[ $ext == jpg ]]; then
  tools+=(floorbox floormargin)
  box_scale=$(covering_scale "$size")
  margin_scale=$(covering_scale $(( size * 2 )))
  echo "== djpeg floors: $box_scale (covers $size px), $margin_scale (covers $(( size * 2 )) px)"
fi
echo "== $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $count URLs (${#sources[@]} $kind photos × $names_per_photo names) at $size px; $connections connections; $binary"
results=$work/results.tsv
: > "$results"
for round in $(seq "$rounds"); do
  for i in "${!tools[@]}"; do
    tool=${tools[$(( (i + round) % ${#tools[@]} ))]}
    run "$tool"
    printf '%s\t%s\t%s\t%s\n' "$round" "$tool" "$wall" "$cpu" >> "$results"
    printf 'round %s %-6s wall %.3f s, CPU %.2f s, load %s\n' "$round" "$tool" "$wall" "$cpu" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

"$python" - "$results" "$count" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    rnd, tool, wall, cpu = line.split("\t")
    runs.setdefault(tool, {})[int(rnd)] = (float(wall), float(cpu))
n = int(sys.argv[2])
print("\n| tool | wall s (median) | CPU s (median) | CPU ms per photo |")
print("|---|---|---|---|")
for tool, by in runs.items():
    w = statistics.median(x[0] for x in by.values()); c = statistics.median(x[1] for x in by.values())
    print(f"| {tool} | {w:.3f} | {c:.2f} | {c / n * 1000:.1f} |")
d = runs["daemon"]
print("\n| daemon beside | speed: peer wall ÷ daemon wall, median (rounds) | CPU: daemon ÷ peer, median (rounds) |")
print("|---|---|---|")
for peer in ("pillow", "margin", "vips", "vips1", "floorbox", "floormargin"):
    if peer not in runs: continue
    p = runs[peer]; ks = sorted(k for k in d if k in p)
    speed = [p[k][0] / d[k][0] for k in ks]; cpu = [d[k][1] / p[k][1] for k in ks]
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
    print(f"| {peer} | **{statistics.median(speed):.3f}** ({fmt(speed)}) | **{statistics.median(cpu):.3f}** ({fmt(cpu)}) |")
PY

# Quality, off the clock: the 17 photos' thumbnails from each tool, scored against a Lanczos
# reduction of each full decode.
mkdir -p "$work/ssim/daemon" "$work/ssim/pillow" "$work/ssim/margin" "$work/ssim/vips"
start_loopback_daemon "$binary" "$work/daemon" "$connections"
for photo in "${sources[@]}"; do
  name=$(basename "$photo")
  path=$("$CLI" --socket "$DAEMON_DIR/d.sock" --json show "$base/01-$name" --size "$size" \
    | "$python" -c 'import json, sys; print(json.load(sys.stdin)["path"])')
  cp "$path" "$work/ssim/daemon/${name%.*}.jpg"
done
stop_loopback_daemon
"$python" Benchmarks/scripts/pillow_script_peer.py "$size" "$work/ssim/pillow" "${sources[@]}"
"$python" Benchmarks/scripts/pillow_script_peer.py --margin "$size" "$work/ssim/margin" "${sources[@]}"
vipsthumbnail --size "${size}x" -o "$work/ssim/vips/%s.jpg[Q=80]" "${sources[@]}"
"$python" Benchmarks/scripts/thumbnail_ssim.py "$photos/$kind" daemon="$work/ssim/daemon" \
  pillow="$work/ssim/pillow" margin="$work/ssim/margin" vips="$work/ssim/vips" > "$work/ssim.jsonl"
"$python" - "$work/ssim.jsonl" <<'PY'
import json, sys
tools = {row["tool"]: row for row in map(json.loads, open(sys.argv[1]))}
print("\n| tool | mean SSIM | lowest |")
print("|---|---|---|")
for name, row in tools.items():
    print(f"| {name} | {row['ssim']:.5f} | {row['ssimMin']:.5f} |")
ours, vips = tools["daemon"]["perImage"], tools["vips"]["perImage"]
gaps = {name: vips[name] - ours[name] for name in ours if name in vips}
worst = max(gaps, key=gaps.get)
print(f"\ndaemon's mean − vips' mean: {tools['daemon']['ssim'] - tools['vips']['ssim']:+.5f}; "
      f"largest shortfall below vips on one photo: {gaps[worst]:+.5f} ({worst})")
PY
