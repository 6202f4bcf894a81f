#!/usr/bin/env bash
# Runs the simulation-core benchmarks and writes their table into README.md between
# <!-- bench:begin --> and <!-- bench:end -->. Pass `quick` to skip the 5,000-node run.
# Then the operator benchmark (lesson 11's operator through python3: teaching scale with it
# running, a handler call's cost), written between <!-- operator-bench:begin --> and
# <!-- operator-bench:end -->.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# Wall times swing with whatever else runs on the machine, so the load average is recorded too.
load() { cut -d' ' -f1 /proc/loadavg; }
cargo bench --quiet --bench scale --bench operator --no-run
before="$(load)"
table="$(cargo bench --quiet --bench scale -- "$@")"
operator_table="$(cargo bench --quiet --bench operator 2>/dev/null)"
after="$(load)"
echo "$table"
echo "$operator_table"
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(rustc --version | cut -d' ' -f1-2), measured $(date -u +%Y-%m-%d), load average $before before and $after after"
python3 - "$table" "$machine" "$operator_table" <<'PY'
import re, sys
table, machine, operator_table = sys.argv[1], sys.argv[2], sys.argv[3]
path = "README.md"
text = open(path).read()
block = f"<!-- bench:begin -->\n{table}\n\nMachine: {machine}.\n<!-- bench:end -->"
text = re.sub(r"<!-- bench:begin -->.*?<!-- bench:end -->", lambda _: block, text, flags=re.S)
block = f"<!-- operator-bench:begin -->\n{operator_table}\n\nMachine: {machine}.\n<!-- operator-bench:end -->"
text = re.sub(r"<!-- operator-bench:begin -->.*?<!-- operator-bench:end -->", lambda _: block, text, flags=re.S)
open(path, "w").write(text)
PY
