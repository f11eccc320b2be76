#!/usr/bin/env bash
# Fetch benchmark: the libcurl engine (imagecache-bench fetch, bodies to memory) against
# curl --parallel --parallel-max 16 and aria2c -j 16 on the same URLs, served by a loopback
# nginx started here on a free port with its own temp prefix (stopped on exit).
# Runs are interleaved (the order rotates each round); the report gives medians of per-round
# ratios. curl and aria2c write into /dev/shm (memory-backed files).
#
# Usage: Benchmarks/scripts/fetch.sh [ROUNDS]   (default 5; CONNECTIONS=16)
# Needs: nginx (flock /tmp/apt.lock apt-get install -y nginx-light), aria2, curl, python3.
set -euo pipefail

ROUNDS=${1:-5}
CONNECTIONS=${CONNECTIONS:-16}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/Benchmarks/.build/release/imagecache-bench}
WORK=$(mktemp -d /dev/shm/imagecache-fetch.XXXXXX)
NGINX_PID=""

cleanup() {
    if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

if [[ ! -x "$BIN" ]]; then
    swift build -c release --package-path "$ROOT/Benchmarks"
fi

"$BIN" fetch --prepare "$WORK/www"
chmod 755 "$WORK"                 # nginx workers run as an unprivileged user
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
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/small/0000.jpg" && break
    sleep 0.1
done

for set in small large; do
    : > "$WORK/$set.txt"; : > "$WORK/$set.curl"; : > "$WORK/$set.aria"
    for f in "$WORK/www/$set"/*.jpg; do
        name=$(basename "$f")
        url="http://127.0.0.1:$PORT/$set/$name"
        echo "$url" >> "$WORK/$set.txt"
        printf 'url = "%s"\noutput = "%s"\n' "$url" "$WORK/out/$name" >> "$WORK/$set.curl"
        printf '%s\n  out=%s\n' "$url" "$name" >> "$WORK/$set.aria"
    done
done

# run TOOL SET: prints "wall user sys" seconds (of the whole process, start-up included).
run() {
    local tool=$1 set=$2
    rm -rf "$WORK/out"; mkdir -p "$WORK/out"
    local t0 t1 cpu_user cpu_sys
    case $tool in
        engine) cmd=("$BIN" fetch --urls "$WORK/$set.txt" --connections "$CONNECTIONS") ;;
        curl) cmd=(curl --parallel --parallel-max "$CONNECTIONS" --silent --show-error --fail -K "$WORK/$set.curl") ;;
        aria2c) cmd=(aria2c -j "$CONNECTIONS" -x 1 -i "$WORK/$set.aria" -d "$WORK/out" --quiet=true
                     --file-allocation=none --allow-overwrite=true --auto-file-renaming=false
                     --max-connection-per-server=1 --summary-interval=0 --disk-cache=0) ;;
    esac
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S" -o "$WORK/time.txt" "${cmd[@]}" > "$WORK/$tool.out"
    t1=$(date +%s%N)
    read -r cpu_user cpu_sys < "$WORK/time.txt"
    echo "$(( (t1 - t0) / 1000 ))e-6 $cpu_user $cpu_sys"
}

RESULTS="$WORK/results.tsv"
: > "$RESULTS"
tools=(engine curl aria2c)
for round in $(seq "$ROUNDS"); do
    for set in small large; do
        # Rotate the order each round so no tool always runs first or last.
        for i in 0 1 2; do
            tool=${tools[$(( (i + round) % 3 ))]}
            read -r wall user sys < <(run "$tool" "$set")
            echo -e "$round\t$set\t$tool\t$wall\t$user\t$sys" >> "$RESULTS"
            if [[ $tool == engine ]]; then
                echo -e "$round\t$set\tengine-json\t$(cat "$WORK/engine.out")" >> "$RESULTS"
            fi
        done
    done
done

python3 - "$RESULTS" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
runs, inner = {}, {}
for r in rows:
    if r[2] == "engine-json":
        inner.setdefault(r[1], []).append(json.loads(r[3])); continue
    rnd, s, tool, wall, user, sys_ = r
    runs.setdefault((s, tool), {})[int(rnd)] = (float(wall), float(user) + float(sys_))
counts = {"small": None, "large": None}
for s in ("small", "large"):
    n = inner[s][0]["files"]; b = inner[s][0]["bytes"]
    print(f"\n## {s}: {n} files, {b/1e6:.1f} MB, {len(runs[(s,'engine')])} rounds (medians)")
    print("| tool | wall s | files/s | MB/s | CPU ms total | CPU µs/file |")
    print("|---|---|---|---|---|---|")
    for tool in ("engine", "curl", "aria2c"):
        walls = [w for w, c in runs[(s, tool)].values()]; cpus = [c for w, c in runs[(s, tool)].values()]
        w = statistics.median(walls); c = statistics.median(cpus)
        print(f"| {tool} | {w:.3f} | {n/w:.0f} | {b/w/1e6:.0f} | {c*1000:.0f} | {c/n*1e6:.0f} |")
    for peer in ("curl", "aria2c"):
        ratios = [runs[(s, peer)][k][0] / runs[(s, 'engine')][k][0] for k in runs[(s, 'engine')]]
        print(f"\nengine speed ratio vs {peer} (median of per-round {peer}_time/engine_time): "
              f"{statistics.median(ratios):.2f}  (rounds: {', '.join(f'{x:.2f}' for x in ratios)})")
    e = inner[s]
    print(f"\nengine in-process (median): {statistics.median(x['files_per_s'] for x in e):.0f} files/s, "
          f"{statistics.median(x['mb_per_s'] for x in e):.0f} MB/s, "
          f"{statistics.median(x['cpu_us_per_transfer'] for x in e):.0f} µs CPU per transfer, "
          f"requests {e[0]['requests']}, failures {max(x['failures'] for x in e)}")
PY
echo
echo "machine: $(nproc) cores; load before/after: $(cut -d' ' -f1-3 /proc/loadavg)"
