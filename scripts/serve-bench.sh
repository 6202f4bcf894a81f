#!/usr/bin/env bash
# Times `kubeloop serve` as the README's "Use your own kubectl" benchmarks report it:
#  1. GET pods as a Table (what `kubectl get pods` asks for) with 3,000 pods: median and 95th
#     percentile of 200 requests, on a paused server settled on scenarios/bench/pods-3000.yaml;
#  2. `kubectl apply -f` of a Deployment of 3 to `kubectl rollout status` returning, at speed 1.
# Needs a release build (cargo build --release --bin kubeloop), curl and kubectl. Prints results;
# not a test (wall times depend on the machine).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/target/release/kubeloop"
KUBECTL="${KUBECTL:-kubectl}"
OUT="$(mktemp -d)"
SERVER=""
trap '[[ -n "$SERVER" ]] && kill "$SERVER" 2>/dev/null; rm -rf "$OUT"' EXIT

start() { # start SCENARIO SPEED: starts a server, sets URL
  "$BIN" serve "$1" --address 127.0.0.1:0 --speed "$2" >"$OUT/serve.out" 2>/dev/null &
  SERVER=$!
  for _ in $(seq 100); do
    URL="$(grep -o 'http://[0-9.:]*' "$OUT/serve.out" | head -n1 || true)"
    [[ -n "$URL" ]] && return
    sleep 0.1
  done
  echo "serve-bench: the server did not start" >&2
  exit 1
}

start "$ROOT/scenarios/bench/pods-3000.yaml" 0
curl -s --data 'settle 10m' "$URL/kubeloop/sim" >/dev/null
pods="$(curl -s -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$URL/api/v1/pods" | grep -o '"cells"' | wc -l)"
for _ in $(seq 200); do
  curl -s -o /dev/null -w '%{time_total}\n' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json' \
    "$URL/api/v1/namespaces/default/pods?limit=500"
done >"$OUT/times"
# Without limit: every pod in one Table.
for _ in $(seq 200); do
  curl -s -o /dev/null -w '%{time_total}\n' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json' \
    "$URL/api/v1/namespaces/default/pods"
done >"$OUT/times-all"
stats() { sort -n "$1" | awk '{a[NR]=$1} END {printf "median %.1f ms, p95 %.1f ms", a[int((NR+1)/2)]*1000, a[int(NR*0.95)]*1000}'; }
echo "GET pods as a Table, $pods pods in the cluster: limit=500 (kubectl's page): $(stats "$OUT/times"); all 3,000 in one Table: $(stats "$OUT/times-all")"
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true

start default 1
cat >"$OUT/d.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: bench}
spec:
  replicas: 3
  selector: {matchLabels: {app: bench}}
  template:
    metadata: {labels: {app: bench}}
    spec:
      containers: [{name: c, image: nginx:1.14.2}]
YAML
begin=$(date +%s.%N)
KUBECONFIG=/dev/null "$KUBECTL" -s "$URL" apply -f "$OUT/d.yaml" >/dev/null
KUBECONFIG=/dev/null "$KUBECTL" -s "$URL" rollout status deployment/bench --timeout=120s >/dev/null
end=$(date +%s.%N)
echo "kubectl apply -f to rollout status returning, speed 1: $(awk -v a="$begin" -v b="$end" 'BEGIN {printf "%.2f s", b-a}')"
