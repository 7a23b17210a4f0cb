#!/usr/bin/env bash
# Issue 15's connection figures, three processes: the webhook server
# (admission_loadgen --serve: 5,000 nodes, 150,000 pods, default profile), a
# holder that opens 1,000 idle keep-alive TLS connections and 200 slowloris
# connections (plus 50 that never start TLS) and holds them, and the clients
# whose admissions are measured. Runs A (nothing held) and B (held) in turn:
#   closed loop, 8 keep-alive clients: throughput B/A;
#   open loop at RATE/s over 4 clients: p99 of an admission, A and B;
#   256 keep-alive clients, open loop at RATE256/s: the slowest answer (B).
# The server's RSS before and with the idle connections is printed by the holder.
#
#   BUILD=build test/bench/connections.sh
#   PAIRS=3 SECONDS_PER_RUN=8 SLOWLORIS_INTERVAL=100 DRY_RUN=0 test/bench/connections.sh
#   AA=1 PAIRS=4 test/bench/connections.sh   # the closed loop's noise: B holds nothing
# SERVER_LOADGEN=path runs the server from another build (an A/B of two
# builds' servers, with the same clients and holder): e.g. main's binary.
# LATENCY_LOG=prefix writes each open-loop run's answers (start, latency) and
# the holder's slowloris passes to prefix.<run>.{answers,passes}.
set -euo pipefail
BUILD=${BUILD:-build}
NODES=${NODES:-5000}
PAIRS=${PAIRS:-2}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-8}
RATE=${RATE:-400}
RATE256=${RATE256:-1000}
SLOWLORIS_INTERVAL=${SLOWLORIS_INTERVAL:-100}
# DRY_RUN=1: dry-run reviews (the same decisions, nothing reserved), so that
# every run sees the same view; otherwise each run's reservations stay in the
# view for their lifetime and the runs after it decide against more of them.
DRY_RUN=${DRY_RUN:-1}
LOADGEN="$BUILD/test/bench/admission_loadgen"
SERVER_LOADGEN=${SERVER_LOADGEN:-$LOADGEN}
# AA=1: the closed-loop pairs' B runs hold nothing either (an A/A run: how
# far the ratio moves with no difference between the arms).
AA=${AA:-0}
. "$(dirname "$0")/held_lib.sh"
start_server
cat "$DIR/server.out"

clients() {  # label, then admission_loadgen client options
  local label=$1; shift
  echo "== $label ($(uptime | sed 's/.*load/load/'))"
  local rc=0
  "$LOADGEN" --target "$DIR" --nodes "$NODES" --route mutate --dry-run "$DRY_RUN" "$@" >"$DIR/clients.out" 2>&1 || rc=$?
  grep -E '^/mutate|failures' "$DIR/clients.out" || true
  [ "$rc" -eq 0 ] || { echo "(the clients exited with status $rc:)"; tail -5 "$DIR/clients.out"; }
}
rate_of() { sed -n 's/^\/mutate .* \([0-9][0-9]*\) req\/s.*/\1/p' "$DIR/clients.out"; }
closed_a() { clients "A closed loop, 8 clients" --clients 8 --seconds "$SECONDS_PER_RUN"; A_RATE=$(rate_of); }
closed_b() {
  if [ "$AA" = 1 ]; then
    clients "A' closed loop, 8 clients (A/A: nothing held)" --clients 8 --seconds "$SECONDS_PER_RUN"
  else
    hold
    clients "B closed loop, 8 clients, 1,000 idle + 200 slowloris held" --clients 8 --seconds "$SECONDS_PER_RUN"
    release
  fi
  B_RATE=$(rate_of)
}
# The closed-loop pairs alternate their order (A B, then B A, ...), so that
# a drift of the machine's speed within a pair does not always favour A.
for i in $(seq "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then closed_a; closed_b; else closed_b; closed_a; fi
  [ -n "$A_RATE" ] && [ -n "$B_RATE" ] &&
    echo "pair $i: closed-loop throughput B/A = $(awk -v a="$A_RATE" -v b="$B_RATE" 'BEGIN { printf "%.3f", b / a }')"
done
for i in $(seq "$PAIRS"); do
  clients "A open loop ${RATE}/s, 4 clients" --clients 4 --rate "$RATE" --seconds "$SECONDS_PER_RUN" $(log "A$i.answers")
  hold "B$i"
  clients "B open loop ${RATE}/s, 4 clients, held" --clients 4 --rate "$RATE" --seconds "$SECONDS_PER_RUN" $(log "B$i.answers")
  release
done
hold
clients "B 256 keep-alive clients, open loop ${RATE256}/s, held" --clients 256 --rate "$RATE256" --seconds "$SECONDS_PER_RUN"
release
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
grep '^server:' "$DIR/server.out"
