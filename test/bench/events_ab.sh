#!/usr/bin/env bash
# Issue 19: what the Event machinery costs admission. Interleaved pairs of
# runs, open loop at RATE requests/s, each run three processes as on a
# cluster, where the Events API is the API server's, on its own cores:
#   sink     admission_loadgen --events-sink: the Events API (TLS, 201 per
#            Event, counts them); runs in both arms;
#   server   admission_loadgen --serve: placer's webhook over the generated
#            view, with the API server model (each assigned pod appears in
#            the pod watch APPEAR_MS after its answer);
#   clients  admission_loadgen --target: the CLIENTS TLS clients, latency
#            measured from each scheduled send.
# Arms:
#   A  --events 0: no PlacedPods, no recorder (the sink must receive 0 Events);
#   B  --events 1: every decision recorded by PlacedPods; as each assigned pod
#      appears, its Scheduled Event is queued and the recorder POSTs it over
#      keep-alive TLS to the sink (~1 per assigned pod).
# ARMS="A A" runs A against A: the noise a ratio has to beat.
# Prints one line per run and, per pair, the ratios second/first of p50 and
# p99; then the CPU seconds of each process over the run (server = placer,
# with its Event sender thread apart; sink; clients).
# The view (NODES nodes x PODS_PER_NODE pods) and the pod shape (SHAPE, see
# admission_loadgen --shape; -1 the mix) are chosen so that RATE does not
# saturate the server: the figure is the machinery's cost, not queueing.
#
#   BUILD=build test/bench/events_ab.sh
#   PAIRS=5 ARMS="A A" SINK_NICE=0 RATE=2000 SECONDS_PER_RUN=20 NODES=1000 SHAPE=5 test/bench/events_ab.sh
set -euo pipefail
BUILD=${BUILD:-build}
PAIRS=${PAIRS:-3}
ARMS=${ARMS:-A B}
RATE=${RATE:-2000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-20}
NODES=${NODES:-1000}
PODS_PER_NODE=${PODS_PER_NODE:-30}
SHAPE=${SHAPE:-5}
CLIENTS=${CLIENTS:-8}
APPEAR_MS=${APPEAR_MS:-10}
# The sink stands for the API server, which on a cluster has cores of its
# own: here it shares placer's two, so it runs at SINK_NICE (idle priority by
# default) and takes what placer and the clients leave. SINK_NICE=$NICE
# puts it on an equal footing (its CPU then counts against admission).
NICE=${NICE:-0}
SINK_NICE=${SINK_NICE:-19}
LOADGEN="$BUILD/test/bench/admission_loadgen"
[ -x "$LOADGEN" ] || { echo "no $LOADGEN" >&2; exit 1; }

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
OUT="$WORK/out"
VIEW=(--nodes "$NODES" --pods-per-node "$PODS_PER_NODE" --shape "$SHAPE")
# One run (--events $1); the clients' output in $OUT.
run() {
  rm -rf "$WORK/sink" "$WORK/server"
  mkdir -p "$WORK/sink" "$WORK/server"
  nice -n "$SINK_NICE" "$LOADGEN" --events-sink "$WORK/sink" "${VIEW[@]}" >"$WORK/sink.log" &
  local sink=$!
  nice -n "$NICE" "$LOADGEN" --serve "$WORK/server" "${VIEW[@]}" --appear-ms "$APPEAR_MS" --events "$1" \
    --events-api "$WORK/sink" >"$WORK/server.log" &
  local server=$!
  PIDS=("$sink" "$server")
  nice -n "$NICE" "$LOADGEN" --target "$WORK/server" "${VIEW[@]}" --clients "$CLIENTS" --rate "$RATE" \
    --seconds "$SECONDS_PER_RUN" --route mutate --appear-ms "$APPEAR_MS" --events "$1" --events-api "$WORK/sink" \
    --server-pid "$server" --sink-pid "$sink" >"$OUT"
  kill -TERM "$server" "$sink"
  wait "$server" "$sink" || true
  PIDS=()
}
# "p50_us p99_us req_per_s assigned events_received cpu_server cpu_sender cpu_sink cpu_clients" of the run in $OUT.
figures() {
  local mutate cpu
  mutate=$(grep -m1 '^/mutate' "$OUT")
  cpu=$(grep -m1 'cpu:' "$OUT")
  echo "$(grep -o 'p50=[0-9]*' <<<"$mutate" | cut -d= -f2) $(grep -o 'p99=[0-9]*' <<<"$mutate" | cut -d= -f2)" \
       "$(grep -o '[0-9]* req/s' <<<"$mutate" | awk '{print $1}')" \
       "$(grep -o 'assigned=[0-9]*' "$OUT" | head -1 | cut -d= -f2)" \
       "$(grep -o 'Events API: [0-9]*' "$OUT" | awk '{print $3}')" \
       "$(sed -E 's/.*server=([0-9.]+) s \(event sender thread ([0-9.]+) s\) sink=([0-9.]+) s clients=([0-9.]+) s.*/\1 \2 \3 \4/' <<<"$cpu")"
}

echo "ARMS=\"$ARMS\" NICE=$NICE SINK_NICE=$SINK_NICE RATE=$RATE/s SECONDS_PER_RUN=$SECONDS_PER_RUN NODES=$NODES PODS_PER_NODE=$PODS_PER_NODE SHAPE=$SHAPE CLIENTS=$CLIENTS APPEAR_MS=$APPEAR_MS"
printf '%-4s %-4s %-22s %8s %8s %6s %8s %7s %7s %7s %6s %7s\n' pair arm uptime p50_us p99_us req/s assigned events \
  cpu_srv sender cpu_snk cpu_cl
for pair in $(seq 1 "$PAIRS"); do
  n=0
  for arm in $ARMS; do
    n=$((n + 1))
    events=0; [ "$arm" = B ] && events=1
    load=$(uptime | sed 's/.*load average: //')
    run "$events"
    read -r p50 p99 rps assigned received cpu_server cpu_sender cpu_sink cpu_clients < <(figures)
    printf '%-4s %-4s %-22s %8s %8s %6s %8s %7s %7s %7s %6s %7s\n' "$pair" "$arm" "$load" "$p50" "$p99" "$rps" \
      "$assigned" "$received" "$cpu_server" "$cpu_sender" "$cpu_sink" "$cpu_clients"
    grep -E 'events:' "$OUT" | sed 's/^/     /' || true
    eval "p50_$n=$p50 p99_$n=$p99"
  done
  [ "$n" -ge 2 ] || continue
  awk -v a50="$p50_1" -v b50="$p50_2" -v a99="$p99_1" -v b99="$p99_2" -v p="$pair" -v arms="$ARMS" \
    'BEGIN { split(arms, a, " "); printf "pair %s: p50 %s/%s %.2f  p99 %s/%s %.2f\n", p, a[2], a[1], b50 / a50, a[2], a[1], b99 / a99 }'
done
