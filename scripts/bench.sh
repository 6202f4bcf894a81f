#!/usr/bin/env bash
# Runs the simulation-core benchmarks and writes their table into README.md between
# <!-- bench:begin --> and <!-- bench:end -->. Pass `quick` to skip the 5,000-node run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# Wall times swing with whatever else runs on the machine, so the load average is recorded too.
load() { cut -d' ' -f1 /proc/loadavg; }
cargo bench --quiet --bench scale --no-run
before="$(load)"
table="$(cargo bench --quiet --bench scale -- "$@")"
after="$(load)"
echo "$table"
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(rustc --version | cut -d' ' -f1-2), measured $(date -u +%Y-%m-%d), load average $before before and $after after"
python3 - "$table" "$machine" <<'PY'
import re, sys
table, machine = sys.argv[1], sys.argv[2]
path = "README.md"
text = open(path).read()
block = f"<!-- bench:begin -->\n{table}\n\nMachine: {machine}.\n<!-- bench:end -->"
text = re.sub(r"<!-- bench:begin -->.*?<!-- bench:end -->", lambda _: block, text, flags=re.S)
open(path, "w").write(text)
PY
