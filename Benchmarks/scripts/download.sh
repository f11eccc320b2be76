#!/usr/bin/env bash
# Download benchmark: the daemon's `download` method (imagecache-bench download: an in-process
# imagecached on a real socket; each job streams to <name>.part, fsyncs, decodes to verify,
# renames) against `curl -Z` and `aria2c -j 16` saving the same 20 photos of ~5 MB from a
# loopback nginx (started here on a free port, stopped on exit) into the same folder on the
# same disk (ext4 under /tmp by default; OUT_PARENT changes it). Runs are interleaved (the order
# rotates each round), the output folder is emptied and `sync`ed before every run; the report
# gives medians and the median of per-round speed ratios.
#
# Usage: Benchmarks/scripts/download.sh [ROUNDS]   (default 5; CONNECTIONS=16)
# Needs: nginx (flock /tmp/apt.lock apt-get install -y nginx-light), aria2, curl, python3.
set -euo pipefail

ROUNDS=${1:-5}
CONNECTIONS=${CONNECTIONS:-16}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/Benchmarks/.build/release/imagecache-bench}
WORK=$(mktemp -d /dev/shm/imagecache-download.XXXXXX)
OUT_PARENT=${OUT_PARENT:-/tmp}
OUT=$(mktemp -d "$OUT_PARENT/imagecache-download-out.XXXXXX")
NGINX_PID=""

cleanup() {
    if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; fi
    rm -rf "$WORK" "$OUT"
}
trap cleanup EXIT

if [[ ! -x "$BIN" ]]; then
    swift build -c release --package-path "$ROOT/Benchmarks"
fi

"$BIN" download --prepare "$WORK/www"
chmod 755 "$WORK"
chmod -R a+rX "$WORK/www"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/nginx/logs" "$WORK/nginx/tmp"
cat > "$WORK/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    types { image/jpeg jpg; }
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
    }
}
CONF
/usr/sbin/nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 50); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/00.jpg" && break
    sleep 0.1
done

: > "$WORK/urls.txt"; : > "$WORK/curl.cfg"; : > "$WORK/aria.txt"
for f in "$WORK/www"/*.jpg; do
    name=$(basename "$f")
    url="http://127.0.0.1:$PORT/$name"
    echo "$url" >> "$WORK/urls.txt"
    printf 'url = "%s"\noutput = "%s"\n' "$url" "$OUT/$name" >> "$WORK/curl.cfg"
    printf '%s\n  out=%s\n' "$url" "$name" >> "$WORK/aria.txt"
done
BYTES=$(cat "$WORK/www"/*.jpg | wc -c)
FILES=$(ls "$WORK/www" | wc -l)

# run TOOL: prints "wall user sys" seconds of the whole process (start-up included).
run() {
    local tool=$1
    rm -rf "$OUT"; mkdir -p "$OUT"; sync
    case $tool in
        daemon) cmd=("$BIN" download --urls "$WORK/urls.txt" --out "$OUT" --connections "$CONNECTIONS") ;;
        curl) cmd=(curl -Z --parallel-max "$CONNECTIONS" --silent --show-error --fail -K "$WORK/curl.cfg") ;;
        aria2c) cmd=(aria2c -j "$CONNECTIONS" -x 1 -i "$WORK/aria.txt" -d "$OUT" --quiet=true
                     --file-allocation=none --allow-overwrite=true --auto-file-renaming=false
                     --max-connection-per-server=1 --summary-interval=0) ;;
    esac
    local t0 t1 cpu_user cpu_sys
    t0=$(date +%s%N); [[ -n "${BENCH_VERBOSE:-}" ]] && echo "start $tool $t0" >&2
    /usr/bin/time -f "%U %S" -o "$WORK/time.txt" "${cmd[@]}" > "$WORK/$tool.out"
    t1=$(date +%s%N); [[ -n "${BENCH_VERBOSE:-}" ]] && echo "end $tool $t1" >&2
    read -r cpu_user cpu_sys < "$WORK/time.txt"
    # Every tool must have saved every byte.
    local saved; saved=$(cat "$OUT"/*.jpg | wc -c)
    if [[ "$saved" != "$BYTES" ]]; then echo "$tool saved $saved of $BYTES bytes" >&2; exit 1; fi
    echo "$(( (t1 - t0) / 1000 ))e-6 $cpu_user $cpu_sys"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
RESULTS="$WORK/results.tsv"
: > "$RESULTS"
tools=(daemon curl aria2c)
for round in $(seq "$ROUNDS"); do
    for i in 0 1 2; do
        tool=${tools[$(( (i + round) % 3 ))]}
        read -r wall user sys < <(run "$tool")
        echo -e "$round\t$tool\t$wall\t$user\t$sys" >> "$RESULTS"
        if [[ $tool == daemon ]]; then echo -e "$round\tdaemon-json\t$(cat "$WORK/daemon.out")" >> "$RESULTS"; fi
    done
done

python3 - "$RESULTS" "$FILES" "$BYTES" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
files, total = int(sys.argv[2]), int(sys.argv[3])
runs, inner = {}, []
for r in rows:
    if r[1] == "daemon-json":
        inner.append(json.loads(r[2])); continue
    rnd, tool, wall, user, sys_ = r
    runs.setdefault(tool, {})[int(rnd)] = (float(wall), float(user) + float(sys_))
print(f"\n{files} photos, {total/1e6:.1f} MB, {len(runs['daemon'])} rounds (medians; whole process, start-up included)")
print("| tool | wall s | MB/s | CPU s |")
print("|---|---|---|---|")
for tool in ("daemon", "curl", "aria2c"):
    w = statistics.median(x[0] for x in runs[tool].values()); c = statistics.median(x[1] for x in runs[tool].values())
    print(f"| {tool} | {w:.3f} | {total/w/1e6:.0f} | {c:.2f} |")
for peer in ("curl", "aria2c"):
    ratios = [runs[peer][k][0] / runs['daemon'][k][0] for k in runs['daemon']]
    print(f"\ndaemon throughput ÷ {peer} throughput (median of per-round {peer}_time/daemon_time): "
          f"{statistics.median(ratios):.2f}  (rounds: {', '.join(f'{x:.2f}' for x in ratios)})")
print(f"\ndaemon, first submit → last download.finished (median): "
      f"{statistics.median(x['seconds'] for x in inner):.3f} s, {statistics.median(x['mb_per_s'] for x in inner):.0f} MB/s, "
      f"{statistics.median(x['cpu_seconds'] for x in inner):.2f} s CPU")
PY
echo
echo "machine: $(nproc) cores; load before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg)"
