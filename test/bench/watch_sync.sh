#!/usr/bin/env bash
# Initial sync of `placer serve --kubeconfig` from the standalone fake API
# server: time from start to /readyz 200 (both lists applied), RSS of the whole
# placer process after sync, then watch throughput while pods are created at
# a given rate (placer_watch_events{resource="pods"} against the pods created).
#
#   test/bench/watch_sync.sh                      # 5,000 nodes, 150,000 pods
#   NODES=500 PODS_PER_NODE=30 test/bench/watch_sync.sh
#
# BUILD: a build directory with the `placer` and `fake-apiserver` targets
# (RelWithDebInfo for meaningful figures).
set -euo pipefail
BUILD=${BUILD:-build-rel}
NODES=${NODES:-5000}
PODS_PER_NODE=${PODS_PER_NODE:-30}
EVENTS=${EVENTS:-20000}
RATE=${RATE:-2000}
PORT=${PORT:-18443}
# The watches placer opens once its lists are done: nodes, pods, failed pods,
# namespaces, Services, ReplicationControllers, ReplicaSets, StatefulSets. The
# fake creates nothing before all of them are open, so that the creates do not
# run during (and inside the figures of) the initial sync.
WATCHES=${WATCHES:-8}
. "$(dirname "$0")/fake_lib.sh"

# The fake starts creating pods (RATE/s, no webhook: each is one ADDED event
# on placer's pod watch) once placer's WATCHES watches are open.
start_fake "$BUILD/test/fake-apiserver" --nodes "$NODES" --pods-per-node "$PODS_PER_NODE" \
  --create "$EVENTS" --create-rate "$RATE" --create-concurrency 16 --create-after-watches "$WATCHES"
echo "fake: $(grep '"event":"ready"' "$DIR/fake.out")"

fake_cpu0=$(cpu_of "$FAKE_PID")
echo "load average before sync: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(now)
start_placer "$BUILD/placer" "$PORT"
synced=$(now)
fake_cpu1=$(cpu_of "$FAKE_PID")
sleep 1  # let the allocator settle before reading RSS
rss=$(awk '/VmRSS/ {print $2}' "/proc/$PLACER_PID/status")
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$PLACER_PID/status")
cpu=$(cpu_of "$PLACER_PID")
printf 'sync: %.2f s to ready; placer RSS %d MB after sync (peak %d MB); placer CPU %.1f s; fake CPU %.1f s; load %s\n' \
  "$(echo "$synced - $start" | bc)" $((rss / 1024)) $((hwm / 1024)) "$cpu" "$(echo "$fake_cpu1 - $fake_cpu0" | bc)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"

metric() {
  curl -s --cacert "$DIR/ca.crt" "https://127.0.0.1:$PORT/metrics" |
    awk -v m="$1" '$1 == m {print $2}'
}
# The server's own count: every create (no webhook here) bumps its one
# resourceVersion counter by exactly one, so created = rv - rv at ready.
URL=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$DIR/fake.out")
RV0=$(sed -n 's/.*"resourceVersion":\([0-9]*\).*/\1/p' "$DIR/fake.out")
server_created() {
  curl -s --cacert "$DIR/ca.crt" -H "Authorization: Bearer test-token" "$URL/api/v1/nodes?limit=1" |
    grep -o '"resourceVersion":"[0-9]*"' | head -1 | tr -dc '0-9' | awk -v r0="$RV0" '{print $1 - r0}'
}
# Lag = pods the server has created minus ADDED events placer has applied,
# sampled every second from the moment placer is ready (the fake starts
# creating as soon as placer's two watches are open).
t0=$(now)
max_lag=0
while true; do
  created=$(server_created); created=${created:-0}
  events=$(metric 'placer_watch_events{resource="pods"}'); events=${events%.*}; events=${events:-0}
  t=$(now)
  lag=$((created - events))
  [ "$lag" -gt "$max_lag" ] && max_lag=$lag
  printf 'watch: t=%5.1f s server created %7d, placer applied %7d, lag %6d\n' "$(echo "$t - $t0" | bc)" "$created" "$events" "$lag"
  [ "$events" -ge "$EVENTS" ] && break
  [ "$(echo "$t - $t0 > $EVENTS / $RATE + 60" | bc)" = 1 ] && { echo "watch: gave up"; break; }
  sleep 1
done
echo "watch: largest lag sampled $max_lag events"
grep '"event":"created"' "$DIR/fake.out" | cut -c1-400 || true
