#!/usr/bin/env bash
# What the bare TLS + HTTP round trip costs, server and client apart: the
# /echo route (a 4 KB AdmissionReview in, a fixed answer out, no decision) of
# admission_loadgen, the server in one process (--serve) and 8 keep-alive
# clients in another (--target), A and B interleaved in pairs (the order
# alternates: A B, then B A).
#
#   A=/tmp/loadgen_main B=build/test/bench/admission_loadgen [CLIENT=...] [PAIRS=3] [SECONDS_PER_RUN=5] \
#     bash test/bench/echo_cost.sh
#
# A and B are admission_loadgen binaries; each serves with its own server
# code. CLIENT (default: A) is the binary every run's clients come from, so
# that only the server differs; CLIENT=same runs each arm's clients from its
# own binary (the loadgen's client code A/B too). Per run: req/s, and the CPU
# (user + system, from /proc) per request of the server process and of the
# client process (its connects and TLS handshakes included, 8 of them).
set -euo pipefail
A=${A:?A=admission_loadgen binary}
B=${B:?B=admission_loadgen binary}
CLIENT=${CLIENT:-$A}
PAIRS=${PAIRS:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
CLK=$(getconf CLK_TCK)

cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

run() {  # $1 label, $2 server binary, $3 client binary
  local dir pid port t0 t1 out c0 c1 requests
  dir=$(mktemp -d)
  "$2" --serve "$dir" --nodes 500 >"$dir/out" 2>&1 &
  pid=$!
  for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.1; done
  t0=$(cpu_ticks "$pid")
  out=$(/usr/bin/time -f 'client_cpu %U %S' "$3" --target "$dir" --route echo --seconds "$SECONDS_PER_RUN" 2>&1)
  t1=$(cpu_ticks "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  requests=$(sed -n 's/^\/echo *requests=\([0-9]*\).*/\1/p' <<<"$out")
  awk -v label="$1" -v req="$requests" -v t0="$t0" -v t1="$t1" -v clk="$CLK" -v line="$(grep '^/echo' <<<"$out")" \
      -v cl="$(grep '^client_cpu' <<<"$out")" 'BEGIN {
    split(cl, c, " "); rate = line; sub(/.*failures=[0-9]* */, "", rate); sub(/ req\/s.*/, "", rate);
    p99 = line; sub(/.*p99=/, "", p99); sub(/ .*/, "", p99);
    printf "%s: %s req/s  p99 %s us  server %.1f us/request  client %.1f us/request\n", label, rate, p99,
      (t1 - t0) / clk * 1e6 / req, (c[2] + c[3]) * 1e6 / req }'
}

uptime
for pair in $(seq "$PAIRS"); do
  clientA=$CLIENT; clientB=$CLIENT
  if [ "$CLIENT" = same ]; then clientA=$A; clientB=$B; fi
  if [ $((pair % 2)) = 1 ]; then
    run "pair $pair A" "$A" "$clientA"; run "pair $pair B" "$B" "$clientB"
  else
    run "pair $pair B" "$B" "$clientB"; run "pair $pair A" "$A" "$clientA"
  fi
done
uptime
