#!/usr/bin/env bash
# The floor of an inline memory-hit answer, driven by the daemon's own generator, pinned like
# show.sh (server on CPU 0, generator on CPU 1), rounds interleaved:
#   c0, c1, c2   show_floor.c, a minimal C epoll server speaking the daemon's wire format, in its
#                three ways of sending the base64 (one buffer; write + sendfile + write; write +
#                sendfile of base64 and the line's end: the daemon's way);
#   nio-file,    `imagecache-bench show nio-floor`, a minimal SwiftNIO server on one event loop
#   nio-buffer   (head + sealed memfd: the daemon's way; or one buffer per answer).
# The C figures bound what any server can reach here; the NIO figures bound what the daemon can
# reach on NIO: the gap between nio-file and the daemon's inline rate is the daemon's own code.
# When the generator's CPU reads near 100 %, the generator, not the server, is the limit.
#
#   Benchmarks/scripts/show-floor.sh [seconds] [rounds]     (FLOORS="c2 nio-file" to choose)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-4}
rounds=${2:-3}
floors=${FLOORS:-c0 c1 c2 nio-file nio-buffer}
bench=${BENCH:-Benchmarks/.build/release/imagecache-bench}
work=$(mktemp -d /tmp/show-floor.XXXXXX)
server=""
trap '[[ -n "$server" ]] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
cc -O2 -o "$work/show_floor" Benchmarks/scripts/show_floor.c
for round in $(seq "$rounds"); do
  for floor in $floors; do
    case $floor in
      c*) taskset -c "${SERVER_CPU:-0}" "$work/show_floor" "$work/floor.sock" "${floor#c}" & ;;
      nio-*) taskset -c "${SERVER_CPU:-0}" "$bench" show nio-floor --socket "$work/floor.sock" --mode "${floor#nio-}" & ;;
    esac
    server=$!
    for _ in $(seq 100); do [[ -S "$work/floor.sock" ]] && break; sleep 0.05; done
    echo "round $round, $floor: $(taskset -c "${CLIENT_CPU:-1}" "$bench" show load --socket "$work/floor.sock" \
      --url http://127.0.0.1/x.jpg --size 244 --inline --duration "$seconds" --daemon-pid "$server" \
      | grep -E '^(rate|latency|generator CPU|daemon CPU)' | sed 's/daemon CPU/server CPU/' | tr '\n' ' ')"
    kill "$server"; wait "$server" 2>/dev/null || true
    server=""
    rm -f "$work/floor.sock"
  done
done
