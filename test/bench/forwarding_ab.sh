#!/usr/bin/env bash
# Forwarding A/B: `failover_loadgen --forwarding` (2 replicas; each dry-run
# review to the leader and via the follower in turn) with the replicas'
# `placer` binary of build A, then of build B, ROUNDS times (A, B, A, B, ...).
# The loadgen runs the `placer` compiled into it ($BUILD/placer), so each arm
# copies its binary there first; the binary that was there is put back at
# the end. One line per run: the loadgen's three lines and `uptime`'s load.
#
#   A=/tmp/placer_main11 B=/tmp/placer_fwd BUILD=build test/bench/forwarding_ab.sh
#   ROUNDS=5 REQUESTS=3000 NODES=200 A=... B=... test/bench/forwarding_ab.sh
set -euo pipefail
A=${A:?the placer binary of build A}
B=${B:?the placer binary of build B}
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-5}
REQUESTS=${REQUESTS:-3000}
NODES=${NODES:-200}
LOADGEN=$BUILD/test/bench/failover_loadgen
SAVED=$(mktemp)
cp "$BUILD/placer" "$SAVED"
trap 'cp "$SAVED" "$BUILD/placer"; rm -f "$SAVED"' EXIT

run() {  # run LABEL BINARY
  cp "$2" "$BUILD/placer"
  local load out
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  out=$("$LOADGEN" --forwarding --requests "$REQUESTS" --nodes "$NODES" 2>/dev/null | tail -3 | sed 's/^ *//' | paste -sd';')
  printf '%s | load %s -> %s | %s\n' "$1" "$load" "$(cut -d' ' -f1-3 /proc/loadavg)" "$out"
}

for ((i = 1; i <= ROUNDS; i++)); do
  if ((i % 2)); then
    run "round $i A" "$A"
    run "round $i B" "$B"
  else
    run "round $i B" "$B"
    run "round $i A" "$A"
  fi
done
