#!/usr/bin/env bash
# Fetch benchmark: the libcurl engine (imagecache-bench fetch) against curl --parallel
# --parallel-max 16 and aria2c -j 16 on the same URLs, served by a loopback nginx started here on
# a free port with its own temp prefix (stopped on exit). Runs are interleaved (the order rotates
# each round); the report gives medians of per-round ratios. curl and aria2c write into /dev/shm
# (memory-backed files).
#
# Tools (SMALL_TOOLS / LARGE_TOOLS choose, per set):
#   engine          bodies to memory, the daemon's allocator tuning (BodyBufferAllocator)
#   engine-glibc    the same with glibc's malloc left as it is (--default-allocator)
#   engine-file     the daemon's way: bodies past 256 KiB streamed to a file in /dev/shm
#   pipeline        ImagePipeline.load: fetch, validate (decode), disk + memory cache write
#   curl, aria2c    the peers
#
# Usage: Benchmarks/scripts/fetch.sh [ROUNDS]   (default 5; CONNECTIONS=16)
#   SHAPED=1  puts imagecache-bench shaping-proxy (RTT_MS=20, KIB_PER_S=2048 per connection)
#             between every tool and nginx, and reports the proxy's CPU per run.
#   ENGINE_ENV="MALLOC_..." extra environment for the engine processes only.
# Needs: nginx (flock /tmp/apt.lock apt-get install -y nginx-light), aria2, curl, python3.
set -euo pipefail

ROUNDS=${1:-5}
CONNECTIONS=${CONNECTIONS:-16}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/Benchmarks/scripts/loopback-nginx.sh"
BIN=${BIN:-$ROOT/Benchmarks/.build/release/imagecache-bench}
WORK=$(mktemp -d /dev/shm/imagecache-fetch.XXXXXX)
NGINX_PID=""
PROXY_PID=""
SMALL_TOOLS=${SMALL_TOOLS:-engine curl aria2c pipeline}
LARGE_TOOLS=${LARGE_TOOLS:-engine engine-glibc engine-file curl aria2c}

