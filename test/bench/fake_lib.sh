# Sourced by the benchmarks that run the standalone fake API server and
# `placer serve` against it (watch_sync.sh, sync_ab.sh, explain_live.sh): a
# temporary directory removed on exit with both processes, and the steps that
# start each and wait until it is ready.

DIR=$(mktemp -d)
FAKE_PID=""; PLACER_PID=""
cleanup() {
  [ -n "$PLACER_PID" ] && kill "$PLACER_PID" 2>/dev/null || true
  [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT
now() { date +%s.%N; }
cpu_of() { awk '{print ($14+$15)/100}' "/proc/$1/stat"; }  # user + system seconds of a process

# start_fake BINARY [OPTION...]: the fake with its certificates and kubeconfig
# in $DIR (output in $DIR/fake.out), once it says it is ready.
start_fake() {
  local binary=$1; shift
  "$binary" --cert-dir "$DIR" --kubeconfig-out "$DIR/kubeconfig" "$@" >"$DIR/fake.out" 2>"$DIR/fake.err" &
  FAKE_PID=$!
  until grep -q '"event":"ready"' "$DIR/fake.out" 2>/dev/null; do
    kill -0 "$FAKE_PID" 2>/dev/null || { cat "$DIR/fake.err"; exit 1; }
    sleep 0.5
  done
}

# start_placer BINARY PORT: `placer serve` on the fake's kubeconfig and
# certificates, once its /readyz answers 200 (its lists are applied), polled
# by one process over one connection (wait_ready.py says why).
start_placer() {
  "$1" serve --kubeconfig "$DIR/kubeconfig" --listen "127.0.0.1:$2" \
    --tls-cert-file "$DIR/tls.crt" --tls-key-file "$DIR/tls.key" 2>"$DIR/placer.err" &
  PLACER_PID=$!
  python3 "$(dirname "${BASH_SOURCE[0]}")/wait_ready.py" "$2" "$DIR/ca.crt" "$PLACER_PID" || { tail -5 "$DIR/placer.err"; exit 1; }
}
