#!/bin/bash
# What the checks that run inside a booted container share (Tests/Systemd/check.sh and
# Tests/Package/check.sh, each sourcing this from /report, where its host script copies it):
# each check appends "ok - NAME" or "not ok - NAME: why" to $results, and every wait is
# bounded. Sourced, never run.

ok() { echo "ok - $1" >>"$results"; }
not_ok() { echo "not ok - $1: $2" >>"$results"; }
# check NAME COMMAND...: ok when the command succeeds; otherwise its last lines are the reason.
check() {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(tail -n 5 <<<"$out" | tr '\n' ' ')"; fi
}
# wait_for SECONDS COMMAND...: polls every 0.1 s until the command succeeds, at most SECONDS.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}