cleanup() {
    if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; fi
    if [[ -n "$PROXY_PID" ]]; then kill "$PROXY_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

if [[ ! -x "$BIN" ]]; then
    swift build -c release --package-path "$ROOT/Benchmarks"
fi

"$BIN" fetch --prepare "$WORK/www"
chmod 755 "$WORK"                 # nginx workers run as an unprivileged user
chmod -R a+rX "$WORK/www"

start_loopback_nginx "$WORK" small/0000.jpg
PORT=$NGINX_PORT

URL_PORT=$PORT
if [[ "${SHAPED:-0}" == 1 ]]; then
    "$BIN" shaping-proxy --upstream-port "$PORT" --rtt-ms "${RTT_MS:-20}" --kib-per-second "${KIB_PER_S:-2048}" \
        > "$WORK/proxy.port" &
    PROXY_PID=$!
    for _ in $(seq 100); do [[ -s "$WORK/proxy.port" ]] && break; sleep 0.1; done
    URL_PORT=$(cat "$WORK/proxy.port")
    curl -sf -o /dev/null "http://127.0.0.1:$URL_PORT/small/0000.jpg"
fi

# CPU seconds (user + sys) the proxy has used so far (0 without a proxy).
proxy_cpu() {
    if [[ -z "$PROXY_PID" ]]; then echo 0; return; fi
    awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$PROXY_PID/stat"
}

for set in small large; do
    : > "$WORK/$set.txt"; : > "$WORK/$set.curl"; : > "$WORK/$set.aria"
    for f in "$WORK/www/$set"/*.jpg; do
        name=$(basename "$f")
        url="http://127.0.0.1:$URL_PORT/$set/$name"
        echo "$url" >> "$WORK/$set.txt"
        printf 'url = "%s"\noutput = "%s"\n' "$url" "$WORK/out/$name" >> "$WORK/$set.curl"
        printf '%s\n  out=%s\n' "$url" "$name" >> "$WORK/$set.aria"
    done
done

# run TOOL SET: prints "wall user sys proxy_cpu" seconds (of the whole process, start-up included).
run() {
    local tool=$1 set=$2
    rm -rf "$WORK/out" "$WORK/engine-work"; mkdir -p "$WORK/out"
    local t0 t1 cpu_user cpu_sys p0 p1
    local engine=(env ${ENGINE_ENV:-} "$BIN" fetch --urls "$WORK/$set.txt" --connections "$CONNECTIONS")
    case $tool in
        engine) cmd=("${engine[@]}") ;;
        engine-glibc) cmd=("${engine[@]}" --default-allocator) ;;
        engine-file) cmd=("${engine[@]}" --mode file --work "$WORK/engine-work") ;;
        pipeline) cmd=("${engine[@]}" --mode pipeline --work "$WORK/engine-work") ;;
        curl) cmd=(curl --parallel --parallel-max "$CONNECTIONS" --silent --show-error --fail -K "$WORK/$set.curl") ;;
        aria2c) cmd=(aria2c -j "$CONNECTIONS" -x 1 -i "$WORK/$set.aria" -d "$WORK/out" --quiet=true
                     --file-allocation=none --allow-overwrite=true --auto-file-renaming=false
                     --max-connection-per-server=1 --summary-interval=0 --disk-cache=0) ;;
    esac
    p0=$(proxy_cpu)
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S" -o "$WORK/time.txt" "${cmd[@]}" > "$WORK/tool.out"
    t1=$(date +%s%N)
    p1=$(proxy_cpu)
    read -r cpu_user cpu_sys < "$WORK/time.txt"
    echo "$(( (t1 - t0) / 1000 ))e-6 $cpu_user $cpu_sys $(python3 -c "print($p1 - $p0)")"
}

RESULTS="$WORK/results.tsv"
: > "$RESULTS"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
    for set in small large; do
        if [[ $set == small ]]; then read -r -a tools <<<"$SMALL_TOOLS"; else read -r -a tools <<<"$LARGE_TOOLS"; fi
        n=${#tools[@]}
        # Rotate the order each round so no tool always runs first or last.
        for i in $(seq 0 $((n - 1))); do
            tool=${tools[$(( (i + round) % n ))]}
            read -r wall user sys pcpu < <(run "$tool" "$set")
            echo -e "$round\t$set\t$tool\t$wall\t$user\t$sys\t$pcpu\t$(cut -d' ' -f1 /proc/loadavg)" >> "$RESULTS"
            if [[ $tool == engine* || $tool == pipeline ]]; then
                echo -e "$round\t$set\t$tool-json\t$(cat "$WORK/tool.out")" >> "$RESULTS"
            fi
        done
    done
done
cp "$RESULTS" "${KEEP_RESULTS:-/dev/null}"

python3 - "$RESULTS" "${SHAPED:-0}" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
shaped = sys.argv[2] == "1"
runs, inner = {}, {}
for r in rows:
    if r[2].endswith("-json"):
        inner.setdefault((r[1], r[2][:-5]), []).append(json.loads(r[3])); continue
    rnd, s, tool, wall, user, sys_, pcpu, load = r
    runs.setdefault((s, tool), {})[int(rnd)] = (float(wall), float(user) + float(sys_), float(pcpu), float(load))
peers = ("curl", "aria2c")
for s in ("small", "large"):
    tools = [t for t in ("engine", "engine-glibc", "engine-file", "pipeline", "curl", "aria2c") if (s, t) in runs]
    if not tools: continue
    bodies = [v for (k, t), v in inner.items() if k == s and t != "pipeline"]
    any_ = [v for (k, t), v in inner.items() if k == s]
    n = any_[0][0]["files"]
    b = bodies[0][0]["bytes"] if bodies else None
    rounds = sorted(runs[(s, tools[0])])
    mb = f"{b/1e6:.1f} MB, " if b else ""
    print(f"\n## {s}: {n} files, {mb}{len(rounds)} rounds (medians){' — shaped' if shaped else ''}")
    print("| tool | wall s | files/s | MB/s | CPU ms total | CPU µs/file |" + (" proxy CPU % of wall |" if shaped else ""))
    print("|---|---|---|---|---|---|" + ("---|" if shaped else ""))
    for tool in tools:
        v = runs[(s, tool)].values()
        w = statistics.median(x[0] for x in v); c = statistics.median(x[1] for x in v)
        extra = f" {statistics.median(x[2] / x[0] * 100 for x in v):.1f} |" if shaped else ""
        rate = f"{b/w/1e6:.1f}" if b else "—"
        print(f"| {tool} | {w:.3f} | {n/w:.0f} | {rate} | {c*1000:.0f} | {c/n*1e6:.0f} |{extra}")
    print()
    for tool in tools:
        if tool in peers: continue
        for peer in peers:
            if (s, peer) not in runs: continue
            ks = [k for k in runs[(s, tool)] if k in runs[(s, peer)]]
            ratios = [runs[(s, peer)][k][0] / runs[(s, tool)][k][0] for k in ks]
            print(f"- {tool} vs {peer}: **{statistics.median(ratios):.2f}** (rounds: {', '.join(f'{x:.2f}' for x in ratios)})")
    loads = [statistics.median(runs[(s, t)][k][3] for t in tools if k in runs[(s, t)]) for k in rounds]
    print(f"- 1-min load average during each round: {', '.join(f'{x:.1f}' for x in loads)}")
    for tool in tools:
        e = inner.get((s, tool))
        if not e: continue
        print(f"- {tool} in-process (median): {statistics.median(x['files_per_s'] for x in e):.0f} files/s, "
              f"{statistics.median(x['mb_per_s'] for x in e):.0f} MB/s received, "
              f"{statistics.median(x['cpu_us_per_transfer'] for x in e):.0f} µs CPU per file, "
              f"peak RSS {statistics.median(x['max_rss_mb'] for x in e):.0f} MB (max {max(x['max_rss_mb'] for x in e):.0f}), "
              f"connections {e[0]['connections']}, requests {e[0]['requests']}, failures {max(x['failures'] for x in e)}")
PY
echo
echo "machine: $(nproc) cores; load before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg)"
