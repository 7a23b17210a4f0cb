#!/usr/bin/env bash
# Memory and load time of a snapshot file, as a user meets them:
#  - `placer serve --cluster-file`: time from start to /readyz 200, then VmRSS
#    and VmHWM (peak) from /proc/PID/status;
#  - `placer explain --snapshot`: maximum RSS and wall time (/usr/bin/time -v).
# The snapshot is a generated cluster (test/support/cluster_generator.h)
# written by `fake-apiserver --write-snapshot`.
#
#   test/bench/snapshot_memory.sh                          # 5,000 nodes, 150,000 pods
#   PLACER=/tmp/placer-old test/bench/snapshot_memory.sh   # another placer binary (A/B)
#   SNAPSHOT=/tmp/s.json test/bench/snapshot_memory.sh     # keep the file (written when missing)
#   NODES=500 PODS_PER_NODE=30 test/bench/snapshot_memory.sh
#
# BUILD: a build directory with the `placer` and `fake-apiserver` targets.
set -euo pipefail
BUILD=${BUILD:-build}
PLACER=${PLACER:-$BUILD/placer}
NODES=${NODES:-5000}
PODS_PER_NODE=${PODS_PER_NODE:-30}
PORT=${PORT:-18445}
DIR=$(mktemp -d)
SNAPSHOT=${SNAPSHOT:-$DIR/snapshot.json}
PLACER_PID=""
cleanup() {
  [ -n "$PLACER_PID" ] && kill "$PLACER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT
now() { date +%s.%N; }

if [ ! -s "$SNAPSHOT" ]; then
  "$BUILD/test/fake-apiserver" --nodes "$NODES" --pods-per-node "$PODS_PER_NODE" --write-snapshot "$SNAPSHOT"
fi
echo "snapshot: $SNAPSHOT, $(($(stat -c %s "$SNAPSHOT") / 1000000)) MB"
echo "placer: $PLACER"

"$PLACER" certs generate --service placer --namespace placer --out "$DIR/pki" --ip 127.0.0.1 >/dev/null 2>&1

START=$(now)
"$PLACER" serve --cluster-file "$SNAPSHOT" --listen "127.0.0.1:$PORT" \
  --tls-cert-file "$DIR/pki/tls.crt" --tls-key-file "$DIR/pki/tls.key" 2>"$DIR/serve.err" &
PLACER_PID=$!
until [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$DIR/pki/ca.crt" "https://127.0.0.1:$PORT/readyz")" = 200 ]; do
  kill -0 "$PLACER_PID" 2>/dev/null || { tail -5 "$DIR/serve.err"; exit 1; }
  sleep 0.1
done
READY=$(now)
RSS=$(awk '/^VmRSS/ {print $2}' "/proc/$PLACER_PID/status")
HWM=$(awk '/^VmHWM/ {print $2}' "/proc/$PLACER_PID/status")
printf 'serve --cluster-file: ready after %.2f s, VmRSS %d MB, VmHWM %d MB\n' \
  "$(echo "$READY - $START" | bc)" $((RSS / 1024)) $((HWM / 1024))
grep -o '"msg":"cluster view loaded".*' "$DIR/serve.err" || true
kill "$PLACER_PID"
wait "$PLACER_PID" 2>/dev/null || true
PLACER_PID=""

/usr/bin/time -v "$PLACER" explain --snapshot "$SNAPSHOT" >"$DIR/explain.out" 2>"$DIR/explain.err" ||
  { tail -5 "$DIR/explain.err"; exit 1; }
MAXRSS=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$DIR/explain.err")
WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$DIR/explain.err")
CPU_USER=$(awk -F': ' '/User time/ {print $2}' "$DIR/explain.err")
echo "explain --snapshot: wall $WALL, user CPU ${CPU_USER} s, max RSS $((MAXRSS / 1024)) MB," \
  "selected $(grep -o '"selected": *"[^"]*"' "$DIR/explain.out" || echo null)"
