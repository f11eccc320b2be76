#!/usr/bin/env bash
# Interleaved A/B of two imagecached binaries on a cold prefetch and on downloads, measured from
# outside: each run starts the binary as a real process (its own config, cache, state folder
# and socket), drives it with the `imagecache` CLI over its socket, and stops it with SIGTERM.
#
#   prefetch  one `imagecache prefetch` of 204 distinct URLs at --size 256 into an empty cache:
#             the 17 photos 2400 px wide that prepare_photos.py makes (baseline JPEG, or KIND), each
#             hard-linked under 12 names, served by a loopback nginx. The CLI returns once every
#             image's prefetch.finished has arrived, so its wall time covers every fetch, decode
#             and thumbnail; it must report 204 ok and none failed.
#   download  one `imagecache download` of the 20 photos of ~5 MB download.sh uses
#             (imagecache-bench download --prepare) from the same nginx into a folder inside
#             the daemon's download root (ext4 under /tmp by default; OUT_PARENT changes it),
#             emptied and `sync`ed before each run; every file must equal its source byte for
#             byte.
#
# Each round runs each benchmark with each binary in turn, the order of the binaries rotating
# each round. Wall time is the CLI command's (daemon start-up excluded); CPU is the daemon's
# utime + stime (/proc/PID/stat) over its whole life, read just before SIGTERM, as is its peak
# resident memory (VmHWM in /proc/PID/status). The report gives per binary and benchmark the
# median and best wall time, the median CPU and peak RSS, the median of
# the per-round ratios B ÷ A (wall and CPU) with every round's ratio, and the load average at
# start and end. On a shared machine the wall time follows the others' load (a run takes one
# to two seconds); the daemon's CPU time far less: an even number of rounds gives each binary
# the first place equally often.
#
# Usage: Benchmarks/scripts/daemon-ab.sh ROUNDS BINARY_A BINARY_B
#   CONNECTIONS (default 16) sets the daemons' max_connections and max_connections_per_host;
#   SIZE (default 256) the thumbnail width; KIND (default baseline; progressive, or small: the
#   same pictures 1024 px wide, bodies under the engine's 256 KiB spill limit, so every body
#   waiting for its decode waits in memory) the prefetch's photos; CLI the imagecache binary
#   (default .build/debug).
#   PHOTOS (default /tmp/imagecached-thumbnail-bench/photos, thumbnails.sh's folder) is made by
#   prepare_photos.py when its baseline folder is missing; it must be on the same file system
#   as /tmp (the prefetch names are hard links).
# Needs: nginx (nginx-light), curl, python3 with Pillow (python3-pil), the wallpaper packages
# mate-backgrounds and plasma-workspace-wallpapers (prepare_photos.py's sources).
set -euo pipefail
if [[ $# -ne 3 ]]; then echo "usage: $0 ROUNDS BINARY_A BINARY_B" >&2; exit 64; fi
rounds=$1
binaries=("$(realpath "$2")" "$(realpath "$3")")   # before the cd: paths given from anywhere
cd "$(dirname "$0")/../.."
source Benchmarks/scripts/loopback-nginx.sh
source Benchmarks/scripts/loopback-daemon.sh
connections=${CONNECTIONS:-16}
size=${SIZE:-256}
kind=${KIND:-baseline}
case $kind in baseline|progressive|small) ;; *) echo "KIND is baseline, progressive or small" >&2; exit 64 ;; esac
CLI=${CLI:-.build/debug/imagecache}
cli=$CLI
bench=${BENCH:-Benchmarks/.build/release/imagecache-bench}
photos=${PHOTOS:-/tmp/imagecached-thumbnail-bench/photos}
names_per_photo=12
for binary in "${binaries[@]}" "$cli"; do
  [[ -x "$binary" ]] || { echo "not an executable: $binary" >&2; exit 1; }
done

work=$(mktemp -d /tmp/daemon-ab.XXXXXX)
out=$(mktemp -d "${OUT_PARENT:-/tmp}/daemon-ab-out.XXXXXX")
NGINX_PID=""
cleanup() {
  if [[ -n "$DAEMON_PID" ]]; then kill "$DAEMON_PID" 2>/dev/null || true; fi
  if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; fi
  rm -rf "$work" "$out"
}
trap cleanup EXIT

