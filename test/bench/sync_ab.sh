#!/usr/bin/env bash
# Initial sync A/B: one standalone fake API server (5,000 nodes, 150,000 pods
# by default), then `placer serve --kubeconfig` of build A and of build B
# started in turn against it, PAIRS times (A, B, A, B, ...). Each run: time
# from start to /readyz 200, placer's CPU (user + system, the whole process)
# and RSS at that moment, and the fake's CPU spent meanwhile (serving the
# lists), then placer is stopped. Nothing is created while it runs, so every
# run lists the same cluster.
#
#   A=/tmp/placer-main B=build/placer test/bench/sync_ab.sh
#   PAIRS=5 NODES=500 A=... B=... test/bench/sync_ab.sh
#
# FAKE: the fake-apiserver binary (default build/test/fake-apiserver).
set -euo pipefail
A=${A:?the placer binary of build A}
B=${B:?the placer binary of build B}
FAKE=${FAKE:-build/test/fake-apiserver}
NODES=${NODES:-5000}
PODS_PER_NODE=${PODS_PER_NODE:-30}
PAIRS=${PAIRS:-3}
PORT=${PORT:-18444}
. "$(dirname "$0")/fake_lib.sh"

start_fake "$FAKE" --nodes "$NODES" --pods-per-node "$PODS_PER_NODE"

run() {  # run LABEL BINARY
  local fake0 start synced
  fake0=$(cpu_of "$FAKE_PID")
  start=$(now)
  start_placer "$2" "$PORT"
  synced=$(now)
  printf '%s: ready %.2f s; placer CPU %.2f s, RSS %d MB; fake CPU %.2f s; load %s\n' "$1" \
    "$(echo "$synced - $start" | bc)" "$(cpu_of "$PLACER_PID")" \
    $(($(awk '/VmRSS/ {print $2}' "/proc/$PLACER_PID/status") / 1024)) \
    "$(echo "$(cpu_of "$FAKE_PID") - $fake0" | bc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
  kill "$PLACER_PID"
  wait "$PLACER_PID" 2>/dev/null || true
  PLACER_PID=""
}

for pair in $(seq 1 "$PAIRS"); do
  run "pair $pair A" "$A"
  run "pair $pair B" "$B"
done
