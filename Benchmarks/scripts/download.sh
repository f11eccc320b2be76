#!/usr/bin/env bash
# Download benchmark: the daemon's `download` method
# (imagecache-bench download: an in-process imagecached on a real socket; each job streams to
# <name>.part, is verified while it arrives, fsynced and renamed) against its peers, saving
# the same 20 photos of ~5 MB from nginx into the same folder on the same disk (ext4 under
# /tmp by default; OUT_PARENT changes it), in one run:
#
#   loopback  nginx on 127.0.0.1: daemon vs `curl -Z` followed by `djpeg -scale 1/8` on each
#             file on both cores (the same work: fetch and prove it decodes; target >= 1.1x),
#             and `curl -Z` alone for reference;
#   shaped    the whole link limited to 50 MB/s (400 Mbit/s, tbf on a veth into a network
#             namespace made here) with 20 ms RTT (imagecache-bench shaping-proxy inside the
#             namespace; this kernel has no netem): daemon vs `curl -Z` alone (target >= 0.95x),
#             and the daemon's p50 from a photo's last byte to its download.finished (<= 20 ms).
#
# Runs are interleaved (the order rotates each round), the output folder is emptied and
# `sync`ed before every run, and every run must have saved every byte. The report gives
# medians and the median of per-round speed ratios.
#
# Usage: Benchmarks/scripts/download.sh [ROUNDS]   (default 5; CONNECTIONS=16, SHAPED=0 skips
#        the shaped part, RATE=400mbit RTT_MS=20 change it). Needs root (network namespace),
#        nginx (apt-get install -y nginx-light), curl, libjpeg-turbo-progs (djpeg), python3.
set -euo pipefail

ROUNDS=${1:-5}
CONNECTIONS=${CONNECTIONS:-16}
SHAPED=${SHAPED:-1}
RATE=${RATE:-400mbit}
RTT_MS=${RTT_MS:-20}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/Benchmarks/scripts/loopback-nginx.sh"
BIN=${BIN:-$ROOT/Benchmarks/.build/release/imagecache-bench}
WORK=$(mktemp -d /dev/shm/imagecache-download.XXXXXX)
OUT_PARENT=${OUT_PARENT:-/tmp}
OUT=$(mktemp -d "$OUT_PARENT/imagecache-download-out.XXXXXX")
NGINX_PID=""
PROXY_PID=""
NS="icdl$$"
VETH="icdl$$a"
NET="10.$(( $$ % 200 + 20 )).$(( ($$ / 200) % 250 )).0"
HOST_IP="${NET%.0}.1"
NS_IP="${NET%.0}.2"

cleanup() {
    if [[ -n "$PROXY_PID" ]]; then kill "$PROXY_PID" 2>/dev/null || true; fi
    if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; fi
    ip link del "$VETH" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    rm -rf "$WORK" "$OUT"
}
trap cleanup EXIT

if [[ ! -x "$BIN" ]]; then
    swift build -c release --package-path "$ROOT/Benchmarks"
fi

"$BIN" download --prepare "$WORK/www"
chmod 755 "$WORK"
chmod -R a+rX "$WORK/www"

if [[ $SHAPED == 1 ]]; then
    # The shaped link: a veth from this namespace into a new one; what flows towards the new
    # namespace (nginx's answers) leaves through a token bucket of RATE.
    ip netns add "$NS"
    ip link add "$VETH" type veth peer name "${VETH%a}b"
    ip link set "${VETH%a}b" netns "$NS"
    ip addr add "$HOST_IP/24" dev "$VETH"
    ip link set "$VETH" up
    ip netns exec "$NS" ip addr add "$NS_IP/24" dev "${VETH%a}b"
    ip netns exec "$NS" ip link set "${VETH%a}b" up
    ip netns exec "$NS" ip link set lo up
    tc qdisc add dev "$VETH" root tbf rate "$RATE" burst 256kb latency 50ms
fi

nginx_extra_listen=""
if [[ $SHAPED == 1 ]]; then nginx_extra_listen=$HOST_IP; fi
start_loopback_nginx "$WORK" 00.jpg "$nginx_extra_listen"
PORT=$NGINX_PORT

PROXY_PORT=""
if [[ $SHAPED == 1 ]]; then
    # 20 ms RTT per connection, no bandwidth cap of its own (the tbf is the link).
    ip netns exec "$NS" "$BIN" shaping-proxy --upstream-host "$HOST_IP" --upstream-port "$PORT" \
        --rtt-ms "$RTT_MS" --kib-per-second 100000000 > "$WORK/proxy.port" &
    PROXY_PID=$!
    for _ in $(seq 100); do [[ -s "$WORK/proxy.port" ]] && break; sleep 0.05; done
    PROXY_PORT=$(head -1 "$WORK/proxy.port")
fi

