#!/usr/bin/env bash
# `placer explain --kubeconfig` on a large cluster served by the standalone
# fake API server, against the decision `placer serve` makes for the same pod:
#  - serve lists the cluster and answers a dry-run AdmissionReview for each
#    pod below (a dry run decides without reserving, so the view stays as
#    listed);
#  - explain lists the same cluster and decides for the same pod, from a file
#    (--pod-file) and, for a pending pod created in the cluster, by name (--pod);
#  - the script compares the selected node and its total score, and reports
#    explain's wall time (list + decision + output).
#
#   test/bench/explain_live.sh                       # 5,000 nodes, 150,000 pods
#   NODES=500 PODS_PER_NODE=30 test/bench/explain_live.sh
#
# BUILD: a build directory with the `placer` and `fake-apiserver` targets.
set -euo pipefail
BUILD=${BUILD:-build}
NODES=${NODES:-5000}
PODS_PER_NODE=${PODS_PER_NODE:-30}
PORT=${PORT:-18444}
. "$(dirname "$0")/fake_lib.sh"

start_fake "$BUILD/test/fake-apiserver" --nodes "$NODES" --pods-per-node "$PODS_PER_NODE"
URL=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$DIR/fake.out")
echo "fake: $NODES nodes, $((NODES * PODS_PER_NODE)) pods at $URL"

start_placer "$BUILD/placer" "$PORT"
echo "serve: synced"

# Three pod shapes: a small web pod, a large batch pod, a pod tolerating the
# highmem pool's taint and preferring it.
pod() {  # name cpu memory extra-spec-json
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"explain-bench","labels":{"app":"%s"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27","resources":{"requests":{"cpu":"%s","memory":"%s"}}}]%s}}' \
    "$1" "$1" "$2" "$3" "$4"
}
pod web 250m 256Mi "" >"$DIR/web.json"
pod batch 6 24Gi "" >"$DIR/batch.json"
pod highmem 2 16Gi ',"tolerations":[{"key":"dedicated","operator":"Equal","value":"highmem","effect":"NoSchedule"}],"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":50,"preference":{"matchExpressions":[{"key":"pool","operator":"In","values":["highmem"]}]}}]}}' >"$DIR/highmem.json"

serve_decision() {  # pod file -> "node score"
  python3 - "$1" <<'PY' >"$DIR/review.json"
import json, sys
pod = json.load(open(sys.argv[1]))
print(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
  "uid": "bench-" + pod["metadata"]["name"], "kind": {"group": "", "version": "v1", "kind": "Pod"},
  "resource": {"group": "", "version": "v1", "resource": "pods"}, "namespace": pod["metadata"]["namespace"],
  "name": pod["metadata"]["name"], "operation": "CREATE", "object": pod, "dryRun": True}}))
PY
  curl -s --cacert "$DIR/ca.crt" -H 'Content-Type: application/json' --data-binary @"$DIR/review.json" \
    "https://127.0.0.1:$PORT/mutate" | python3 -c '
import base64, json, sys
r = json.load(sys.stdin)["response"]
patch = {p["path"]: p["value"] for p in json.loads(base64.b64decode(r["patch"]))} if "patch" in r else {}
node = patch.get("/spec/nodeName")
ann = patch.get("/metadata/annotations", {})
print(node, ann.get("placer.io/score"))'
}
explain_decision() {  # explain output -> "node score"
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["selected"]
print(s, d["scores"][s]["total"] if s else None)' "$1"
}

check() {  # label, serve's "node score", explain args...
  local label=$1 expected=$2; shift 2
  local t0 t1
  local load; load=$(cut -d' ' -f1-3 /proc/loadavg)
  /usr/bin/time -f '%e %U %S' -o "$DIR/time" \
    "$BUILD/placer" explain --kubeconfig "$DIR/kubeconfig" "$@" >"$DIR/explain.json" 2>"$DIR/explain.err" ||
    { cat "$DIR/explain.err"; exit 1; }
  local got; got=$(explain_decision "$DIR/explain.json")
  local verdict=same; [ "$got" = "$expected" ] || verdict=DIFFERENT
  read -r wall user sys <"$DIR/time"
  printf '%-30s serve: %-22s explain: %-22s %s  explain wall %.2f s, CPU %.2f s (load before %s)\n' "$label" \
    "$expected" "$got" "$verdict" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$load"
  grep -c '"initial sync"\|initial sync ' "$DIR/explain.err" >/dev/null && grep 'initial sync' "$DIR/explain.err" | tail -2 | sed 's/^/    /'
}

for p in web batch highmem; do
  check "$p (--pod-file)" "$(serve_decision "$DIR/$p.json")" --pod-file "$DIR/$p.json"
done

# A pending pod created in the cluster (no webhook on the fake: it stays
# unassigned), explained by name.
TOKEN=test-token
curl -s --cacert "$DIR/ca.crt" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  --data-binary @"$DIR/web.json" "$URL/api/v1/namespaces/explain-bench/pods" >/dev/null
check "web (--pod explain-bench/web)" "$(serve_decision "$DIR/web.json")" --pod explain-bench/web