# The inputs. prepare_photos.py needs Pillow with ImageCms: the first python3 on PATH may be
# one without it (pyenv), Debian's has it.
python=python3
python3 -c 'from PIL import ImageCms' 2>/dev/null || python=/usr/bin/python3
[[ -d "$photos/$kind" ]] || "$python" Benchmarks/scripts/prepare_photos.py "$photos"
[[ -x "$bench" ]] || swift build -c release --package-path Benchmarks --product imagecache-bench
mkdir -p "$work/www/prefetch"
for photo in "$photos/$kind"/*.jpg; do
  for copy in $(seq -w "$names_per_photo"); do
    ln "$photo" "$work/www/prefetch/$copy-$(basename "$photo")"
  done
done
"$bench" download --prepare "$work/www/download" > /dev/null
chmod 755 "$work"                # nginx's workers run as an unprivileged user
chmod -R a+rX "$work/www"
prefetch_count=$(ls "$work/www/prefetch" | wc -l)
download_count=$(ls "$work/www/download" | wc -l)
download_bytes=$(cat "$work/www/download"/*.jpg | wc -c)

downloads=("$work/www/download"/*.jpg)
start_loopback_nginx "$work" "download/$(basename "${downloads[0]}")"
port=$NGINX_PORT

for name in $(ls "$work/www/prefetch"); do echo "http://127.0.0.1:$port/prefetch/$name"; done > "$work/prefetch.txt"
download_urls=()
for name in $(ls "$work/www/download"); do download_urls+=("http://127.0.0.1:$port/download/$name"); done

# run BENCHMARK BINARY: one run; sets wall (seconds), cpu (the daemon's CPU seconds) and peak
# (its peak resident memory, VmHWM, in MiB). It runs in this shell, not a subshell, so that a
# failure still stops the daemon (cleanup).
run() {
  local benchmark=$1 binary=$2 t0 t1 status=0
  rm -rf "$out"; mkdir -p "$out"
  start_loopback_daemon "$binary" "$work/daemon" "$connections" "$(printf '[downloads]\ndownload_dir = %s' "$out")"
  local socket=$work/daemon/d.sock
  t0=$(date +%s%N)
  case $benchmark in
    prefetch) "$cli" --socket "$socket" --json prefetch --size "$size" - < "$work/prefetch.txt" > "$work/cli.out" 2> "$work/cli.err" || status=$? ;;
    download) "$cli" --socket "$socket" --json download -o "$out" "${download_urls[@]}" > "$work/cli.out" 2> "$work/cli.err" || status=$? ;;
  esac
  t1=$(date +%s%N)
  cpu=$(cpu_seconds "$DAEMON_PID")
  peak=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$DAEMON_PID/status")
  [[ $status == 0 ]] || fail "$benchmark with $binary: the CLI exited $status: $(tail -5 "$work/cli.err")"
  stop_loopback_daemon
  case $benchmark in
    prefetch)
      python3 - "$work/cli.out" "$prefetch_count" <<'PY' || fail "prefetch with $binary: not every thumbnail was made"
import json, sys
s = json.load(open(sys.argv[1])); n = int(sys.argv[2])
if s["photos"] != n or s["ok"] != n or s["failed"] or s["queued"] != n:
    sys.exit(f"prefetch answered {s}, expected {n} queued and ok")
PY
      ;;
    download)
      [[ $(ls "$out" | wc -l) == "$download_count" ]] || fail "download with $binary: $(ls "$out" | wc -l) files of $download_count"
      for file in "$work/www/download"/*.jpg; do
        cmp -s "$file" "$out/$(basename "$file")" || fail "download with $binary: $(basename "$file") is not its source"
      done
      ;;
  esac
  wall=$(( (t1 - t0) / 1000 ))e-6
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== $(nproc) cores, load average $load_start; A = ${binaries[0]}, B = ${binaries[1]}"
echo "== prefetch: $prefetch_count URLs ($(ls "$photos/$kind" | wc -l) $kind photos × $names_per_photo names) at $size px;" \
  "download: $download_count photos, $download_bytes bytes; $connections connections"
results=$work/results.tsv
: > "$results"
for round in $(seq "$rounds"); do
  for benchmark in prefetch download; do
    for i in 0 1; do
      which=$(( (i + round) % 2 ))
      run "$benchmark" "${binaries[$which]}"
      label=$([[ $which == 0 ]] && echo A || echo B)
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$benchmark" "$label" "$wall" "$cpu" "$load" "$peak" >> "$results"
      printf 'round %s %-8s %s: wall %.3f s, daemon CPU %.2f s, peak RSS %s MiB, load %s\n' "$round" "$benchmark" "$label" "$wall" "$cpu" "$peak" "$load"
    done
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    rnd, bench, label, wall, cpu, load, peak = line.split("\t")
    runs.setdefault(bench, {}).setdefault(label, {})[int(rnd)] = (float(wall), float(cpu), float(peak))
print(f"\n| benchmark | binary | wall s (median) | wall s (best) | daemon CPU s (median) | daemon peak RSS MiB (median) | B ÷ A wall (median; rounds) | B ÷ A CPU (median; rounds) |")
print("|---|---|---|---|---|---|---|---|")
for bench, by in runs.items():
    a, b = by["A"], by["B"]
    ks = sorted(k for k in a if k in b)
    wr = [b[k][0] / a[k][0] for k in ks]; cr = [b[k][1] / a[k][1] for k in ks]
    for label in ("A", "B"):
        w = statistics.median(x[0] for x in by[label].values()); c = statistics.median(x[1] for x in by[label].values())
        ratio = (f" {statistics.median(wr):.3f} ({', '.join(f'{x:.2f}' for x in wr)}) |"
                 f" {statistics.median(cr):.3f} ({', '.join(f'{x:.2f}' for x in cr)}) |") if label == "B" else " | |"
        best = min(x[0] for x in by[label].values())
        peak = statistics.median(x[2] for x in by[label].values())
        print(f"| {bench} | {label} | {w:.3f} | {best:.3f} | {c:.2f} | {peak:.1f} |{ratio}")
PY
echo
echo "load average at start: $load_start; at end: $load_end"