: > "$WORK/urls.txt"; : > "$WORK/curl.cfg"; : > "$WORK/urls-shaped.txt"; : > "$WORK/curl-shaped.cfg"
for f in "$WORK/www"/*.jpg; do
    name=$(basename "$f")
    url="http://127.0.0.1:$PORT/$name"
    echo "$url" >> "$WORK/urls.txt"
    printf 'url = "%s"\noutput = "%s"\n' "$url" "$OUT/$name" >> "$WORK/curl.cfg"
    if [[ $SHAPED == 1 ]]; then
        url="http://127.0.0.1:$PROXY_PORT/$name"
        echo "$url" >> "$WORK/urls-shaped.txt"
        printf 'url = "%s"\noutput = "%s"\n' "$url" "$OUT/$name" >> "$WORK/curl-shaped.cfg"
    fi
done
BYTES=$(cat "$WORK/www"/*.jpg | wc -c)
FILES=$(ls "$WORK/www" | wc -l)

# run TOOL: prints "wall user sys" seconds of the whole process (start-up included).
run() {
    local tool=$1
    rm -rf "$OUT"; mkdir -p "$OUT"; sync
    local shaped=(ip netns exec "$NS")
    case $tool in
        daemon) cmd=("$BIN" download --urls "$WORK/urls.txt" --out "$OUT" --connections "$CONNECTIONS") ;;
        curl) cmd=(curl -Z --parallel-max "$CONNECTIONS" --silent --show-error --fail -K "$WORK/curl.cfg") ;;
        curl-djpeg) cmd=(bash -c "curl -Z --parallel-max $CONNECTIONS --silent --show-error --fail -K $WORK/curl.cfg \
                         && ls $OUT/*.jpg | xargs -P 2 -I{} sh -c 'djpeg -scale 1/8 -outfile /dev/null {}'") ;;
        shaped-daemon) cmd=("${shaped[@]}" "$BIN" download --urls "$WORK/urls-shaped.txt" --out "$OUT" --connections "$CONNECTIONS") ;;
        shaped-curl) cmd=("${shaped[@]}" curl -Z --parallel-max "$CONNECTIONS" --silent --show-error --fail -K "$WORK/curl-shaped.cfg") ;;
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
loopback=(daemon curl-djpeg curl)
shaped=(shaped-daemon shaped-curl)
for round in $(seq "$ROUNDS"); do
    tools=()
    for i in 0 1 2; do tools+=("${loopback[$(( (i + round) % 3 ))]}"); done
    if [[ $SHAPED == 1 ]]; then
        for i in 0 1; do tools+=("${shaped[$(( (i + round) % 2 ))]}"); done
    fi
    for tool in "${tools[@]}"; do
        read -r wall user sys < <(run "$tool")
        echo -e "$round\t$tool\t$wall\t$user\t$sys" >> "$RESULTS"
        if [[ $tool == *daemon ]]; then echo -e "$round\t$tool-json\t$(cat "$WORK/$tool.out")" >> "$RESULTS"; fi
    done
done

python3 - "$RESULTS" "$FILES" "$BYTES" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
files, total = int(sys.argv[2]), int(sys.argv[3])
runs, inner = {}, {}
for r in rows:
    if r[1].endswith("-json"):
        inner.setdefault(r[1][:-5], []).append(json.loads(r[2])); continue
    rnd, tool, wall, user, sys_ = r
    runs.setdefault(tool, {})[int(rnd)] = (float(wall), float(user) + float(sys_))
print(f"\n{files} photos, {total/1e6:.1f} MB, {len(runs['daemon'])} rounds (medians; whole process, start-up included)")
print("| tool | wall s | MB/s | CPU s |")
print("|---|---|---|---|")
for tool in runs:
    w = statistics.median(x[0] for x in runs[tool].values()); c = statistics.median(x[1] for x in runs[tool].values())
    print(f"| {tool} | {w:.3f} | {total/w/1e6:.0f} | {c:.2f} |")
def ratio(daemon, peer, target):
    if daemon not in runs or peer not in runs: return
    ratios = [runs[peer][k][0] / runs[daemon][k][0] for k in runs[daemon]]
    print(f"\n{daemon} throughput ÷ {peer} throughput (median of per-round {peer}_time/{daemon}_time): "
          f"{statistics.median(ratios):.2f}  (target >= {target}; rounds: {', '.join(f'{x:.2f}' for x in ratios)})")
ratio("daemon", "curl-djpeg", 1.1)
ratio("daemon", "curl", "-")
ratio("shaped-daemon", "shaped-curl", 0.95)
for name, values in inner.items():
    print(f"\n{name}, first submit → last download.finished (median): "
          f"{statistics.median(x['seconds'] for x in values):.3f} s, {statistics.median(x['mb_per_s'] for x in values):.0f} MB/s, "
          f"{statistics.median(x['cpu_seconds'] for x in values):.2f} s CPU; last byte → download.finished p50 "
          f"{statistics.median(x['last_byte_to_finished_ms_p50'] for x in values):.1f} ms (rounds: "
          + ", ".join("%.1f" % x['last_byte_to_finished_ms_p50'] for x in values) + "), p90 "
          f"{statistics.median(x['last_byte_to_finished_ms_p90'] for x in values):.1f} ms")
PY
echo
echo "machine: $(nproc) cores; load before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg)"
