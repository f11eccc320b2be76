#!/usr/bin/env bash
# hello round trips against the daemon beside nginx + wrk serving a small static file, in the
# same run, each server pinned to one core and each load generator to the other. Rounds
# alternate (nginx, daemon, nginx, daemon…) so that the machine's changing load hits both.
#
#   Benchmarks/scripts/hello.sh [seconds] [connections] [rounds]
#
# Needs: nginx (nginx-light), wrk, taskset. Prints each result, the daemon's idle RSS and the
# CPU each server and generator used (a generator well under 100 % of its core is not the
# bottleneck).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
connections=${2:-16}
rounds=${3:-3}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}

swift build -c release --package-path Benchmarks --product imagecache-bench 2>&1 | tail -1
bench=Benchmarks/.build/release/imagecache-bench

work=$(mktemp -d /tmp/hello-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cpu_seconds() { # utime+stime of a process (all its threads), in seconds
  awk -v tck="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / tck }' "/proc/$1/stat"
}
rss() { awk '/VmRSS/ {print $2, $3}' "/proc/$1/status"; }

echo "== machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg); server on CPU $server_cpu, generators on CPU $client_cpu"

# nginx: one worker, a static file about the size of a hello answer.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/www"
chmod 755 "$work" "$work/www"  # nginx's workers run as an unprivileged user
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"name":"imagecached","version":"0.1.0","protocol":1,"providers":[{"name":"unsplash","configured":false},{"name":"flickr","configured":false},{"name":"pixabay","configured":false}]}}' > "$work/www/hello.json"
chmod 644 "$work/www/hello.json"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$port;
    root $work/www;
  }
}
CONF
taskset -c "$server_cpu" nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/hello.json" >/dev/null 2>&1 && break; sleep 0.1; done
nginx_worker=$(pgrep -P "$(cat "$work/nginx.pid")" | head -1)

# The daemon under test: the ImageCacheDaemon library as imagecached assembles it.
socket="$work/d.sock"
taskset -c "$server_cpu" "$bench" hello serve --socket "$socket" &
daemon=$!
pids+=($daemon)
for _ in $(seq 100); do [[ -S "$socket" ]] && break; sleep 0.1; done
sleep 1
echo "== daemon idle RSS: $(rss "$daemon") (release build, no client has connected yet)"

for round in $(seq "$rounds"); do
  echo "== round $round: nginx $(nginx -v 2>&1 | sed 's/.*\///') + wrk, $connections connections, ${seconds}s, GET /hello.json"
  before=$(cpu_seconds "$nginx_worker")
  taskset -c "$client_cpu" wrk -t1 -c"$connections" -d"${seconds}s" --latency "http://127.0.0.1:$port/hello.json" > "$work/wrk.txt"
  after=$(cpu_seconds "$nginx_worker")
  grep -E "Requests/sec|^ +50%|^ +99%|Socket errors|Non-2xx" "$work/wrk.txt" || true
  awk -v b="$before" -v a="$after" -v s="$seconds" 'BEGIN { printf "nginx worker CPU: %.2f s (%.0f%% of one core)\n", a-b, 100*(a-b)/s }'

  echo "== round $round: imagecached hello, $connections connections, ${seconds}s"
  taskset -c "$client_cpu" "$bench" hello load --socket "$socket" --connections "$connections" --duration "$seconds" --daemon-pid "$daemon"
  echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
done

echo "== daemon RSS after the load: $(rss "$daemon")"
kill -TERM "$daemon"
status=0
wait "$daemon" || status=$?
echo "daemon exit status after SIGTERM: $status"
