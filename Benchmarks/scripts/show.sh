#!/usr/bin/env bash
# Memory-hit thumbnail.show against a real imagecached, beside nginx + wrk serving the same
# file over loopback TCP and redis GET of the same bytes over a Unix socket, in one run. Each
# server is pinned to one core and each load generator to the other; rounds alternate
# (nginx, redis, daemon with paths, daemon inline) so that the machine's changing load hits all.
# redis is driven twice: by redis-benchmark (its own tool, which saturates before redis does)
# and by the daemon's own closed-loop generator (`imagecache-bench show redis`: same load
# model, same client, a saturated server), so both comparisons are on the page.
#
#   Benchmarks/scripts/show.sh [seconds] [connections] [rounds]
#
# Needs: nginx (nginx-light), wrk, redis-server (its redis-benchmark and redis-cli), taskset.
# The image is a ~30 KB JPEG (SHOW_BYTES) fetched once by the daemon from the nginx; the file
# the daemon delivers is what nginx and redis then serve, so all three move the same bytes.
# DAEMON_BINARY defaults to the release imagecached built through the Benchmarks package.
# DEPTH (default 1) keeps that many requests in flight per connection for the daemon.
# PEERS=0 measures the daemon alone (nginx still serves the source image): for interleaved
# A/B runs of two daemon binaries (show-ab.sh). MODES picks the daemon's rounds ("path inline").
# TRACE=PREFIX writes every answer's latency to PREFIX-MODE-ROUND.txt (trace_summary.py reads it).
set -euo pipefail
cd "$(dirname "$0")/../.."
source Benchmarks/scripts/loopback-config.sh
seconds=${1:-10}
connections=${2:-16}
rounds=${3:-3}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
depth=${DEPTH:-1}
peers=${PEERS:-1}
modes=${MODES:-path inline}
bytes=${SHOW_BYTES:-30720}

if [[ -z "${SKIP_BUILD:-}" ]]; then
  swift build -c release --package-path Benchmarks --product imagecache-bench 2>&1 | tail -1
  [[ -n "${DAEMON_BINARY:-}" ]] || swift build -c release --package-path Benchmarks --product imagecached 2>&1 | tail -1
fi
bench=${BENCH:-Benchmarks/.build/release/imagecache-bench}
daemon_binary=${DAEMON_BINARY:-Benchmarks/.build/release/imagecached}

