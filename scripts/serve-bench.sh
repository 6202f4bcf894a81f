#!/usr/bin/env bash
# Times `kubeloop serve` as the README's "Use your own kubectl" benchmarks report it:
#  1. GET pods as a Table (what `kubectl get pods` asks for) with 3,000 pods: median and 95th
#     percentile of 200 requests, on a paused server settled on scenarios/bench/pods-3000.yaml;
#  2. `kubectl apply -f` of a Deployment of 3 to `kubectl rollout status` returning, at speed 1;
#  3. 1,000 nodes / 30,000 pods (300 Deployments of 100) converging at full speed, from the clock
#     starting to every replica ready, with no watcher and with WATCHERS (100) HTTP watches of
#     every pod in all namespaces open (curl, reading and discarding), and how much slower.
# `serve-bench.sh watchers` runs only the third.
# Needs a release build (cargo build --release --bin kubeloop), curl and kubectl. Prints results;
# not a test (wall times depend on the machine).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/target/release/kubeloop"
KUBECTL="${KUBECTL:-kubectl}"
OUT="$(mktemp -d)"
SERVER=""
CURLS=()
WATCHERS="${WATCHERS:-100}"
trap '[[ -n "$SERVER" ]] && kill "$SERVER" 2>/dev/null; for c in "${CURLS[@]}"; do kill "$c" 2>/dev/null; done; rm -rf "$OUT"' EXIT

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

stop() {
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=""
}

# The 30,000 replicas ready, summed over the Deployments' status.
ready() {
  curl -s "$URL/apis/apps/v1/deployments" | grep -o '"readyReplicas":[0-9]*' | awk -F: '{s += $2} END {print s + 0}'
}

# converge N: seconds from the clock starting (as fast as the simulation runs) to every replica
# ready, with N watches of every pod open from the paused start's revision; into SECONDS_TAKEN,
# PEAK (the server's peak resident memory) and CPU (its CPU seconds, start-up included).
converge() {
  start "$OUT/pods-30000.yaml" 0
  local rv
  rv="$(curl -s "$URL/api/v1/namespaces/default/pods?limit=1" | grep -o '"resourceVersion":"[0-9]*"' | head -n1 | grep -o '[0-9][0-9]*')"
  CURLS=()
  for _ in $(seq "$1"); do
    curl -sN -o /dev/null "$URL/api/v1/pods?watch=1&resourceVersion=$rv" &
    CURLS+=($!)
  done
  sleep 2
  local begin end
  begin=$(date +%s.%N)
  curl -s --data 'speed 100000' "$URL/kubeloop/sim" >/dev/null
  until [[ "$(ready)" -ge 30000 ]]; do sleep 0.2; done
  end=$(date +%s.%N)
  PEAK="$(awk '/VmHWM/ {printf "%.1f GB", $2 / 1048576}' "/proc/$SERVER/status")"
  # The server's own CPU time (user + system), which other work on the machine moves less.
  CPU="$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$SERVER/stat")"
  for c in "${CURLS[@]}"; do kill "$c" 2>/dev/null; done
  CURLS=()
  stop
  SECONDS_TAKEN="$(awk -v a="$begin" -v b="$end" 'BEGIN {printf "%.2f", b - a}')"
}

watchers_bench() {
  {
    echo "name: pods-30000"
    echo "description: 1,000 nodes and 300 Deployments of 100 pods, for timing a convergence under watches."
    echo "seed: 42"
    echo "nodes: {count: 1000, zones: [zone-0, zone-1, zone-2]}"
    echo "manifests: |"
    for n in $(seq 0 299); do
      [[ $n -gt 0 ]] && echo "  ---"
      echo "  apiVersion: apps/v1"
      echo "  kind: Deployment"
      echo "  metadata: {name: app-$n}"
      echo "  spec:"
      echo "    replicas: 100"
      echo "    selector: {matchLabels: {app: app-$n}}"
      echo "    template:"
      echo "      metadata: {labels: {app: app-$n}}"
      echo "      spec: {containers: [{name: nginx, image: 'nginx:1.14.2', resources: {requests: {cpu: 10m, memory: 16Mi}}}]}"
    done
  } >"$OUT/pods-30000.yaml"
  converge 0
  local alone="$SECONDS_TAKEN" alone_rss="$PEAK" alone_cpu="$CPU"
  converge "$WATCHERS"
  local watched="$SECONDS_TAKEN" watched_rss="$PEAK" watched_cpu="$CPU"
  echo "1,000 nodes / 30,000 pods converging at full speed: $alone s with no watcher (server CPU $alone_cpu s, peak $alone_rss), $watched s with $WATCHERS watchers of every pod (server CPU $watched_cpu s, peak $watched_rss): $(awk -v a="$alone" -v b="$watched" 'BEGIN {printf "%+.0f %%", (b - a) / a * 100}')"
}

if [[ "${1:-}" == "watchers" ]]; then
  watchers_bench
  exit 0
fi

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
stop

watchers_bench
