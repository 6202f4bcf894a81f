#!/usr/bin/env bash
# Builds the page and serves it at http://127.0.0.1:8080 (Trunk.toml [serve]), rebuilding on
# every change. Does all set-up itself (scripts/setup.sh). Extra arguments go to `trunk serve`.
#
# Release mode, on purpose: it is the build that the tests check, that the size table measures
# and that ships, and the simulation runs many times faster than in a debug build. The price is
# a slower rebuild after an edit (optimised, link-time optimised, then wasm-opt, then the
# pre-render of index.html by the native page binary: Trunk.toml's post_build hook).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"

echo "serve: building, then serving at http://127.0.0.1:8080/ (Ctrl-C stops)"
exec trunk serve --release "$@"