work=$(mktemp -d /tmp/show-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cpu_seconds() { awk -v tck="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / tck }' "/proc/$1/stat"; }
rss() { awk '/VmRSS/ {print $2, $3}' "/proc/$1/status"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
to_us() { # "1.00ms" / "512.00us" / "1.2s" -> microseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1000000; else print n }'
}

echo "== machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg); servers on CPU $server_cpu, generators on CPU $client_cpu"

# nginx: one worker, access log off, serving the source image (for the daemon) and later the
# delivered thumbnail (for wrk).
port=$(free_port)
mkdir -p "$work/www"
chmod 755 "$work" "$work/www"  # nginx's workers run as an unprivileged user
width=$("$bench" show prepare --out "$work/www/source.jpg" --bytes "$bytes")
chmod 644 "$work/www/source.jpg"
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
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/source.jpg" >/dev/null 2>&1 && break; sleep 0.1; done
nginx_worker=$(pgrep -P "$(cat "$work/nginx.pid")" | head -1)

# The daemon: its own config, cache and socket; loopback HTTP allowed for the one fetch.
socket="$work/d.sock"
loopback_config "$work"
echo "== daemon: $daemon_binary"
taskset -c "$server_cpu" "$daemon_binary" --config "$work/cache.conf" --socket "$socket" 2>"$work/daemon.log" &
daemon=$!
pids+=($daemon)
for _ in $(seq 100); do [[ -S "$socket" ]] && break; sleep 0.1; done
sleep 1
echo "== daemon idle RSS: $(rss "$daemon") (no client has connected yet)"

url="http://127.0.0.1:$port/source.jpg"
IFS=$'\t' read -r thumb_path thumb_bytes first_source second_source < <("$bench" show prime --socket "$socket" --url "$url" --size "$width")
echo "== primed: $url (width $width) → $thumb_path, $thumb_bytes bytes; sources $first_source then $second_source"
cp "$thumb_path" "$work/www/thumb.jpg"
chmod 644 "$work/www/thumb.jpg"

if [[ $peers != 0 ]]; then
# redis: our own instance on a Unix socket (no TCP port, no persistence), the same bytes as a value.
redis_socket="$work/redis.sock"
taskset -c "$server_cpu" redis-server --port 0 --unixsocket "$redis_socket" --unixsocketperm 700 \
  --save '' --appendonly no --dir "$work" --logfile "$work/redis.log" &
redis=$!
pids+=($redis)
for _ in $(seq 100); do redis-cli -s "$redis_socket" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -s "$redis_socket" -x SET thumb < "$work/www/thumb.jpg" >/dev/null
echo "== redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'): value of $(redis-cli -s "$redis_socket" STRLEN thumb) bytes"
fi

report() { # name rate p99_us
  printf '%-26s %10.0f req/s   p99 %7.0f µs\n' "$1" "$2" "$3"
}

for round in $(seq "$rounds"); do
  echo "== round $round ($connections connections, ${seconds}s each), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  if [[ $peers != 0 ]]; then
  before=$(cpu_seconds "$nginx_worker")
  taskset -c "$client_cpu" wrk -t1 -c"$connections" -d"${seconds}s" --latency "http://127.0.0.1:$port/thumb.jpg" > "$work/wrk.txt"
  after=$(cpu_seconds "$nginx_worker")
  grep -E "Requests/sec|^ +50%|^ +99%|Socket errors|Non-2xx|Transfer/sec" "$work/wrk.txt" || true
  awk -v b="$before" -v a="$after" -v s="$seconds" 'BEGIN { printf "nginx worker CPU: %.2f s (%.0f%% of one core)\n", a-b, 100*(a-b)/s }'
  nginx_rate=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
  nginx_p99=$(to_us "$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")")

  # redis-benchmark runs a request count, not a duration: aim at the same length from nginx's rate.
  requests=$(awk -v r="$nginx_rate" -v s="$seconds" 'BEGIN { n = int(r * s); if (n < 100000) n = 100000; print n }')
  before=$(cpu_seconds "$redis")
  taskset -c "$client_cpu" redis-benchmark -s "$redis_socket" -c "$connections" -n "$requests" GET thumb > "$work/redis.txt" 2>&1
  after=$(cpu_seconds "$redis")
  grep -A3 -E "throughput summary" "$work/redis.txt" | sed 's/^/redis: /'
  redis_rate=$(awk '/throughput summary/ {print $3}' "$work/redis.txt")
  redis_p99=$(awk '/avg +min +p50/ { getline; print $5 * 1000 }' "$work/redis.txt")
  redis_time=$(awk -v n="$requests" -v r="$redis_rate" 'BEGIN { print n / r }')
  awk -v b="$before" -v a="$after" -v s="$redis_time" 'BEGIN { printf "redis-server CPU: %.2f s (%.0f%% of one core)\n", a-b, 100*(a-b)/s }'
  echo "-- redis GET through the daemon's generator"
  taskset -c "$client_cpu" "$bench" show redis --socket "$redis_socket" --key thumb --connections "$connections" \
    --duration "$seconds" --server-pid "$redis" | tee "$work/redis-same.txt"
  same_rate=$(awk '/^rate:/ {print $2}' "$work/redis-same.txt"); same_p99=$(awk '/^latency:/ {print $6}' "$work/redis-same.txt")
  fi

  for mode in $modes; do
    flag=""; [[ $mode == inline ]] && flag="--inline"
    [[ -n "${TRACE:-}" ]] && flag="$flag --trace $TRACE-$mode-$round.txt"
    echo "-- imagecached thumbnail.show ($mode, depth $depth)"
    taskset -c "$client_cpu" "$bench" show load --socket "$socket" --url "$url" --size "$width" $flag \
      --connections "$connections" --depth "$depth" --duration "$seconds" --daemon-pid "$daemon" | tee "$work/show-$mode.txt"
  done
  [[ $peers == 0 ]] && continue
  path_rate=$(awk '/^rate:/ {print $2}' "$work/show-path.txt"); path_p99=$(awk '/^latency:/ {print $6}' "$work/show-path.txt")
  inline_rate=$(awk '/^rate:/ {print $2}' "$work/show-inline.txt"); inline_p99=$(awk '/^latency:/ {print $6}' "$work/show-inline.txt")
  echo "== round $round summary (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
  report "nginx + wrk" "$nginx_rate" "$nginx_p99"
  report "redis GET (unix socket)" "$redis_rate" "$redis_p99"
  report "redis GET, same generator" "$same_rate" "$same_p99"
  report "show, path" "$path_rate" "$path_p99"
  report "show, inline" "$inline_rate" "$inline_p99"
  for mode in path inline; do
    r=${mode}_rate; p=${mode}_p99
    awk -v m="$mode" -v r="${!r}" -v p="${!p}" -v nr="$nginx_rate" -v np="$nginx_p99" -v rr="$redis_rate" -v rp="$redis_p99" 'BEGIN {
      printf "ratio %-6s: rate %.2f × nginx, %.2f × redis; p99 %.2f × nginx, %.2f × redis\n", m, r / nr, r / rr, p / np, p / rp }'
    awk -v m="$mode" -v r="${!r}" -v p="${!p}" -v sr="$same_rate" -v sp="$same_p99" 'BEGIN {
      printf "ratio %-6s beside redis through the same generator: rate %.2f ×, p99 %.2f ×\n", m, r / sr, p / sp }'
  done
done

echo "== daemon RSS after the load: $(rss "$daemon")"
kill -TERM "$daemon"
status=0
wait "$daemon" || status=$?
echo "daemon exit status after SIGTERM: $status"
