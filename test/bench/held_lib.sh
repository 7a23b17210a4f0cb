# Sourced by the benchmarks of issue 15's held connections (connections.sh,
# held_overhead.sh): a temporary directory removed on exit with the server and
# the holder, and the steps that start the server and hold the connections.
# Expects LOADGEN, SERVER_LOADGEN, NODES and SLOWLORIS_INTERVAL; LATENCY_LOG
# is optional.

LATENCY_LOG=${LATENCY_LOG:-}
DIR=$(mktemp -d)
SERVER_PID=""; HOLDER_PID=""
cleanup() {
  [ -n "$HOLDER_PID" ] && kill "$HOLDER_PID" 2>/dev/null || true
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

# start_server: the webhook's server (SERVER_LOADGEN --serve: NODES nodes,
# default profile, 8 workers), once it has written its port.
start_server() {
  "$SERVER_LOADGEN" --serve "$DIR" --nodes "$NODES" --workers 8 >"$DIR/server.out" 2>&1 &
  SERVER_PID=$!
  until [ -s "$DIR/port" ]; do
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$DIR/server.out"; exit 1; }
    sleep 0.2
  done
}

log() {  # the --latency-log option for run $1, when LATENCY_LOG is set
  [ -n "$LATENCY_LOG" ] && echo "--latency-log $LATENCY_LOG.$1"
  true
}
# hold [RUN]: opens 1,000 idle keep-alive TLS connections and 200 slowloris
# connections (plus 50 that never start TLS) and holds them until release;
# RUN names the holder's pass log under LATENCY_LOG.
hold() {
  # Emptied here, not by the background job's redirection: the wait below
  # must not see the previous holder's lines (it did, under load, and the
  # script then stopped at the grep after it).
  : >"$DIR/holder.out"
  stdbuf -oL "$LOADGEN" --target "$DIR" --nodes "$NODES" --route hold --seconds 3600 --connections 1000 \
    --slowloris 200 --slowloris-interval "$SLOWLORIS_INTERVAL" --server-pid "$SERVER_PID" \
    $(log "${1:-hold}.passes") >"$DIR/holder.out" 2>&1 &
  HOLDER_PID=$!
  until grep -q 'server RSS with them' "$DIR/holder.out"; do
    if ! kill -0 "$HOLDER_PID" 2>/dev/null; then
      local rc=0
      wait "$HOLDER_PID" || rc=$?
      echo "(the holder exited with status $rc:)"
      cat "$DIR/holder.out"
      exit 1
    fi
    sleep 0.5
  done
  grep -E 'RSS|open' "$DIR/holder.out"
}
release() {
  kill "$HOLDER_PID" 2>/dev/null || true
  wait "$HOLDER_PID" 2>/dev/null || true
  HOLDER_PID=""
}
