#!/usr/bin/env bash
# The floor of an inline memory-hit answer: show_floor.c, a minimal C server speaking the
# daemon's wire format, in its three ways of sending the base64 (one buffer; write + sendfile
# + write; write + sendfile of base64 and the line's end), driven by the daemon's own
# generator, pinned like show.sh (server on CPU 0, generator on CPU 1), rounds interleaved.
# Its figures bound what the daemon's send path can reach; when the generator's CPU reads
# near 100 %, the generator, not the server, is the limit.
#
#   Benchmarks/scripts/show-floor.sh [seconds] [rounds]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-4}
rounds=${2:-3}
bench=${BENCH:-Benchmarks/.build/release/imagecache-bench}
work=$(mktemp -d /tmp/show-floor.XXXXXX)
server=""
trap '[[ -n "$server" ]] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
cc -O2 -o "$work/show_floor" Benchmarks/scripts/show_floor.c
for round in $(seq "$rounds"); do
  for mode in 0 1 2; do
    taskset -c "${SERVER_CPU:-0}" "$work/show_floor" "$work/floor.sock" "$mode" &
    server=$!
    for _ in $(seq 100); do [[ -S "$work/floor.sock" ]] && break; sleep 0.05; done
    echo "round $round, mode $mode: $(taskset -c "${CLIENT_CPU:-1}" "$bench" show load --socket "$work/floor.sock" \
      --url http://127.0.0.1/x.jpg --size 244 --inline --duration "$seconds" --daemon-pid "$server" \
      | grep -E '^(rate|latency|generator CPU|daemon CPU)' | sed 's/daemon CPU/server CPU/' | tr '\n' ' ')"
    kill "$server"; wait "$server" 2>/dev/null || true
    server=""
    rm -f "$work/floor.sock"
  done
done
