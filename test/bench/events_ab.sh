#!/usr/bin/env bash
# Issue 19: what the Event machinery costs admission. Interleaved pairs of
# admission_loadgen runs, open loop at RATE requests/s:
#   A  --events 0: no PlacedPods, no recorder (the in-process Events API runs
#      idle and must receive 0 Events);
#   B  --events 1: every decision recorded by PlacedPods; each assigned pod
#      appears in the watch APPEAR_MS after its answer (the loadgen's API
#      server model), PlacedPods queues its Scheduled Event and the recorder
#      POSTs it over keep-alive TLS to the in-process Events API, which counts
#      it (~1 per assigned pod).
# Prints one line per run and, per pair, the ratios B/A of p50 and p99.
# The view (NODES nodes x PODS_PER_NODE pods) and the pod shape (SHAPE, see
# admission_loadgen --shape; -1 the mix) are chosen so that RATE does not
# saturate the server: the figure is the machinery's cost, not queueing.
#
#   BUILD=build test/bench/events_ab.sh
#   PAIRS=5 RATE=2000 SECONDS_PER_RUN=20 NODES=1000 SHAPE=5 test/bench/events_ab.sh
set -euo pipefail
BUILD=${BUILD:-build}
PAIRS=${PAIRS:-3}
RATE=${RATE:-2000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-20}
NODES=${NODES:-1000}
PODS_PER_NODE=${PODS_PER_NODE:-30}
SHAPE=${SHAPE:-5}
CLIENTS=${CLIENTS:-8}
APPEAR_MS=${APPEAR_MS:-10}
NICE=${NICE:-19}
LOADGEN="$BUILD/test/bench/admission_loadgen"
[ -x "$LOADGEN" ] || { echo "no $LOADGEN" >&2; exit 1; }

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
# One run; its output in $OUT.
run() {
  nice -n "$NICE" "$LOADGEN" --nodes "$NODES" --pods-per-node "$PODS_PER_NODE" --shape "$SHAPE" \
    --clients "$CLIENTS" --rate "$RATE" --seconds "$SECONDS_PER_RUN" --route mutate \
    --appear-ms "$APPEAR_MS" --events "$1" >"$OUT"
}
# "p50_us p99_us req_per_s assigned events_received" of the run in $OUT.
figures() {
  local mutate
  mutate=$(grep -m1 '^/mutate' "$OUT")
  echo "$(grep -o 'p50=[0-9]*' <<<"$mutate" | cut -d= -f2) $(grep -o 'p99=[0-9]*' <<<"$mutate" | cut -d= -f2)" \
       "$(grep -o '[0-9]* req/s' <<<"$mutate" | awk '{print $1}')" \
       "$(grep -o 'assigned=[0-9]*' "$OUT" | head -1 | cut -d= -f2)" \
       "$(grep -o 'Events API: [0-9]*' "$OUT" | awk '{print $3}')"
}

echo "RATE=$RATE/s SECONDS_PER_RUN=$SECONDS_PER_RUN NODES=$NODES PODS_PER_NODE=$PODS_PER_NODE SHAPE=$SHAPE CLIENTS=$CLIENTS APPEAR_MS=$APPEAR_MS"
printf '%-4s %-4s %-28s %9s %9s %8s %9s %9s\n' pair arm uptime p50_us p99_us req/s assigned events
for pair in $(seq 1 "$PAIRS"); do
  for arm in A B; do
    events=0; [ "$arm" = B ] && events=1
    load=$(uptime | sed 's/.*load average: //')
    run "$events"
    read -r p50 p99 rps assigned received < <(figures)
    printf '%-4s %-4s %-28s %9s %9s %8s %9s %9s\n' "$pair" "$arm" "$load" "$p50" "$p99" "$rps" "$assigned" "$received"
    grep -E 'Engine::place alone|events:' "$OUT" | sed 's/^/     /'
    eval "p50_$arm=$p50 p99_$arm=$p99"
  done
  awk -v a50="$p50_A" -v b50="$p50_B" -v a99="$p99_A" -v b99="$p99_B" -v p="$pair" \
    'BEGIN { printf "pair %s: p50 B/A %.2f  p99 B/A %.2f\n", p, b50 / a50, b99 / a99 }'
done
