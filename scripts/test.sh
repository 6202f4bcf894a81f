#!/usr/bin/env bash
# Runs every kubeloop check, in order, stopping at the first failure:
#   set-up, rustfmt, clippy (native, wasm32 and the native build tools), native tests, the
#   build tools' tests (pre-renderer, wasm splitter), the release page build (which pre-renders
#   index.html and splits the wasm), the size
#   ceiling, wasm-bindgen-test in headless Chromium, Playwright end-to-end tests.
# Does all set-up itself (scripts/setup.sh) on a fresh machine. CI runs exactly this.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOGS="$ROOT/target/test-logs"
STARTED=$SECONDS

# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log

# step NAME COMMAND...: runs COMMAND, its output shown and kept in $LOGS/NAME.log.
step() {
  local name="$1" began=$SECONDS
  shift
  printf '\n==> %s: %s\n' "$name" "$*"
  if ! "$@" 2>&1 | tee "$LOGS/$name.log"; then
    printf '\ntest.sh: FAILED at step "%s" (%ss): %s\n' "$name" "$((SECONDS - began))" "$*" >&2
    printf 'test.sh: full output in %s\n' "$LOGS/$name.log" >&2
    exit 1
  fi
  printf -- '--- %s ok (%ss)\n' "$name" "$((SECONDS - began))"
}

step fmt cargo fmt --all --check
step clippy-native cargo clippy --all-targets -- -D warnings
# The page and the browser tests on wasm32. The native CLI binary is left out: it is for a terminal.
step clippy-wasm cargo clippy --target wasm32-unknown-unknown --features web \
  --lib --bin kubeloop-web --test wasm -- -D warnings
# The page binary built natively with `ssr` is the build's pre-renderer, and kubeloop-split its
# wasm splitter (Trunk.toml's hook runs both, with these features).
step clippy-ssr cargo clippy --features ssr,split --bin kubeloop-web --bin kubeloop-split --tests -- -D warnings
step test-native cargo test
step test-prerender cargo test --features ssr,split --bin kubeloop-web --bin kubeloop-split
step build-page trunk build --release
step size node scripts/size.mjs
# The benchmark scripts are not run here (they take minutes and want a quiet machine), but they
# must at least parse: a quoting slip once left bench-page.mjs unrunnable for several rounds.
step scripts-parse bash -c 'for f in scripts/*.mjs; do node --check "$f" || exit 1; done'
step test-wasm cargo test --target wasm32-unknown-unknown --test wasm
step test-e2e node --test tests/e2e/

# Counts per runner, from the kept logs.
cargo_counts() { # LOG -> "passed failed"
  awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
       END { print p + 0, f + 0 }' "$1"
}
node_counts() {
  awk '/^# pass / { p = $3 } /^# fail / { f = $3 } END { print p + 0, f + 0 }' "$1"
}
read -r native_pass native_fail < <(cargo_counts "$LOGS/test-native.log")
read -r pre_pass pre_fail < <(cargo_counts "$LOGS/test-prerender.log")
read -r wasm_pass wasm_fail < <(cargo_counts "$LOGS/test-wasm.log")
read -r e2e_pass e2e_fail < <(node_counts "$LOGS/test-e2e.log")

printf '\n==> summary (%ss in all)\n' "$((SECONDS - STARTED))"
printf '  native cargo test:            %s passed, %s failed\n' "$native_pass" "$native_fail"
printf '  build tools (ssr, split):     %s passed, %s failed\n' "$pre_pass" "$pre_fail"
printf '  wasm-bindgen-test (Chromium): %s passed, %s failed\n' "$wasm_pass" "$wasm_fail"
printf '  Playwright e2e (node --test): %s passed, %s failed\n' "$e2e_pass" "$e2e_fail"
for count in "$native_pass" "$pre_pass" "$wasm_pass" "$e2e_pass"; do
  if ((count == 0)); then
    echo "test.sh: FAILED: a runner ran no test" >&2
    exit 1
  fi
done
echo "summary: $((native_pass + pre_pass + wasm_pass + e2e_pass)) passed, $((native_fail + pre_fail + wasm_fail + e2e_fail)) failed"
