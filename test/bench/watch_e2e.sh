#!/usr/bin/env bash
# End to end at scale: the standalone fake API server creates CREATE pods
# through its admission chain with `placer serve --kubeconfig` as the mutating
# webhook, then reports how many were assigned and whether any node is
# overcommitted by the server's own count; placer's /metrics gauges tell
# whether every reservation was replaced by its pod.
#
#   BUILD=build-rel test/bench/watch_e2e.sh
set -euo pipefail
BUILD=${BUILD:-build-rel}
# The pending mix is one sixth each: plain, zone-preferring with anti-affinity,
# highmem (16 GiB, requires the tainted highmem pool), sidecar + init, GPU
# training (1 GPU, 4 CPU, 32 GiB), best effort preferring arm64. The cluster is
# sized so that every one of them fits, since the claim is "all assigned":
# 10,000 pods bring ~1,670 GPU pods. A 4-GPU node already runs one bound GPU
# pod taking 21-85% of its CPU and memory, so it takes ~2 more on average:
# 18% of 5,000 nodes (900) are GPU nodes; 12% (600) are highmem nodes.
NODES=${NODES:-5000}
PODS_PER_NODE=${PODS_PER_NODE:-2}
GPU_FRACTION=${GPU_FRACTION:-0.18}
HIGHMEM_FRACTION=${HIGHMEM_FRACTION:-0.12}
CREATE=${CREATE:-10000}
RATE=${RATE:-500}
PORT=${PORT:-18444}
DIR=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; if [ -n "${KEEP:-}" ]; then echo "kept $DIR"; else rm -rf "$DIR"; fi; }
trap cleanup EXIT

# Certificates first (the webhook's CA must exist when the fake starts).
"$BUILD/test/fake-apiserver" --nodes 1 --pods-per-node 0 --cert-dir "$DIR" --kubeconfig-out "$DIR/kc0" >"$DIR/f0" 2>&1 &
p=$!; until grep -q ready "$DIR/f0" 2>/dev/null; do sleep 0.2; done; kill $p; wait $p 2>/dev/null || true

"$BUILD/test/fake-apiserver" --nodes "$NODES" --pods-per-node "$PODS_PER_NODE" --cert-dir "$DIR" \
  --gpu-node-fraction "$GPU_FRACTION" --highmem-node-fraction "$HIGHMEM_FRACTION" \
  --kubeconfig-out "$DIR/kubeconfig" --webhook-url "https://127.0.0.1:$PORT/mutate" --webhook-ca "$DIR/ca.crt" \
  --create "$CREATE" --create-rate "$RATE" --create-after-watches 2 --exit-after-create >"$DIR/fake.out" 2>"$DIR/fake.err" &
FAKE=$!; PIDS+=($FAKE)
until grep -q '"event":"ready"' "$DIR/fake.out" 2>/dev/null; do kill -0 $FAKE || { cat "$DIR/fake.err"; exit 1; }; sleep 0.5; done
"$BUILD/placer" serve --kubeconfig "$DIR/kubeconfig" --listen "127.0.0.1:$PORT" \
  --tls-cert-file "$DIR/tls.crt" --tls-key-file "$DIR/tls.key" 2>"$DIR/placer.err" &
PIDS+=($!)
wait $FAKE || true
grep '"event":"created"' "$DIR/fake.out"
sleep 2
curl -s --cacert "$DIR/ca.crt" "https://127.0.0.1:$PORT/metrics" |
  grep -E '^placer_(reservations_active|reservations_expired_total|pods_in_view|nodes_in_view|admissions_total)'
