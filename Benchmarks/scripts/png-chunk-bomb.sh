#!/usr/bin/env bash
# One `thumbnail.show` of an image file, served over loopback, by a fresh daemon: prints the
# answer, how long it took, and the daemon's peak RSS (VmHWM) before and after. For hostile
# files whose cost is not in their size, such as the libpng crashers that declare a 1 GiB
# chunk in 57 bytes (docs/benchmarks.md, "Hostile decodes").
#
#   Benchmarks/scripts/png-chunk-bomb.sh DAEMON FILE
set -euo pipefail
source "$(dirname "$0")/loopback-config.sh"
daemon=$1; file=$2
work=$(mktemp -d /tmp/png-chunk-bomb.XXXXXX)
mkdir -p $work/www; cp "$file" $work/www/bomb.png
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server $port --bind 127.0.0.1 --directory $work/www >/dev/null 2>&1 & server=$!
loopback_config "$work"
"$daemon" --config $work/cache.conf --socket $work/d.sock 2>$work/log & pid=$!
for i in $(seq 100); do [[ -S $work/d.sock ]] && break; sleep 0.05; done
sleep 0.3
before=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
python3 - "$work/d.sock" "http://127.0.0.1:$port/bomb.png" <<'PY'
import socket, json, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
t = time.monotonic()
s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "thumbnail.show", "params": {"slot": 0, "url": sys.argv[2]}}) + "\n").encode())
buf = b""
while True:
    buf += s.recv(65536)
    lines = [json.loads(l) for l in buf.split(b"\n") if l.strip()] if buf.endswith(b"\n") else []
    answers = [l for l in lines if l.get("id") == 1]
    if answers: break
r = answers[0]
print("answer:", json.dumps(r)[:300], f"({(time.monotonic() - t) * 1000:.0f} ms)")
PY
after=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
echo "VmHWM: $before kB idle → $after kB after (+$(( (after - before) / 1024 )) MiB)"
kill $pid $server; wait $pid 2>/dev/null || true; rm -rf $work
