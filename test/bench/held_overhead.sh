#!/usr/bin/env bash
# Issue 15: what holding 1,000 idle keep-alive TLS connections and 200
# slowloris connections (plus 50 that never start TLS) costs, with no
# admissions at all. CPU per second of wall time over SECONDS_PER_RUN, after
# the first wave of slowloris reconnections:
#   the server (admission_loadgen --serve: the webhook's listener and routes),
#   by lane: nice 0 (the I/O thread; workers idle), nice 5 (the handshake
#   lane), nice 10 (the slow lane);
#   the holder (the attacker, same machine).
# A steadier figure than a throughput ratio on a shared machine: it is CPU
# time, not latency.
#
#   BUILD=build test/bench/held_overhead.sh
#   SERVER_LOADGEN=/path/to/other/admission_loadgen BUILD=build test/bench/held_overhead.sh   # another build's server
set -euo pipefail
BUILD=${BUILD:-build}
NODES=${NODES:-500}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-8}
SLOWLORIS_INTERVAL=${SLOWLORIS_INTERVAL:-100}
LOADGEN="$BUILD/test/bench/admission_loadgen"
SERVER_LOADGEN=${SERVER_LOADGEN:-$LOADGEN}
. "$(dirname "$0")/held_lib.sh"
start_server
hold
# Past the header deadline (5 s) of the first slowloris connections, so that
# their reconnections are in the figure.
sleep 6
ticks() {  # "<nice> <utime+stime>" per server thread, then the holder's total
  for t in /proc/"$SERVER_PID"/task/*; do awk '{print "nice" $19, $14 + $15}' "$t/stat"; done
  awk '{print "holder", $14 + $15}' /proc/"$HOLDER_PID"/stat
}
ticks >"$DIR/t0"
sleep "$SECONDS_PER_RUN"
ticks >"$DIR/t1"
hz=$(getconf CLK_TCK)
paste "$DIR/t0" "$DIR/t1" | awk -v s="$SECONDS_PER_RUN" -v hz="$hz" '
  { d[$1] += $4 - $2; if ($1 != "holder") server += $4 - $2 }
  END {
    for (k in d) if (k != "holder") printf "server %-7s %6.1f ms/s\n", k, d[k] * 1000 / hz / s
    printf "server total   %6.1f ms/s\n", server * 1000 / hz / s
    printf "holder         %6.1f ms/s\n", d["holder"] * 1000 / hz / s
  }' | sort
