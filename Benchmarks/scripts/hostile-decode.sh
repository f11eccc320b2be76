#!/usr/bin/env bash
# Hostile decodes against the real daemon: peak memory and the latency of ordinary thumbnails.
#
# usage: Benchmarks/scripts/hostile-decode.sh [DAEMON]     (default .build/release/imagecached)
# needs: /usr/bin/python3 with Pillow (python3-pil) and jpegtran (libjpeg-turbo-progs), for
#        hostile-images.py; the images are written once to $IMAGECACHED_HOSTILE_DIR
#        (default /tmp/imagecached-hostile).
#
# (1) calibration: each hostile image decoded alone by a fresh daemon whose decode_memory is
#     large enough to admit it (4 GiB): peak RSS (VmHWM) − the idle daemon's VmHWM, beside
#     what DecodeCost predicts (read from the 1009 message of a daemon at the default budget);
# (a) 20 mixed hostile decodes at once against one daemon at the default budget: its VmHWM
#     against decode_memory + the memory formula's other terms (docs/operating.md);
# (b) an ordinary cold thumbnail's latency while two scan bombs are in flight, and while two
#     heavy-but-admitted 64-scan decodes are.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
daemon=${1:-$root/.build/release/imagecached}
images=${IMAGECACHED_HOSTILE_DIR:-/tmp/imagecached-hostile}
work=$(mktemp -d /tmp/imagecached-hostile-run.XXXXXX)
/usr/bin/python3 "$here/hostile-images.py" "$images" > /dev/null

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
/usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory "$images" > /dev/null 2>&1 &
server=$!
daemon_pid=""
cleanup() {
    [[ -n "$daemon_pid" ]] && kill "$daemon_pid" 2> /dev/null || true
    kill "$server" 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# start_daemon DECODE_MEMORY: a fresh daemon (new cache folder) on $work/d.sock.
start_daemon() {
    [[ -n "$daemon_pid" ]] && { kill "$daemon_pid"; wait "$daemon_pid" 2> /dev/null || true; }
    rm -rf "$work/cache" "$work/d.sock"
    cat > "$work/cache.conf" << CONF
[cache]
cache_dir = "$work/cache"
[network]
allowed_hosts = 127.0.0.1
allow_http = true
decode_memory = $1
CONF
    "$daemon" --config "$work/cache.conf" --socket "$work/d.sock" 2> "$work/daemon.log" &
    daemon_pid=$!
    for _ in $(seq 100); do [[ -S "$work/d.sock" ]] && return; sleep 0.1; done
    echo "the daemon did not start" >&2; cat "$work/daemon.log" >&2; exit 1
}

# client: thumbnail.show for each URL path given (all at once, one slot each), then prints
# per request: path, milliseconds until its answer, and the answer's result or error message.
client() {
    /usr/bin/python3 - "$work/d.sock" "http://127.0.0.1:$port" "$@" << 'PY'
import json, socket, sys, time
sock, base, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
s = socket.socket(socket.AF_UNIX); s.connect(sock)
start = {}
for i, p in enumerate(paths, 1):
    start[i] = time.monotonic()
    s.sendall((json.dumps({"jsonrpc": "2.0", "id": i, "method": "thumbnail.show",
                           "params": {"slot": i, "url": f"{base}/{p}", "size": 256}}) + "\n").encode())
buf, done = b"", 0
while done < len(paths):
    chunk = s.recv(65536)
    if not chunk: break
    buf += chunk
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        m = json.loads(line)
        if "id" not in m or m["id"] is None: continue
        ms = (time.monotonic() - start[m["id"]]) * 1000
        what = f'ok {m["result"]["width"]}x{m["result"]["height"]}' if "result" in m else f'{m["error"]["code"]} {m["error"]["message"]}'
        print(f'{paths[m["id"] - 1]}\t{ms:.0f} ms\t{what}', flush=True)
        done += 1
PY
}

hwm() { awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$daemon_pid/status"; }

echo "== (1) one hostile decode per fresh daemon, decode_memory = 4GiB"
printf '%-22s %10s %12s %s\n' image "idle MiB" "peak MiB" "decode MiB (peak − idle)"
for image in png16-rgba-7000.png png8-rgba-7000.png cmyk-prog-7000.jpg heavy64.jpg ordinary.jpg; do
    start_daemon 4GiB
    client ordinary.jpg > /dev/null   # warm: idle + an ordinary decode's own allocations
    idle=$(hwm)
    client "$image" > "$work/answer"
    peak=$(hwm)
    printf '%-22s %10d %12d %d   (%s)\n' "$image" "$idle" "$peak" $((peak - idle)) "$(cut -f2- "$work/answer")"
done
echo "== (1') what DecodeCost predicts: the same images at the default budget (192 MiB)"
start_daemon 192MiB
client png16-rgba-7000.png png8-rgba-7000.png cmyk-prog-7000.jpg heavy64.jpg scanbomb.jpg

echo "== (a) 20 mixed hostile decodes at once, decode_memory = 192MiB"
start_daemon 192MiB
client ordinary.jpg > /dev/null
idle=$(hwm)
mix=()
for i in $(seq 4); do mix+=(png16-rgba-7000.png png8-rgba-7000.png cmyk-prog-7000.jpg scanbomb.jpg heavy64.jpg); done
# Distinct URLs, so none is coalesced with another: a query string the server ignores.
paths=(); n=0; for m in "${mix[@]}"; do n=$((n + 1)); paths+=("$m?n=$n"); done
client "${paths[@]}" | awk -F'\t' '{ split($3, w, " "); kind[w[1]]++ } END { for (k in kind) printf "  %s × %d\n", k, kind[k] }'
echo "  idle VmHWM ${idle} MiB; peak VmHWM $(hwm) MiB; budget 192 MiB"

echo "== (b) an ordinary cold thumbnail while two scan bombs / two heavy 64-scan decodes are in flight"
for heavy in scanbomb.jpg heavy64.jpg; do
    start_daemon 192MiB
    client "ordinary.jpg?alone" | sed 's/^/  alone:   /'
    client "$heavy?1" "$heavy?2" "ordinary.jpg?cold" | sed "s/^/  beside $heavy: /"
done
