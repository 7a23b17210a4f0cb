#!/usr/bin/env bash
# End to end at scale: the standalone fake API server creates CREATE pods
# through its admission chain with `placer serve --kubeconfig` as the mutating
# webhook, then reports how many were assigned and whether any node is
# overcommitted by the server's own count; placer's /metrics gauges tell
# whether every reservation was replaced by its pod.
#
# Then the Events (issue 19): once placer has sent or dropped an Event for
# every pod it assigned (bounded wait), the events.k8s.io/v1 Events and the
# pods are listed from the fake API server, and every pod carrying
# placer.io/assigned-node must have exactly one Scheduled Event with reason
# Scheduled, action Binding, note "Successfully assigned <ns>/<name> to
# <node>", reportingController placer.io/placer, reportingInstance the placer
# pod's name (POD_NAME) and type Normal; placer_kubelet_rejections_total must
# be 0. The script exits 1 when a check fails.
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
  --create "$CREATE" --create-rate "$RATE" --create-after-watches 8 >"$DIR/fake.out" 2>"$DIR/fake.err" &
FAKE=$!; PIDS+=($FAKE)
until grep -q '"event":"ready"' "$DIR/fake.out" 2>/dev/null; do kill -0 $FAKE || { cat "$DIR/fake.err"; exit 1; }; sleep 0.5; done
# The fake creates once placer's eight list-watches are open (nodes, pods,
# Failed pods, namespaces, services, RCs, ReplicaSets, StatefulSets: each
# opens after its list, so its view is synced); one replica, so no election
# (before it leads, a replica answers without deciding).
INSTANCE=placer-e2e-0
POD_NAME=$INSTANCE "$BUILD/placer" serve --kubeconfig "$DIR/kubeconfig" --listen "127.0.0.1:$PORT" --leader-elect false \
  --tls-cert-file "$DIR/tls.crt" --tls-key-file "$DIR/tls.key" 2>"$DIR/placer.err" &
PIDS+=($!)
until grep -q '"event":"created"' "$DIR/fake.out" 2>/dev/null; do kill -0 $FAKE || { cat "$DIR/fake.err"; exit 1; }; sleep 1; done
grep '"event":"created"' "$DIR/fake.out"
metrics() { curl -s --cacert "$DIR/ca.crt" "https://127.0.0.1:$PORT/metrics"; }
# The sum of a metric's series (0 when absent).
total() { metrics | awk -v m="$1" '$1 == m || index($1, m "{") == 1 { s += $2 } END { printf "%d", s }'; }
ASSIGNED=$(grep '"event":"created"' "$DIR/fake.out" | jq .assignedByWebhook)
# Every assigned pod reaches the watch, and its Event is sent (or dropped,
# which the check below counts as a failure): at most 300 s.
for _ in $(seq 300); do
  [ $(( $(total placer_events_sent_total) + $(total placer_events_dropped_total) )) -ge "$ASSIGNED" ] && break
  sleep 1
done
metrics | grep -E '^placer_(reservations_active|reservations_expired_total|pods_in_view|nodes_in_view|admissions_total|http_requests_shed_total|events_sent_total|events_dropped_total|kubelet_rejections_total)'

# The Events and pods as a client lists them from the fake API server.
URL=$(grep '"event":"ready"' "$DIR/fake.out" | jq -r .url)
api() { curl -sf --cacert "$DIR/ca.crt" -H "Authorization: Bearer ${TOKEN:-test-token}" "$URL$1"; }
api /apis/events.k8s.io/v1/events >"$DIR/events.json"
api /api/v1/pods >"$DIR/pods.json"
jq -n --slurpfile events "$DIR/events.json" --slurpfile pods "$DIR/pods.json" --arg instance "$INSTANCE" \
  --argjson rejections "$(total placer_kubelet_rejections_total)" '
  ($events[0].items | map(select(.reason == "Scheduled"))) as $scheduled
  | ($scheduled | group_by(.regarding.uid) | map({key: .[0].regarding.uid, value: .}) | from_entries) as $byUid
  | [$pods[0].items[] | select(.metadata.annotations["placer.io/assigned-node"] != null)] as $assigned
  | def wrong($p; $e):
      ($e | length) != 1 or ($e[0] | .action != "Binding" or .type != "Normal"
        or .note != "Successfully assigned \($p.metadata.namespace)/\($p.metadata.name) to \($p.spec.nodeName)"
        or .reportingController != "placer.io/placer" or .reportingInstance != $instance
        or .regarding.kind != "Pod" or .regarding.name != $p.metadata.name
        or .regarding.namespace != $p.metadata.namespace);
    [$assigned[] | . as $p | select(wrong($p; $byUid[$p.metadata.uid] // [])) | "\(.metadata.namespace)/\(.metadata.name)"]
    as $bad
  | {event: "events", assignedPods: ($assigned | length), scheduledEvents: ($scheduled | length),
     notPlacedEvents: ($events[0].items | map(select(.reason == "NotPlaced")) | length),
     assignedWithoutExactlyOneGoodScheduledEvent: ($bad | length), firstBad: $bad[:5],
     kubeletRejections: $rejections,
     ok: (($bad | length) == 0 and ($assigned | length) > 0 and $rejections == 0)}' | tee "$DIR/check.json"
jq -e .ok "$DIR/check.json" >/dev/null
